#!/usr/bin/env bash
# make indent: format walscale's C code (walscale*.c, walscale*.h, t/unit/*.c, t/modules/*/*.c) with PostgreSQL's pgindent, using the
# pg_bsd_indent and typedefs list of the PostgreSQL tree walscale builds.
# With --check, change nothing and exit 2 if anything would change.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# only the stock tree is needed: pgindent and pg_bsd_indent are the same in both
"$repo/scripts/build-postgres.sh" --stock >/dev/null
tree="$(readlink -f "$repo/.pg/stock")/build"
indent="$tree/src/tools/pg_bsd_indent/pg_bsd_indent"
[ -x "$indent" ] || make -s -C "$tree/src/tools/pg_bsd_indent" >/dev/null
"$tree/src/tools/pgindent/pgindent" --indent="$indent" \
	--typedefs="$tree/src/tools/pgindent/typedefs.list" \
	--list-of-typedefs="WalscaleSetting WalscaleVersion WALInsertLockCounter WalscaleCounters WalscaleCounterSums WalscaleResizeRecord WalscaleFastpath WalscaleWorkerShared WalscaleAutoShared AutoDecision AutoWindow AutoBeginCause WalscaleAdviceShared AdviceRow AutoWindowFigures AutoRulesState AutoVerdict Shape Load Noise RunResult Server LoadKind Response NoiseKind NoiseState Cell Regression CellSummary WalscaleWaitsShared WaitSlot WalscaleWaitCount WalscaleWaitsSnapshot WaitEvidence WalscaleSinceReset" \
	"$@" "$repo"/walscale*.c "$repo"/walscale*.h "$repo"/t/unit/*.c "$repo"/t/modules/*/*.c
