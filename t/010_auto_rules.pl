
# Copyright (c) 2026, walscale developers

# Auto mode's rules, unit-tested: t/unit/test_auto_rules.c calls the pure
# functions of walscale_auto_rules.c: the CPU count from online CPUs,
# affinity and cgroup quota; the start and bounds for 2, 16, 96 and 480
# CPUs; and synthetic windows that put each part of the paired probe just
# below and at its boundary: the noise gate, the phases, the keep margins
# without noise and with a noise of known deviation, the holds, their lift
# by the blocked share, the step after a failure, the turns, an abandoned
# probe, the chain after a kept one, the bounds, and a day of a knee load
# at each CPU count.  Built with the compiler and flags of the server under
# test, it needs no server, and each of its TAP lines becomes one test of
# this file.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;

run_unit_program('test_auto_rules', 'walscale_auto_rules.c');

done_testing();
