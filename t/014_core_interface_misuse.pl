
# Copyright (c) 2026, walscale developers

# The core patch's interface used the way its documentation (xlog.h)
# forbids, by the test module t/modules/walscale_test_core, and the core
# refusing each use instead of hanging or sizing shared memory differently
# in different processes:
#
# (a) SetNumWALInsertLocks() called inside an insertion, holding the
#     backend's insertion lock: it would wait for that lock forever, as
#     LWLocks do not detect self-deadlock.  It raises an error instead,
#     which the insertion's critical section makes a PANIC.
# (b) The same, holding every lock, in walscale's worker during a resize.
# (c) The same in a critical section without an insertion lock (a flush of
#     a commit): the assertion that it runs outside critical sections.
# (f) The same outside a critical section, holding WALWriteLock, which an
#     inserter may wait for in AdvanceXLInsertBuffer() with its insertion
#     lock held: an ERROR, and the server and the number active are as
#     they were.
# (g) The limit on LWLocks held at once is stock PostgreSQL's
#     (MAX_SIMUL_LWLOCKS, 200) outside the all-lock path, also in a backend
#     that has just held every insertion lock for a WAL switch: the core
#     raises it only while the locks are held, so that the safety net
#     against LWLocks leaked in a loop stays as it was for every other lock.
# (d) A module that sets only XLogInsertLocksRequested, above the number
#     allocated: the postmaster refuses to start and says why; below it,
#     the number active is the one requested.
# (e) XLOGShmemSize() depends on the number allocated alone, and changes
#     nothing, whatever the number requested: an EXEC_BACKEND child, which
#     computes it again with its own requested number, must find the
#     postmaster's size.  Computed here in one backend, on any build;
#     t/022 (c) runs such children on an EXEC_BACKEND build.
#
# After each crash the server recovers with every committed row and takes
# new ones.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;
use WalscaleInjection;
use WalscaleStorm;

my $node = PostgreSQL::Test::Cluster->new('core_interface_misuse');
require_injection_points($node);

$node->init;
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'walscale'
restart_after_crash = on
include = 'walscale_case.conf'
});
write_case_conf($node, 16, 0);
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION walscale;
CREATE EXTENSION walscale_test_core;
CREATE TABLE committed (id int);
});

my $committed = 0;

sub commit_one
{
	$committed++;
	$node->safe_psql('postgres', "INSERT INTO committed VALUES ($committed)");
	return;
}

# The server came back from the crash of case $label: every committed row
# is there, and it commits again.
sub check_recovered
{
	my ($label) = @_;
	ok(server_up($node), "$label: the server restarts after the crash");
	is( $node->safe_psql(
			'postgres', 'SELECT count(*), coalesce(max(id), 0) FROM committed'),
		"$committed|$committed",
		"$label: the $committed rows committed before are there");
	commit_one();
	return;
}

# Run $sql in a session that must lose its connection to a crash, at most
# 60 s: a self-deadlock would otherwise hang it, and the file with it.
sub session_crashes
{
	my ($label, $sql) = @_;
	my $timed_out = 0;
	my ($ret, $stdout, $stderr) = $node->psql(
		'postgres', $sql,
		timeout => 60,
		timed_out => \$timed_out);
	ok(!$timed_out, "$label: the session does not hang");
	isnt($ret, 0, "$label: the session does not complete its statement");
	return;
}

# The log since $offset: the module called SetNumWALInsertLocks() at the
# injection point, and the server refused the call with a PANIC; then the
# server recovered.
sub check_refused
{
	my ($label, $offset, $point, $called, $refused) = @_;
	my $log = slurp_file($node->logfile, $offset);
	like(
		$log,
		qr/walscale_test_core: SetNumWALInsertLocks\(4\) at injection point "\Q$point\E"/,
		"$label: $called");
	like(
		$log,
		qr/PANIC:  cannot change the number of WAL insertion locks while holding an LWLock/,
		"$label: $refused");
	check_recovered($label);
}

commit_one();

# (a) inside an insertion: WAL reserved, the insertion lock held
{
	my $label = '(a) inside an insertion';
	my $offset = -s $node->logfile;
	session_crashes(
		$label, q{
SELECT walscale_test_attach_resize('walscale-wal-insert-reserved', 4);
INSERT INTO committed VALUES (-1);
});
	check_refused(
		$label, $offset,
		'walscale-wal-insert-reserved',
		'the module called SetNumWALInsertLocks() there',
		"the call is refused, a PANIC in the insertion's critical section");
}

# (b) holding every lock, in the worker's own resize
{
	my $label = '(b) holding all locks';
	my $offset = -s $node->logfile;
	$node->safe_psql('postgres',
		"SELECT walscale_test_attach_resize('walscale-resize-all-locks-held', 4)");
	write_case_conf($node, 32, 0);
	# by signal, not by a session, which the PANIC could end before it is
	# told that pg_reload_conf() succeeded
	$node->reload;
	# a PANIC, or the failed assertion of a server that let the call through
	$node->wait_for_log(qr/PANIC:  |TRAP: /, $offset);
	check_refused(
		$label, $offset,
		'walscale-resize-all-locks-held',
		"the module called SetNumWALInsertLocks() from the worker's resize",
		'the nested call is refused with a PANIC, not left waiting on lock 0');
	is($node->safe_psql('postgres', 'SELECT active FROM walscale_test_insert_locks()'),
		'32', "$label: after the restart the 32 locks configured are active");
}

# (c) in a critical section without an insertion lock: a commit's flush
SKIP:
{
	my $label = '(c) in a critical section';
	skip 'the server is built without assertions', 3
	  unless $node->safe_psql('postgres', 'SHOW debug_assertions') eq 'on';
	my $offset = -s $node->logfile;
	session_crashes(
		$label, q{
SELECT walscale_test_attach_resize('walscale-flush-before-position', 4);
INSERT INTO committed VALUES (-1);
});
	like(
		slurp_file($node->logfile, $offset),
		qr/TRAP: failed Assert\("CritSectionCount == 0"\)/,
		"$label: the assertion that it runs outside critical sections fails");
	check_recovered($label);
}

is($node->safe_psql('postgres', 'SELECT count(*) FROM committed WHERE id < 0'),
	'0', 'no insertion of the crashed sessions was committed');

# (f) holding an LWLock that is no insertion lock, outside critical sections
{
	my $label = '(f) holding WALWriteLock';
	my $active = $node->safe_psql('postgres',
		'SELECT active FROM walscale_test_insert_locks()');
	my ($ret, $stdout, $stderr) = $node->psql('postgres',
		'SELECT walscale_test_resize_holding_lwlock(4)');
	isnt($ret, 0, "$label: the call fails");
	like(
		$stderr,
		qr/ERROR:  cannot change the number of WAL insertion locks while holding an LWLock/,
		"$label: with an ERROR that says why");
	is($node->safe_psql('postgres', 'SELECT active FROM walscale_test_insert_locks()'),
		$active, "$label: the number active is still $active");
	commit_one();
	is($node->safe_psql('postgres', 'SELECT count(*) FROM committed'),
		$committed, "$label: the server commits after the error");
}

# (g) the limit on held LWLocks, after a WAL switch in the same backend
{
	my $label = '(g) held LWLocks';
	my ($ret, $stdout, $stderr) = $node->psql(
		'postgres', q{
SELECT pg_logical_emit_message(false, 'walscale', 'g') IS NOT NULL;
SELECT pg_switch_wal() IS NOT NULL;
SELECT walscale_test_take_lwlocks(200);
SELECT walscale_test_take_lwlocks(201);
});
	is($stdout, "t\nt\n200",
		"$label: a backend that switched WAL with 16 locks active may hold 200 LWLocks");
	like(
		$stderr,
		qr/ERROR:  too many LWLocks taken/,
		"$label: but not 201: the limit is stock's once the insertion locks are let go"
	);
}

# (e), on a server that allocates 1024 locks
my $size_1024 = $node->safe_psql('postgres',
	'SELECT walscale_test_xlog_shmem_size(8)');
is( $node->safe_psql(
		'postgres', q{
SELECT count(DISTINCT walscale_test_xlog_shmem_size(r))
FROM unnest(ARRAY[1, 8, 32, 1024]) AS r}),
	'1',
	'(e) with 1024 allocated, the size of XLOG shared memory is the same for any number requested'
);
$node->stop;

# (d) and (e) on a server where only the number requested is set
my $bare = PostgreSQL::Test::Cluster->new('requested_only');
$bare->init;
$bare->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'walscale_test_core'
walscale_test_core.requested_locks = 16
});
{
	my $label = '(d) 16 requested, 8 allocated';
	my $offset = -s $bare->logfile;
	ok(!$bare->start(fail_ok => 1), "$label: the server does not start");
	like(
		slurp_file($bare->logfile, $offset),
		qr/FATAL:  number of WAL insertion locks requested \(16\) must be between 1 and 8, the number allocated/,
		"$label: it says the number requested is more than the number allocated"
	);
}
$bare->append_conf('postgresql.conf', 'walscale_test_core.requested_locks = 4');
$bare->start;
$bare->safe_psql('postgres', 'CREATE EXTENSION walscale_test_core');
is($bare->safe_psql('postgres', 'SELECT allocated, active FROM walscale_test_insert_locks()'),
	'8|4', '(d) 4 requested of 8 allocated: 4 active');
{
	my $label = '(e) with 8 allocated';
	my $size_8 = $bare->safe_psql('postgres',
		'SELECT walscale_test_xlog_shmem_size(4)');
	is( $bare->safe_psql(
			'postgres', q{
SELECT count(DISTINCT walscale_test_xlog_shmem_size(r))
FROM unnest(ARRAY[1, 4, 8, 16, 1024]) AS r}),
		'1',
		"$label: the size is the same for any number requested, 16 and 1024 included"
	);
	is($bare->safe_psql('postgres', 'SELECT allocated FROM walscale_test_insert_locks()'),
		'8', "$label: computing it leaves the number allocated as it was");
	cmp_ok($size_8, '<', $size_1024,
		"$label: it is smaller than with 1024 allocated ($size_8 < $size_1024 bytes)");
}
$bare->stop;

done_testing();
