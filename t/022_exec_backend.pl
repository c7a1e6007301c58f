
# Copyright (c) 2026, walscale developers

# Under EXEC_BACKEND (Windows; elsewhere a server built with
# -DEXEC_BACKEND) every child of the postmaster loads
# shared_preload_libraries again, and computes again from its own modules
# the numbers that the postmaster sized shared memory with.  The test module
# t/modules/walscale_test_core can ask, in such children only, for other
# numbers than in the postmaster:
#
# (a) Without it, walscale sets the fast-path lock groups to 2, where
#     max_locks_per_transaction would give 4: the server starts, its
#     auxiliary processes and walscale's worker run, and a backend has 2
#     groups and uses them.  A check of the child's number made before the
#     child computes it would stop every child here.
# (b) Children ask for 8 groups: on an EXEC_BACKEND build they stop with
#     FATAL, naming both numbers, and the server does not start; on a forked
#     build no child loads the modules again, and the server runs with 2.
# (c) Children ask for 16 WAL insertion locks where the postmaster
#     allocated 8 and requested 4: they find XLOG shared memory of the
#     postmaster's size and 4 locks active.  t/014 (e) computes that size
#     with other numbers in one backend, on any build.
#
# WALSCALE_EXEC_BACKEND=required (make test's run on the EXEC_BACKEND build)
# fails the file unless the server is built with EXEC_BACKEND.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;

my $node = PostgreSQL::Test::Cluster->new('exec_backend');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
log_statement = none
# a child that stops ends the server, instead of a loop of restarts
restart_after_crash = off
include = 'exec_case.conf'
});

# The settings of the next start, in exec_case.conf.
sub set_case
{
	my ($settings) = @_;
	my $file = $node->data_dir . '/exec_case.conf';

	open my $fh, '>', $file or die "could not write \"$file\": $!";
	print $fh $settings;
	close $fh;
	return;
}

my $walscale_case = q{
shared_preload_libraries = 'walscale,walscale_test_core'
walscale.fastpath_groups = 2
};

# (a)
set_case($walscale_case);
$node->start;
$node->safe_psql('postgres',
	'CREATE EXTENSION walscale; CREATE EXTENSION walscale_test_core');
my $exec_backend =
  $node->safe_psql('postgres', 'SELECT walscale_test_exec_backend()') eq 't';
note($exec_backend
	? 'the server is built with EXEC_BACKEND'
	: 'the server forks its children');
if (($ENV{WALSCALE_EXEC_BACKEND} // '') eq 'required')
{
	ok($exec_backend, 'the server is built with EXEC_BACKEND')
	  or BAIL_OUT('WALSCALE_EXEC_BACKEND=required, but the server forks its children');
}

ok( $node->poll_query_until(
		'postgres', q{
SELECT count(DISTINCT backend_type) FROM pg_stat_activity
WHERE backend_type IN ('checkpointer', 'background writer', 'walwriter',
                       'autovacuum launcher', 'walscale')}, '5'),
	'(a) the auxiliary processes and walscale\'s worker run');
# (a) and (b) are about fast-path lock groups, which PostgreSQL 17 lacks
SKIP:
{
	skip no_fastpath_groups(), 2 if no_fastpath_groups();

	is( $node->safe_psql(
			'postgres',
			'SELECT fastpath_groups, fastpath_groups_source FROM walscale_settings'),
		'2|walscale.fastpath_groups',
		'(a) a backend has the 2 fast-path lock groups walscale asked for');
	$node->safe_psql('postgres',
		'SELECT format($$CREATE TABLE t%s (i int)$$, i) FROM generate_series(1, 40) i \gexec'
	);
	my $fastpath = $node->safe_psql(
		'postgres', q{
BEGIN;
SELECT format('LOCK TABLE t%s IN ACCESS SHARE MODE', i) FROM generate_series(1, 40) i \gexec
SELECT count(*) FILTER (WHERE fastpath) FROM pg_locks
WHERE locktype = 'relation' AND pid = pg_backend_pid()
  AND relation::regclass::text ~ '^t[0-9]+$';
COMMIT;
});
	my ($fastpath_locks) = $fastpath =~ /(\d+)\s*\z/;
	ok( $fastpath_locks > 0 && $fastpath_locks <= 32,
		"(a) of 40 tables locked, $fastpath_locks in the fast path, at most 2 groups of 16"
	);
}
$node->stop;

# (b)
SKIP:
{
	skip no_fastpath_groups(), $exec_backend ? 2 : 1 if no_fastpath_groups();

	set_case($walscale_case . "walscale_test_core.child_fastpath_groups = 8\n");
	my $offset = -s $node->logfile;
	if ($exec_backend)
	{
		ok(!$node->start(fail_ok => 1),
			'(b) children asking for 8 groups: the server does not start');
		like(
			slurp_file($node->logfile, $offset),
			qr/FATAL:  this process uses 8 fast-path lock groups per backend, but shared memory was sized for 2/,
			'(b) a child says it computed 8 groups where shared memory has 2');
	}
	else
	{
		$node->start;
		is($node->safe_psql('postgres', 'SELECT fastpath_groups FROM walscale_settings'),
			'2', '(b) forked children do not load the modules again: 2 groups');
		$node->stop;
	}
}

# (c)
set_case(
	q{
shared_preload_libraries = 'walscale_test_core'
walscale_test_core.requested_locks = 4
walscale_test_core.child_requested_locks = 16
});
$node->start;
is($node->safe_psql('postgres', 'SELECT allocated, active FROM walscale_test_insert_locks()'),
	'8|4', '(c) children asking for 16 locks of 8 allocated: 4 of 8 active');
$node->safe_psql('postgres',
	'CREATE TABLE c AS SELECT i FROM generate_series(1, 1000) i; CHECKPOINT');
is($node->safe_psql('postgres', 'SELECT count(*) FROM c'),
	'1000', '(c) they write WAL and checkpoint');
$node->stop;

done_testing();
