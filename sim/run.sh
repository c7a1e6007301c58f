#!/bin/bash
# make simulate: build the simulator against the repository's decision code,
# validate the model, run auto mode in it at 16, 96 and 480 CPUs, and write
# the tables and plots under sim/results/.  Every figure is simulated.
# SIMULATE_STRICT=1 makes a missed prediction target or controller goal an
# error; by default they are reported in the summary line.
# SIMULATE_CONTROLLER_ONLY=1 runs the controller table alone (no validation,
# no costs).  The table's runs: every beta of SIMULATE_BETAS ("0 0.5 1"),
# CPU count of SIMULATE_CPUS ("16 96 480") and scenario of
# SIMULATE_SCENARIOS ("a-steady-2000"; every one: "all", names as
# walscale_sim list gives them), each cut at SIMULATE_MINUTES (20; 0: whole);
# auto mode once per seed of SIMULATE_SEEDS ("0 1 2"), the fixed counts once
# per row, with the first.
# SIM_BETA_FROM=FILE takes the hand-over slope beta from a report of
# bench/handover.sh (its "beta:" line, measured on 3 CPUs or more) instead
# of the assumed 0.5 for the validation and the costs, and adds it to the
# table's betas; a report without one (2 CPUs) changes nothing, and the
# tables say which beta they ran with.
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
		measured_beta=$b
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
rm -rf "$res"/*.csv "$res"/*.svg "$res"/part-*.tsv "$res"/cpu-times.txt "$res"/runs
mkdir -p "$res"/runs

# one job per scenario and CPU count, the costliest first, two at a time
# for two cores; each is deterministic on its own.  Exit status 1 is a
# missed goal; anything else a failure.
only=${SIMULATE_CONTROLLER_ONLY:-0}
jobs=$(
	if [ "$only" != 1 ]; then
		echo validate
		echo costs
	fi
	scenarios=${SIMULATE_SCENARIOS:-a-steady-2000}
	[ "$scenarios" != all ] || scenarios=$("$bin" list)
	for cpus in ${SIMULATE_CPUS:-16 96 480}; do
		for beta in ${SIMULATE_BETAS:-0 0.5 1${measured_beta:+ $measured_beta}}; do
			for sc in $scenarios; do
				echo "scenarios $beta $cpus $sc"
			done
		done
	done
)
minutes=${SIMULATE_MINUTES:-20}
duration=
[ "$minutes" = 0 ] || duration=$((minutes * 60))
export SIM_SEEDS=${SIMULATE_SEEDS:-0 1 2}
run_job() {
	case "$1" in
		validate) "$bin" validate "$res"/validation.md ;;
		costs) "$bin" costs >"$res"/costs.md ;;
		scenarios) SIM_POS_BETA=$2 SIM_DURATION_S=$duration "$bin" scenarios \
			"$res/part-$2-$3-$4.tsv" "$res" "$3" "$4" ;;
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
export bin res duration
if ! echo "$jobs" | xargs -P "${SIMULATE_JOBS:-2}" -I{} bash -c 'run_job {}'; then
	echo "simulate: the simulator failed" >&2
	exit 2
fi

# one table of every run
cat "$res"/part-*.tsv >"$res"/runs.tsv
rm -f "$res"/part-*.tsv
{
	windows=$(for cpus in ${SIMULATE_CPUS:-16 96 480}; do
		echo "$("$bin" window "$cpus") ms at $cpus CPUs"
	done | sort -t' ' -k4n | paste -sd, - | sed 's/,/, /g')
	echo "Decision code: $rules_id (sha256 of the .c and .h, first 12 digits); outside the table, $beta_note."
	echo "All figures simulated. Auto mode's hour is ${SIM_WINDOWS_PER_HOUR:-360} windows of $((3600 / ${SIM_WINDOWS_PER_HOUR:-360})) s, each of model time $windows; a fixed count's run of an hour or less is ${SIM_SWEEP_WINDOWS_PER_HOUR:-60} windows an hour, one checkpoint interval of model time in all. Checkpoints: full-page images every 300 s of the scenario's clock, and the all-lock acquisition every 30 of auto mode's windows' model time, for auto mode and the fixed counts alike (sim/README.md, \"Time compression\")."
	echo
	python3 "$sim"/controller_table.py "$res"/runs.tsv
} >"$res"/controller.md

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
runs=$(grep -vc '^#' "$res"/runs.tsv || true)
misses_c=$(awk -F'\t' '!/^#/ && $23 != "yes"' "$res"/runs.tsv | wc -l)
secs=$(($(date +%s) - start))
cpu=$(awk '{ for (i = NF - 1; i <= NF; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } }
	END { printf "%.0f", t }' "$res"/cpu-times.txt)
echo "simulate: validation: ${summary%.}; controller: auto mode met every goal in $((runs - misses_c))/$runs runs; ${secs}s, ${cpu}s of CPU (all figures simulated)"
if [ "${SIMULATE_STRICT:-0}" = 1 ] && [ $((misses_v + misses_c)) -gt 0 ]; then
	exit 1
fi
exit 0
