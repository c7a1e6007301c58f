
# Copyright (c) 2026, walscale developers

# An ERROR raised while a process holds every WAL insertion lock.  Error
# recovery would release the locks with LWLockReleaseAll(), which leaves the
# position marker (insertingAt) of all but the last at PG_UINT64_MAX; the
# next insertion on such a lock would look finished to flushers, and a flush
# could write a record still being copied.  The core patch holds all locks
# in a critical section, so that such an error is a PANIC: the server stops
# (restart_after_crash is off here, to look at the WAL as it was left) and
# recovers at the next start.  Both places where walscale runs code with all
# locks held are made to fail with the injection points' "error" action,
# under clients that keep a ledger of their acknowledged commits:
#
# (a) SetNumWALInsertLocks(), in walscale's worker, applying a reload;
# (b) WALInsertLockAcquireExclusive() in pg_backup_start(), which is not in
#     a critical section of its own.
#
# Each time: a PANIC, not a server that goes on; pg_waldump reads the WAL
# left behind through the last record recovery replays; every acknowledged
# commit is there after the restart, and the server inserts again.

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
use WalscaleStorm;

my $node = PostgreSQL::Test::Cluster->new('error_all_locks_held');
require_injection_points($node);

# a server that can take a backup
$node->init(allows_streaming => 1);
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'walscale,injection_points'
restart_after_crash = off
max_connections = 40
log_statement = none
include = 'walscale_case.conf'
});
write_case_conf($node, 16, 0);
$node->start;
$node->safe_psql('postgres',
	'CREATE EXTENSION walscale; CREATE EXTENSION injection_points');

my $ledger = ledger_start($node, clients => 8, rows => 5);
ok(ledger_wait_for_progress($ledger, 40), 'the ledger clients commit');

# Wait for the postmaster to be gone, as after a PANIC with
# restart_after_crash off; at most $seconds.
sub postmaster_gone
{
	my ($seconds) = @_;
	my $pid = $node->{_pid};
	for (1 .. 10 * $seconds)
	{
		return 1 unless -e "/proc/$pid" && -e $node->data_dir . '/postmaster.pid';
		usleep(100_000);
	}
	return 0;
}

# After the PANIC of case $label at $point: the server stopped; pg_waldump
# reads its WAL through what recovery replays; the restarted server has
# every acknowledged commit and takes new ones.
sub check_panic_and_recovery
{
	my ($label, $point, $log_offset) = @_;
	ok(postmaster_gone(60),
		"$label: the server stops instead of going on with the locks' state left behind"
	);
	my $log = slurp_file($node->logfile, $log_offset);
	like($log, qr/PANIC:  error triggered for injection point \Q$point\E/,
		"$label: the error at $point is a PANIC");
	ledger_pause($ledger);
	$node->_update_pid(0);

	my $dump = wal_dump($node);
	my $restart_offset = -s $node->logfile;
	$node->start;
	ok(server_up($node), "$label: the server starts again");
	my ($redo_done) =
	  slurp_file($node->logfile, $restart_offset) =~ m{redo done at ([0-9A-F]+/[0-9A-F]+)};
	ok(defined $redo_done,
		"$label: crash recovery replayed WAL (redo done at " . ($redo_done // '?') . ')');
	my $recovery_end = $node->safe_psql('postgres',
		'SELECT redo_lsn FROM pg_control_checkpoint()');
	wal_read_through($dump, $label, $redo_done, $recovery_end);
	ledger_verify($ledger, $label, 'false');
	ledger_resume($ledger);
	ok(ledger_wait_for_progress($ledger, 20), "$label: the clients commit again");
	return;
}

# (a) the resize of a reload fails with all 16 locks held
{
	my $label = '(a) resize';
	my $point = 'walscale-resize-all-locks-held';
	my $log_offset = -s $node->logfile;
	$node->safe_psql('postgres',
		"SELECT injection_points_attach('$point', 'error')");
	write_case_conf($node, 32, 0);
	# by signal, not by a session, which the PANIC could end before it is
	# told that pg_reload_conf() succeeded
	$node->reload;
	check_panic_and_recovery($label, $point, $log_offset);
	is( $node->safe_psql(
			'postgres', 'SELECT insert_locks FROM walscale_settings'),
		'32', "$label: after the restart, the 32 locks configured are in effect");
}

# (b) pg_backup_start() fails with all but the last lock held
{
	my $label = '(b) backup start';
	my $point = 'walscale-all-locks-but-last-held';
	my $log_offset = -s $node->logfile;
	my ($ret, $stdout, $stderr) = $node->psql(
		'postgres', qq{
SELECT injection_points_set_local();
SELECT injection_points_attach('$point', 'error');
SELECT injection_points_load('$point');
SELECT pg_backup_start('walscale', fast => true);
});
	isnt($ret, 0, "$label: the session does not get its backup started");
	unlike($stderr, qr/^ERROR:/m,
		"$label: it is not told of a mere ERROR, after which the server would go on");
	check_panic_and_recovery($label, $point, $log_offset);
}

ledger_stop($ledger);
my @client_errors = ledger_client_errors($ledger);
is(scalar(grep { !/PANIC|terminating connection/ } @client_errors),
	0, 'the clients saw no error besides the PANICs')
  or diag(join "\n", @client_errors[ 0 .. ($#client_errors < 9 ? $#client_errors : 9) ]);
ledger_verify($ledger, 'at the end', 'true');

$node->stop;
done_testing();
