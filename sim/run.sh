#!/bin/bash
# make simulate: build the simulator against the repository's decision code,
# validate the model, run auto mode in it at 16, 96 and 480 CPUs, and write
# the tables and plots under sim/results/.  Every figure is simulated.
# SIMULATE_STRICT=1 makes a missed prediction target or controller goal an
# error; by default they are reported in the summary line.
# SIMULATE_CONTROLLER_ONLY=1 runs the controller table alone (no validation,
# no costs); SIMULATE_CPUS ("96 480 16") and SIMULATE_SCENARIOS (every one;
# names as walscale_sim list gives them) choose its runs.
# SIM_BETA_FROM=FILE takes the hand-over slope beta from a report of
# bench/handover.sh (its "beta:" line, measured on 3 CPUs or more) instead
# of the assumed 0.5; a report without one (2 CPUs) changes nothing, and
# the tables say which beta they ran with.
set -euo pipefail
sim=$(cd "$(dirname "$0")" && pwd)
beta_note="the hand-over slope beta is the assumed 0.5 (sim/params.h)"
if [ -n "${SIM_POS_BETA:-}" ]; then
	beta_note="the hand-over slope beta is $SIM_POS_BETA (SIM_POS_BETA)"
fi
if [ -n "${SIM_BETA_FROM:-}" ]; then
	b=$(sed -n 's/^beta: \(-\?[0-9][0-9.]*\) .*/\1/p' "$SIM_BETA_FROM" | head -n 1)
	if [ -n "$b" ] && [ "${b#-}" != "$b" ]; then
		beta_note="$beta_note: $SIM_BETA_FROM measured a negative beta ($b), which the model's form cannot take"
	elif [ -n "$b" ]; then
		export SIM_POS_BETA=$b
		beta_note="the hand-over slope beta is $b, measured: $SIM_BETA_FROM ($(sed -n 's/^commit: //p' "$SIM_BETA_FROM"), $(sed -n 's/^machine: //p' "$SIM_BETA_FROM"))"
	else
		beta_note="$beta_note: $SIM_BETA_FROM measured no beta ($(sed -n 's/^beta: //p' "$SIM_BETA_FROM" | cut -c1-80))"
	fi
fi
echo "simulate: $beta_note"
res=${SIMULATE_RESULTS:-$sim/results}
bin=$sim/walscale_sim
start=$(date +%s)

"$sim"/build.sh "$bin"
# which decision code the tables are of
rules=${SIM_RULES_DIR:-$(dirname "$sim")}
rules_id="walscale_auto_rules.c $(cat "$rules"/walscale_auto_rules.c "$rules"/walscale_auto_rules.h | sha256sum | cut -c1-12)"
if commit=$(git -C "$rules" rev-parse --short HEAD 2>/dev/null); then
	if git -C "$rules" diff --quiet HEAD -- walscale_auto_rules.c walscale_auto_rules.h 2>/dev/null; then
		rules_id="$rules_id, as in commit $commit"
	else
		rules_id="$rules_id, commit $commit with uncommitted changes"
	fi
fi
mkdir -p "$res"
rm -f "$res"/*.csv "$res"/*.svg "$res"/part-*.md "$res"/cpu-times.txt

# one job per scenario and CPU count, the costliest first, two at a time
# for two cores; each is deterministic on its own.  Exit status 1 is a
# missed goal; anything else a failure.
only=${SIMULATE_CONTROLLER_ONLY:-0}
jobs=$(
	if [ "$only" != 1 ]; then
		echo validate
		echo costs
	fi
	for cpus in ${SIMULATE_CPUS:-96 480 16}; do
		for sc in ${SIMULATE_SCENARIOS:-$("$bin" list)}; do
			echo "scenarios $cpus $sc"
		done
	done
)
run_job() {
	case "$1" in
		validate) "$bin" validate "$res"/validation.md ;;
		costs) "$bin" costs >"$res"/costs.md ;;
		scenarios) "$bin" scenarios "$res/part-$2-$3.md" "$res" "$2" "$3" ;;
	esac
	rc=$?
	# the job's CPU time, user and system, as bash's times has it (not in a
	# subshell, whose times start again)
	times >"$res/times.$$"
	echo "$* $(tail -1 "$res/times.$$")" >>"$res"/cpu-times.txt
	rm -f "$res/times.$$"
	[ "$rc" -le 1 ] || echo "simulate: '$*' failed ($rc)" >&2
	[ "$rc" -le 1 ]
}
export -f run_job
export bin res
if ! echo "$jobs" | xargs -P "${SIMULATE_JOBS:-2}" -I{} bash -c 'run_job {}'; then
	echo "simulate: the simulator failed" >&2
	exit 2
fi

# one table, rows grouped by scenario, then CPU count
{
	first=$(ls "$res"/part-*.md | head -1)
	head -2 "$first"
	for f in "$res"/part-*.md; do
		tail -n +3 "$f"
	done | awk -F'|' '{ print $2 "\t" sprintf("%05d", $3) "\t" $0 }' |
		sort -s -t$'\t' -k1,1 -k2,2 | cut -f3-
	echo
	echo "Decision code: $rules_id (sha256 of the .c and .h, first 12 digits); $beta_note."
	echo
	windows=$(for cpus in ${SIMULATE_CPUS:-96 480 16}; do
		echo "$("$bin" window "$cpus") ms at $cpus CPUs"
	done | sort -t' ' -k4n | paste -sd, - | sed 's/,/, /g')
	echo "All figures simulated. Auto mode's hour is ${SIM_WINDOWS_PER_HOUR:-360} windows of $((3600 / ${SIM_WINDOWS_PER_HOUR:-360})) s, each of model time $windows; the fixed counts' ${SIM_SWEEP_WINDOWS_PER_HOUR:-60} of $((3600 / ${SIM_SWEEP_WINDOWS_PER_HOUR:-60})) s, each $(awk -v k="${SIM_SWEEP_WINDOW_STRETCH:-1}" 'BEGIN { print 40 * k }') ms. start/best and max/best: the fixed count at auto mode's start and at its maximum, over the best fixed count. Goals: auto/best >= 0.95; changes per hour under steady load <= log2(max) + 2; in (d) no grow past the knee (the fewest locks within 2% of the best fixed count) or the start, whichever is more, kept for 600 s or more."
} >"$res"/controller.md
rm -f "$res"/part-*.md

python3 "$sim"/plot.py "$res"

if [ "$only" != 1 ]; then
	echo "== Validation (simulated) =="
	cat "$res"/validation.md
	echo
	echo "== What taking every lock costs (simulated) =="
	cat "$res"/costs.md
	echo
fi
echo "== Auto mode in the loop (simulated) =="
cat "$res"/controller.md
echo

summary="not run"
misses_v=0
if [ "$only" != 1 ]; then
	summary=$(sed -n 's/^Summary: //p' "$res"/validation.md)
	misses_v=$(grep -c '| \*\*no\*\* |' "$res"/validation.md || true)
fi
runs=$(grep -c '^| (' "$res"/controller.md || true)
misses_c=$(grep -c 'goal missed' "$res"/controller.md || true)
secs=$(($(date +%s) - start))
cpu=$(awk '{ for (i = NF - 1; i <= NF; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } }
	END { printf "%.0f", t }' "$res"/cpu-times.txt)
echo "simulate: validation: ${summary%.}; controller $((runs - misses_c))/$runs runs met every goal; ${secs}s, ${cpu}s of CPU (all figures simulated)"
if [ "${SIMULATE_STRICT:-0}" = 1 ] && [ $((misses_v + misses_c)) -gt 0 ]; then
	exit 1
fi
exit 0
