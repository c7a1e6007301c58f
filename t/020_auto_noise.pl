
# Copyright (c) 2026, walscale developers

# Auto mode's rules under noise: t/unit/test_auto_noise.c drives
# walscale_auto_rules.c through three days of 10-s windows of four
# synthetic loads on a 96-CPU server (bound by WAL writing; a knee at 64
# locks with a cost past it; a daily ramp; bursts), with seeded noise of 0,
# 2 and 5% on the rate and the blocked share and up to 35% on the active
# backends, and fails if the WAL-bound load is kept above twice its start,
# if the knee load ends more than a doubling from its knee, if any run's
# throughput falls below 0.98 of the best fixed number's, if a day has
# more than 48 changes, or if a steady load has more than 3 trials in a
# run undone for want of windows that could judge them; and, ten thousand
# times for each of six noises, t/008's minute of 8 steady clients on 2
# CPUs in synthetic 1-s windows, failing if more than one run in 500 fails
# t/008 (d)'s checks.  Deterministic (fixed seeds), a few seconds, no
# server.  `test_auto_noise trace LOAD NOISE SEED` prints one run's changes.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;

run_unit_program('test_auto_noise', 'walscale_auto_rules.c');

done_testing();
