#!/bin/bash
# Build sim/walscale_sim, linking the repository's walscale_auto_rules.c
# as it is now, with the compiler and flags of the patched server, as
# t/010_auto_rules.pl builds the unit tests.
set -euo pipefail
sim=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$sim")
PG_CONFIG=${PG_CONFIG:-$repo/.pg/walscale/bin/pg_config}
out=${1:-$sim/walscale_sim}
# SIM_RULES_DIR: another copy of walscale_auto_rules.c and .h, to compare
rules=${SIM_RULES_DIR:-$repo}
# shellcheck disable=SC2046
$("$PG_CONFIG" --cc) $("$PG_CONFIG" --cflags) $("$PG_CONFIG" --cppflags) \
	-DFRONTEND -I"$rules" -I"$sim" -I"$("$PG_CONFIG" --includedir-server)" \
	-o "$out" \
	"$sim"/walscale_sim.c "$sim"/model.c "$sim"/params.c "$sim"/calibrate.c \
	"$sim"/scenarios.c "$rules"/walscale_auto_rules.c \
	-L"$("$PG_CONFIG" --libdir)" $("$PG_CONFIG" --ldflags) $("$PG_CONFIG" --libs)
