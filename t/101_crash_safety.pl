
# Copyright (c) 2026, walscale developers

# Crash safety at walscale.insert_locks = 1024 and insert_lock_attempts = 3:
# clients commit WAL-heavy transactions with synchronous_commit = on and
# write down every commit the server acknowledged (a client-side ledger),
# while the postmaster, or a single backend, is killed with SIGKILL again and
# again.  After each restart every acknowledged commit must be there, each
# transaction must be all there or not at all, and amcheck (verify_heapam,
# bt_index_check with heapallindexed) must report nothing.
#
# WALSCALE_POSTMASTER_KILLS and WALSCALE_BACKEND_KILLS (default 5 each) set
# the number of cycles; WALSCALE_CRASH_CLIENTS (default 8) the clients.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep);

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;

my $postmaster_kills = $ENV{WALSCALE_POSTMASTER_KILLS} // 5;
my $backend_kills = $ENV{WALSCALE_BACKEND_KILLS} // 5;
my $nclients = $ENV{WALSCALE_CRASH_CLIENTS} // 8;
my $rows_per_xact = 5;

my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'walscale'
walscale.insert_locks = 1024
walscale.insert_lock_attempts = 3
fsync = on
synchronous_commit = on
full_page_writes = on
restart_after_crash = on
max_connections = 40
# every client statement in the log would make it grow by gigabytes, and
# wait_for_log, which rereads it, slow to a crawl
log_statement = none
# checkpoints (all 1024 locks at once) during the load, and full-page images
checkpoint_timeout = 30s
max_wal_size = 48MB
min_wal_size = 32MB
});
$node->start;

$node->safe_psql(
	'postgres', qq{
CREATE EXTENSION walscale;
CREATE EXTENSION amcheck;
CREATE TABLE ledger_rows (client int NOT NULL, seq bigint NOT NULL,
                          part int NOT NULL, payload text NOT NULL);
CREATE INDEX ledger_rows_client_seq ON ledger_rows (client, seq);
CREATE INDEX ledger_rows_payload ON ledger_rows (md5(payload), part);
CREATE TABLE ledger_counts (client int PRIMARY KEY, xacts bigint NOT NULL);
CREATE TABLE victim_rows (n int NOT NULL, payload text NOT NULL);
INSERT INTO ledger_counts SELECT g, 0 FROM generate_series(1, $nclients) g;
});
is( $node->safe_psql(
		'postgres',
		"SELECT insert_locks || '/' || insert_lock_attempts FROM walscale_settings"),
	'1024/3',
	'the server runs with 1024 insertion locks and 3 attempts');

# One client: psql sessions of 20 transactions each, one \echo of the
# transaction's number to the ledger after each COMMIT that came back; a lost
# connection ends the session, and the next one starts after the last number
# acknowledged.  A transaction that committed without its acknowledgement is
# then done again under the same number, which the checks allow for.
my $dir = PostgreSQL::Test::Utils::tempdir;
my $stopfile = "$dir/stop";
my $client_script = "$dir/client.sh";
open my $fh, '>', $client_script or die $!;
print $fh <<'SH';
#!/bin/bash
id=$1 ledger=$2 stop=$3 rows=$4
touch "$ledger"
while [ ! -e "$stop" ]; do
	last=$(tail -n 1 "$ledger")
	first=$((${last:-0} + 1))
	for ((i = first; i < first + 20; i++)); do
		printf 'BEGIN;\nINSERT INTO ledger_rows SELECT %d, %d, g, repeat(md5(%d::text || g), 20) FROM generate_series(1, %d) g;\nUPDATE ledger_counts SET xacts = xacts + 1 WHERE client = %d;\nCOMMIT;\n\\echo %d\n' \
			"$id" "$i" "$i" "$rows" "$id" "$i"
	done | PGAPPNAME="ledger$id" stdbuf -oL psql -X -q -v ON_ERROR_STOP=1 -d postgres >>"$ledger" 2>>"$ledger.err"
	[ "${PIPESTATUS[1]}" = 0 ] || sleep 0.1
done
SH
close $fh;
chmod 0755, $client_script;

my @clients;

# However the test ends, the clients stop: they would otherwise go on trying
# to connect for ever.
END
{
	if (@clients)
	{
		open my $fh, '>', $stopfile;
		close $fh if $fh;
		for my $h (@clients)
		{
			eval { $h->kill_kill(grace => 5); };
		}
	}
}

{
	local $ENV{PGHOST} = $node->host;
	local $ENV{PGPORT} = $node->port;
	for my $c (1 .. $nclients)
	{
		push @clients,
		  IPC::Run::start([ $client_script, $c, "$dir/ledger.$c", $stopfile, $rows_per_xact ],
			'<', \undef, '>', '/dev/null', '2>', "$dir/client.$c.err");
	}
}

# The acknowledged transactions: complete lines of the ledgers.
sub read_ledgers
{
	my @acked;
	for my $c (1 .. $nclients)
	{
		my $text = -e "$dir/ledger.$c" ? slurp_file("$dir/ledger.$c") : '';
		$text =~ s/[^\n]*\z//;    # a line still being written
		for my $line (split /\n/, $text)
		{
			die "unexpected ledger line \"$line\" of client $c" unless $line =~ /^\d+$/;
			push @acked, "$c\t$line";
		}
	}
	return \@acked;
}

sub wait_for_progress
{
	my ($min_new) = @_;
	my $before = scalar @{ read_ledgers() };
	for (1 .. 600)
	{
		return 1 if scalar @{ read_ledgers() } >= $before + $min_new;
		usleep(100_000);
	}
	return 0;
}

# Every acknowledged transaction is there, found both through the index and
# by a sequential scan; every transaction is whole; amcheck finds nothing.
sub verify
{
	my ($label, $heapallindexed) = @_;
	my $acked = read_ledgers();
	my $file = "$dir/acked.tsv";
	open my $out, '>', $file or die $!;
	print $out "$_\n" for @$acked;
	close $out;

	my $result = $node->safe_psql(
		'postgres', qq{
CREATE TEMP TABLE acked (client int, seq bigint);
\\copy acked FROM '$file'
SET enable_seqscan = off;
SELECT count(*) FROM acked a WHERE NOT EXISTS
  (SELECT 1 FROM ledger_rows r WHERE r.client = a.client AND r.seq = a.seq);
RESET enable_seqscan;
SET enable_indexscan = off; SET enable_bitmapscan = off;
SELECT count(*) FROM acked a WHERE NOT EXISTS
  (SELECT 1 FROM ledger_rows r WHERE r.client = a.client AND r.seq = a.seq);
RESET enable_indexscan; RESET enable_bitmapscan;
SELECT count(*) FROM (SELECT client, seq FROM ledger_rows GROUP BY 1, 2
                      HAVING count(*) % $rows_per_xact <> 0
                          OR count(DISTINCT part) <> $rows_per_xact) torn;
SELECT count(*) FROM ledger_counts c
  WHERE c.xacts * $rows_per_xact <> (SELECT count(*) FROM ledger_rows r WHERE r.client = c.client);
SELECT count(*) FROM acked;
});
	my ($missing_idx, $missing_seq, $torn, $mismatch, $n) = split /\n/, $result;
	is($missing_idx, 0, "$label: all $n acknowledged commits present (index scan)");
	is($missing_seq, 0, "$label: all acknowledged commits present (sequential scan)");
	is($torn, 0, "$label: no transaction partly present");
	is($mismatch, 0, "$label: counter updates and inserted rows agree");

	# amcheck over every permanent table and B-tree index of the database,
	# the catalogs included
	my $heap = $node->safe_psql(
		'postgres', q{
SELECT count(*) FROM pg_class c, LATERAL verify_heapam(c.oid) v
WHERE c.relkind IN ('r', 'm', 't') AND c.relpersistence = 'p'});
	is($heap, 0, "$label: verify_heapam reports nothing");
	my ($ret, $stdout, $stderr) = $node->psql(
		'postgres', qq{
SELECT count(bt_index_check(c.oid, $heapallindexed))
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
JOIN pg_am am ON am.oid = c.relam
WHERE am.amname = 'btree' AND c.relpersistence = 'p' AND i.indisready AND i.indisvalid});
	ok($ret == 0 && $stdout > 0 && $stderr eq '',
		"$label: bt_index_check reports nothing on $stdout indexes")
	  or diag("bt_index_check: $stderr");
	return scalar @$acked;
}

# A process's state letter and parent PID, from /proc (procps may be
# missing); empty if there is no such process.
sub proc_state_and_parent
{
	my ($pid) = @_;
	open my $fh, '<', "/proc/$pid/stat" or return;
	my $line = <$fh>;
	close $fh;
	return defined $line && $line =~ /^\d+ \(.*\) (\S) (\d+) /s ? ($1, $2) : ();
}

# Whether a process still runs (a zombie that nobody reaped does not).
sub alive
{
	my ($state) = proc_state_and_parent(@_);
	return defined $state && $state ne 'Z' ? 1 : 0;
}

# The processes whose parent is $ppid.
sub children_of
{
	my ($ppid) = @_;
	return grep {
		my (undef, $parent) = proc_state_and_parent($_);
		defined $parent && $parent == $ppid
	} map { m{^/proc/(\d+)$} } glob '/proc/[0-9]*';
}

# Wait until the server answers again.  Not poll_query_until(), which feeds
# psql its query on stdin and dies of the broken pipe when psql gives up at
# once on a server that is still starting.
sub server_up
{
	local $ENV{PGCONNECT_TIMEOUT} = 10;
	for (1 .. 1800)
	{
		my ($stdout, $stderr) = ('', '');
		IPC::Run::run(
			[
				'psql', '-X', '-At', '-d', $node->connstr('postgres'), '-c',
				'SELECT insert_locks = 1024 AND NOT pg_is_in_recovery() FROM walscale_settings'
			],
			'<', \undef, '>', \$stdout, '2>', \$stderr);
		return 1 if $stdout eq "t\n";
		usleep(100_000);
	}
	return 0;
}

ok(wait_for_progress(20), 'the clients commit');

# 1. kill -9 of the postmaster: the other server processes follow it out
# (they notice that the postmaster is gone), then the server is started
# again and recovers from the crash.
my $survived_postmaster = 0;
for my $cycle (1 .. $postmaster_kills)
{
	my $label = "postmaster kill $cycle/$postmaster_kills";
	ok(wait_for_progress(20), "$label: load before the kill");
	my $pid = $node->{_pid};
	my @children = children_of($pid);
	my $log_offset = -s $node->logfile;
	$node->kill9;
	my $orphans = 1;
	for (1 .. 300)
	{
		$orphans = grep { alive($_) } @children;
		last if $orphans == 0;
		usleep(100_000);
	}
	is($orphans, 0, "$label: the other server processes exited");
	cmp_ok(scalar @children, '>=', 5, "$label: there were server processes to follow");
	kill 'KILL', @children if $orphans;    # so that the next cycles can go on

	# The killed postmaster must also be reaped by init: until then its PID
	# answers kill(pid, 0), and the new postmaster would take the lock file
	# for a live one's.  An init that never reaps gets the lock file removed,
	# as an administrator would.
	my $reaped = 0;
	for (1 .. 600)
	{
		$reaped = !-e "/proc/$pid";
		last if $reaped;
		usleep(50_000);
	}
	unlink $node->data_dir . '/postmaster.pid' unless $reaped;
	$node->start;
	ok(server_up(), "$label: the server is up again");
	like(slurp_file($node->logfile, $log_offset),
		qr/database system was interrupted|database system was not properly shut down/,
		"$label: the restart recovered from the crash");
	my $n = verify($label, 'false');
	$survived_postmaster++ if $n > 0 && Test::More->builder->is_passing;
}

# 2. kill -9 of one backend: the postmaster ends every other process, resets
# shared memory (all 1024 locks with it) and recovers.  The backend killed
# is one that inserts and commits in a loop until it dies.  A ledger
# client's backend ends after 20 transactions, and a SIGKILL that reaches it
# between its exit and the postmaster's wait() does nothing: a CI run waited
# for a crash that never came.
sub start_victim
{
	my $stderr = '';
	my $h = IPC::Run::start(
		[
			'psql', '-X', '-q',
			'-d' => $node->connstr('postgres') . ' application_name=walscale_victim',
			'-c' => q{DO $$ BEGIN LOOP
			  INSERT INTO victim_rows
			    SELECT g, repeat(md5(g::text), 10) FROM generate_series(1, 10) g;
			  COMMIT; END LOOP; END $$}
		],
		'<', \undef, '>', '/dev/null', '2>', \$stderr);
	my $victim_query = q{FROM pg_stat_activity
	  WHERE application_name = 'walscale_victim' AND state = 'active'};
	$node->poll_query_until('postgres', "SELECT count(*) = 1 $victim_query")
	  or die "the backend to kill did not start";
	return ($h, $node->safe_psql('postgres', "SELECT pid $victim_query"));
}

my $survived_backend = 0;
for my $cycle (1 .. $backend_kills)
{
	my $label = "backend kill $cycle/$backend_kills";
	ok(wait_for_progress(20), "$label: load before the kill");
	my $postmaster = $node->{_pid};
	my $log_offset = -s $node->logfile;
	my ($victim_psql, $victim) = start_victim();
	usleep(200_000);    # into its stream of commits
	my (undef, $parent) = proc_state_and_parent($victim);
	my $runs = alive($victim) && $parent == $postmaster;
	ok($runs, "$label: the backend to kill runs, a child of the postmaster")
	  or die "$label: no backend to kill";
	ok(kill('KILL', $victim), "$label: a client backend was killed");
	ok( $node->wait_for_log(
			qr/client backend \(PID $victim\) was terminated by signal 9/, $log_offset),
		"$label: the postmaster saw its backend killed");
	eval { $victim_psql->finish; };    # psql lost its connection
	ok( $node->wait_for_log(
			qr/all server processes terminated; reinitializing/, $log_offset),
		"$label: the postmaster reinitializes");
	ok(server_up(), "$label: the server is up again");
	is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time() IS NOT NULL'),
		't', "$label: queries run");
	is(`head -n 1 ${\ $node->data_dir}/postmaster.pid` + 0,
		$postmaster, "$label: the same postmaster");
	my $n = verify($label, 'false');
	$survived_backend++ if $n > 0 && Test::More->builder->is_passing;
}

# stop the clients, then a last, thorough check
ok(wait_for_progress(20), 'the clients commit after the last restart');
open my $stop, '>', $stopfile or die $!;
close $stop;
$_->finish for @clients;
my $total = verify('after all cycles', 'true');
cmp_ok($total, '>', ($postmaster_kills + $backend_kills) * 20,
	"$total acknowledged commits were checked");
my $stats = $node->safe_psql('postgres',
	q{SELECT count(*) FILTER (WHERE acquisitions > 0) || ' locks used, '
	  || min(exclusive_acquisitions) || ' all-locks acquisitions'
	  FROM walscale_stats});
is($survived_postmaster, $postmaster_kills, "$postmaster_kills postmaster kill -9 cycles survived");
is($survived_backend, $backend_kills, "$backend_kills backend kill -9 cycles survived");
diag("crash safety at 1024 locks, 3 attempts: survived $survived_postmaster of $postmaster_kills "
	  . "postmaster kills and $survived_backend of $backend_kills backend kills; "
	  . "$total acknowledged commits all present; since the last restart $stats");

$node->stop;
done_testing();
