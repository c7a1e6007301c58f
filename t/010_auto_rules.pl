
# Copyright (c) 2026, walscale developers

# Auto mode's rules, unit-tested: t/unit/test_auto_rules.c calls the pure
# functions of walscale_auto_rules.c: the CPU count from online CPUs,
# affinity and cgroup quota; the start and bounds for 2, 16, 96 and 480
# CPUs; and synthetic windows that put each rule just below and at its
# boundary (blocked share, waits, acquisitions, streaks), the trial of a
# change on one window and on the several that noise asks for, the spread,
# a trial no window can judge, the halving tried under contention, the
# ceiling and the holds, the grow and shrink backoffs and their decay, the
# lock-use hysteresis, the floor and maximum, scale-freedom from 2 to 2000
# backends, a ramp, and the changes an hour of steady loads.  Built with
# the compiler and flags of the server under test, it needs no server, and
# each of its TAP lines becomes one test of this file.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;

run_unit_program('test_auto_rules', 'walscale_auto_rules.c');

done_testing();
