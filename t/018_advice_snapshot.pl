
# Copyright (c) 2026, walscale developers

# walscale_reset() while the advisor takes its snapshot.  Each figure the
# advisor reads is a difference from the baseline the last reset set, so a
# reset between two of its reads once made a difference wrap around: the
# advice printed 18446744073709551615 transactions.  The advisor now takes
# all its figures under walscale's reset lock, shared, which walscale_reset()
# takes exclusively.  A session is paused at an injection point inside the
# snapshot, after the counters are read and before the transactions and the
# overflows are:
#
# - walscale_reset() from another session waits on walscale's lock, and
#   returns only once the snapshot is done;
# - the paused advice gives the figures from before that reset, the
#   transactions counted by then and no number wrapped around;
# - the next advice gives the figures since the reset.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;
use WalscaleInjection;

my $node = PostgreSQL::Test::Cluster->new('advice_snapshot');
require_injection_points($node);
$node->init;
# a fixed number of locks: auto mode's resizes would take the reset lock too
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'walscale,injection_points'
walscale.insert_locks = 16
walscale.fastpath_groups = 1
log_statement = none
});
$node->start;
$node->safe_psql('postgres',
	'CREATE EXTENSION walscale; CREATE EXTENSION injection_points; CREATE TABLE t (id int)');

# transactions for the advisor to count: pgbench's backends add theirs at
# exit, so all are counted when it returns
my $transactions = 400;
my $script = $node->basedir . '/insert.sql';
append_to_file($script, "INSERT INTO t VALUES (1);\n");
$node->safe_psql('postgres', 'SELECT walscale_reset()');
$node->command_ok(
	[
		'pgbench', '--no-vacuum', '--client' => 4, '--jobs' => 2,
		'--transactions' => $transactions / 4, '--file' => $script, 'postgres'
	],
	"$transactions transactions");

# PostgreSQL 17 has no fast-path groups to advise on, so that row counts
# no transactions: there, the insertion locks' acquisitions, which the same
# snapshot reads, stand in for them (each transaction takes at least one)
my $figure = no_fastpath_groups() ? 'acquisitions' : 'transactions';
my $fastpath_evidence =
  q{SELECT evidence FROM walscale_advice WHERE setting = '}
  . (no_fastpath_groups() ? 'walscale.insert_locks' : 'walscale.fastpath_groups')
  . q{'};
sub transactions_in
{
	my ($evidence) = @_;
	return $evidence =~ /^(\d+) $figure, / ? $1 : undef;
}

my $before = transactions_in($node->safe_psql('postgres', $fastpath_evidence));
cmp_ok($before // 0, '>=', $transactions,
	"the advice counts the $figure since the reset");

my $mon = $node->background_psql('postgres', on_error_stop => 1);
my $advisor = $node->background_psql('postgres', on_error_stop => 1);
my $resetter = $node->background_psql('postgres', on_error_stop => 1);
my $resetter_pid = backend_pid($resetter);

pause_at($node, $advisor, 'walscale-advice-snapshot', "$fastpath_evidence;", $mon);
start_in($node, $resetter, 'SELECT walscale_reset();', $mon);

# The reset waits on walscale's LWLock for as long as the snapshot is
# paused: seen waiting, and still waiting a while later.
sub resetter_state
{
	return activity_of($node, $resetter_pid, $mon);
}
my $state;
for (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
{
	$state = resetter_state();
	last if $state ne 'active/';
	usleep(100_000);
}
is($state, 'active/walscale',
	'walscale_reset() waits on the reset lock while the snapshot is taken');
usleep(500_000);
is(resetter_state(), 'active/walscale',
	'and still waits half a second later');

release_point($node, 'walscale-advice-snapshot', $mon);
my $paused_output = $advisor->query_safe(q{SELECT 'advice done'});
like($paused_output, qr/advice done$/, 'the paused advice completes');
my ($paused_evidence) = $paused_output =~ /^(\d+ $figure, .*)$/m;
ok(defined $paused_evidence, "the paused advice gives the evidence with the $figure")
  or diag("output: $paused_output");
$paused_evidence //= '';
note("paused advice: $paused_evidence");
cmp_ok(transactions_in($paused_evidence) // -1, '>=', $before,
	"the paused advice counts the $figure from before the reset");
unlike($paused_evidence, qr/\d{16}/, 'no figure of the paused advice wrapped around');

# the reset goes through once the snapshot is done
my $done = 0;
for (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
{
	$done = 1, last if resetter_state() =~ /^idle/;
	usleep(100_000);
}
ok($done, 'walscale_reset() returns once the snapshot is done');

my $after = transactions_in($node->safe_psql('postgres', $fastpath_evidence));
cmp_ok($after // $before, '<', $before,
	'the next advice counts from that reset');

$_->quit for ($advisor, $resetter, $mon);
$node->stop;
done_testing();
