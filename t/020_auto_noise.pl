
# Copyright (c) 2026, walscale developers

# A test bench for auto mode's controller: t/unit/test_auto_noise.c drives
# walscale_rules_decide() (walscale_auto_rules.c) through a grid of
# synthetic servers, loads and noises, in 10-s windows, each decision
# applied to the next window.  The grid: 16, 96 and 480 CPUs; insertpos_lck
# hand-over slopes β of 0, 0.5 and 1 (what each doubling past a load's best
# number of locks costs); eight loads (steady with knees at 16, 64 and 256,
# a daily ramp, bursts, a connection pool whose best alternates 16 and 64
# every 4 hours behind the same backends, a step from 16 to 256, and a
# WAL-bound load whose best is the floor although every number is
# contended); six noises (none; independent 2 and 5%; AR(1) at rho 0.9;
# checkpoint dips; heavy-tailed outliers), with +-10% on the active
# backends.  432 cells, 64 seeds each (1 without noise), a day each.  Each
# cell and goal is one line: throughput at least 0.98 of the best fixed
# number's (0.97 of the per-phase best where the best moves), at most 5%
# of the time at twice the best number or more, within a doubling of a
# moved best within an hour, at most 240 changes a day.  A goal auto mode
# is known not to meet yet is a TODO line, with why, as long as the cell
# stays within the shortfall's own limit; past it, a failure.  The program prints
# a table with the best fixed number, stock's 8 and a static number per CPU
# size fitted on the grid beside auto mode, and a verdict line.  And, ten
# thousand times for each of six noises, t/008's minute of 8 steady clients
# on 2 CPUs in synthetic 1-s windows, failing if more than one run in 500
# fails t/008 (d)'s checks.
#
# Seeds are drawn afresh each run and printed: WALSCALE_NOISE_SEED=BASE
# repeats a run, WALSCALE_NOISE_SEED=CELL:RUNSEED one cell's run, and
# `test_auto_noise trace CELL RUNSEED` prints that run's changes (each
# failing line names its own).  WALSCALE_NOISE_DAYS (default 1),
# WALSCALE_NOISE_SEEDS (64) and WALSCALE_NOISE_CELLS (a part of the cells'
# names) size the run.  About a minute of CPU; no server.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;

run_unit_program('test_auto_noise', 'walscale_auto_rules.c');

done_testing();
