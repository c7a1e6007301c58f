
# Copyright (c) 2026, walscale developers

# What a crash test under load needs besides WalscaleTest: clients that keep
# a ledger of the commits the server acknowledged, the checks of that ledger
# and of amcheck after a crash, a kill -9 of the postmaster that waits for
# its children, and a check that pg_waldump reads the whole WAL.
#
# t/101_crash_safety.pl, t/106_resize_storm.pl and t/008_auto.pl use it.

package WalscaleStorm;

use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

our @EXPORT = qw(ledger_start ledger_pause ledger_resume ledger_stop
  ledger_read ledger_wait_for_progress ledger_verify ledger_client_errors
  crash_postmaster process_is_child_of server_up lsn_value wal_dump
  wal_read_through resize_log_lines);

# Every ledger started, so that its clients stop however the test ends: they
# would otherwise go on trying to connect for ever.
my @ledgers;

END
{
	for my $l (@ledgers)
	{
		next unless @{ $l->{handles} };
		open my $fh, '>', $l->{stop};
		close $fh if $fh;
		for my $h (@{ $l->{handles} })
		{
			eval { $h->kill_kill(grace => 5); };
		}
	}
}

# Start $clients ledger clients against $node, each committing transactions
# of $rows rows (about 700 bytes each) into ledger_rows and a counter update
# in ledger_counts, which ledger_start creates (with amcheck).  One client:
# psql sessions of 20 transactions each, one \echo of the transaction's
# number to the client's ledger after each COMMIT that came back; a lost
# connection ends the session, and the next one starts after the last number
# acknowledged.  A transaction that committed without its acknowledgement is
# then done again under the same number, which the checks allow for.  While
# the pause file exists, a client starts no new session.
sub ledger_start
{
	my ($node, %opts) = @_;
	my $l = {
		node => $node,
		clients => $opts{clients} // 8,
		rows => $opts{rows} // 5,
		dir => PostgreSQL::Test::Utils::tempdir,
		handles => [],
	};
	$l->{stop} = "$l->{dir}/stop";
	$l->{pause} = "$l->{dir}/pause";

	$node->safe_psql(
		'postgres', qq{
CREATE EXTENSION IF NOT EXISTS amcheck;
CREATE TABLE ledger_rows (client int NOT NULL, seq bigint NOT NULL,
                          part int NOT NULL, payload text NOT NULL);
CREATE INDEX ledger_rows_client_seq ON ledger_rows (client, seq);
CREATE INDEX ledger_rows_payload ON ledger_rows (md5(payload), part);
CREATE TABLE ledger_counts (client int PRIMARY KEY, xacts bigint NOT NULL);
INSERT INTO ledger_counts SELECT g, 0 FROM generate_series(1, $l->{clients}) g;
});

	my $script = "$l->{dir}/client.sh";
	open my $fh, '>', $script or die $!;
	print $fh <<'SH';
#!/bin/bash
id=$1 ledger=$2 stop=$3 rows=$4 pause=$5
touch "$ledger"
while [ ! -e "$stop" ]; do
	while [ -e "$pause" ] && [ ! -e "$stop" ]; do sleep 0.1; done
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
	chmod 0755, $script;

	local $ENV{PGHOST} = $node->host;
	local $ENV{PGPORT} = $node->port;
	for my $c (1 .. $l->{clients})
	{
		push @{ $l->{handles} },
		  IPC::Run::start(
			[
				$script, $c, "$l->{dir}/ledger.$c", $l->{stop}, $l->{rows},
				$l->{pause}
			],
			'<', \undef, '>', '/dev/null', '2>', "$l->{dir}/client.$c.err");
	}
	push @ledgers, $l;
	return $l;
}

sub ledger_pause
{
	my ($l) = @_;
	open my $fh, '>', $l->{pause} or die $!;
	close $fh;
	return;
}

sub ledger_resume
{
	my ($l) = @_;
	unlink $l->{pause};
	return;
}

# Stop the clients and wait for them.
sub ledger_stop
{
	my ($l) = @_;
	open my $fh, '>', $l->{stop} or die $!;
	close $fh;
	$_->finish for @{ $l->{handles} };
	$l->{handles} = [];
	return;
}

# The acknowledged transactions, "client\tseq": complete lines of the
# ledgers.
sub ledger_read
{
	my ($l) = @_;
	my @acked;
	for my $c (1 .. $l->{clients})
	{
		my $f = "$l->{dir}/ledger.$c";
		my $text = -e $f ? slurp_file($f) : '';
		$text =~ s/[^\n]*\z//;    # a line still being written
		for my $line (split /\n/, $text)
		{
			die "unexpected ledger line \"$line\" of client $c"
			  unless $line =~ /^\d+$/;
			push @acked, "$c\t$line";
		}
	}
	return \@acked;
}

# Wait (up to a minute) for $min_new more acknowledged commits.
sub ledger_wait_for_progress
{
	my ($l, $min_new) = @_;
	my $before = scalar @{ ledger_read($l) };
	for (1 .. 600)
	{
		return 1 if scalar @{ ledger_read($l) } >= $before + $min_new;
		usleep(100_000);
	}
	return 0;
}

# What the clients' psql wrote to stderr that is an error of a statement
# (ERROR, PANIC), not the loss of a connection or a refused one: the lines,
# each prefixed with its client.
sub ledger_client_errors
{
	my ($l) = @_;
	my @errors;
	for my $c (1 .. $l->{clients})
	{
		my $f = "$l->{dir}/ledger.$c.err";
		next unless -e $f;
		push @errors, map { "client $c: $_" }
		  grep { /\b(?:ERROR|PANIC):/ } split /\n/, slurp_file($f);
	}
	return @errors;
}

# Every acknowledged transaction is there, found both through the index and
# by a sequential scan; every transaction is whole; amcheck (verify_heapam,
# bt_index_check with $heapallindexed) finds nothing in any permanent table
# or B-tree index of the database, the catalogs included.  Returns the
# number of acknowledged commits checked.
sub ledger_verify
{
	my ($l, $label, $heapallindexed) = @_;
	my $node = $l->{node};
	my $rows = $l->{rows};
	my $acked = ledger_read($l);
	my $file = "$l->{dir}/acked.tsv";
	open my $out, '>', $file or die $!;
	print $out "$_\n" for @$acked;
	close $out;

	local $Test::Builder::Level = $Test::Builder::Level + 1;
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
                      HAVING count(*) % $rows <> 0
                          OR count(DISTINCT part) <> $rows) torn;
SELECT count(*) FROM ledger_counts c
  WHERE c.xacts * $rows <> (SELECT count(*) FROM ledger_rows r WHERE r.client = c.client);
SELECT count(*) FROM acked;
});
	my ($missing_idx, $missing_seq, $torn, $mismatch, $n) = split /\n/,
	  $result;
	is($missing_idx, 0,
		"$label: all $n acknowledged commits present (index scan)");
	is($missing_seq, 0,
		"$label: all acknowledged commits present (sequential scan)");
	is($torn, 0, "$label: no transaction partly present");
	is($mismatch, 0, "$label: counter updates and inserted rows agree");
	if ($missing_idx ne '0' || $missing_seq ne '0')
	{
		# the details of a lost commit, for the report
		diag($node->safe_psql(
				'postgres', qq{
CREATE TEMP TABLE acked (client int, seq bigint);
\\copy acked FROM '$file'
SELECT 'missing: client ' || client || ' seq ' || seq
       || ' (client has ' || (SELECT count(DISTINCT r.seq) FROM ledger_rows r WHERE r.client = a.client)
       || ' seqs, max ' || (SELECT max(r.seq) FROM ledger_rows r WHERE r.client = a.client) || ')'
FROM acked a WHERE NOT EXISTS
  (SELECT 1 FROM ledger_rows r WHERE r.client = a.client AND r.seq = a.seq)
ORDER BY client, seq LIMIT 20}));
	}

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
sub _proc_state_and_parent
{
	my ($pid) = @_;
	open my $fh, '<', "/proc/$pid/stat" or return;
	my $line = <$fh>;
	close $fh;
	return defined $line && $line =~ /^\d+ \(.*\) (\S) (\d+) /s
	  ? ($1, $2)
	  : ();
}

# Whether a process still runs (a zombie that nobody reaped does not).
sub _alive
{
	my ($state) = _proc_state_and_parent(@_);
	return defined $state && $state ne 'Z' ? 1 : 0;
}

# Whether $pid runs (not a zombie) and is a child of $ppid.
sub process_is_child_of
{
	my ($pid, $ppid) = @_;
	my ($state, $parent) = _proc_state_and_parent($pid);
	return defined $state && $state ne 'Z' && $parent == $ppid ? 1 : 0;
}

sub _children_of
{
	my ($ppid) = @_;
	return grep {
		my (undef, $parent) = _proc_state_and_parent($_);
		defined $parent && $parent == $ppid
	} map { m{^/proc/(\d+)$} } glob '/proc/[0-9]*';
}

# kill -9 of the postmaster: the other server processes follow it out (they
# notice that the postmaster is gone); wait for them, and for the killed
# postmaster to be reaped, so that the node can be started again.  Returns
# the number of server processes there were besides the postmaster.
sub crash_postmaster
{
	my ($node, $label) = @_;
	my $pid = $node->{_pid};
	my @children = _children_of($pid);
	$node->kill9;
	my $orphans = 1;
	for (1 .. 300)
	{
		$orphans = grep { _alive($_) } @children;
		last if $orphans == 0;
		usleep(100_000);
	}
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	is($orphans, 0, "$label: the other server processes exited");
	kill 'KILL', @children if $orphans;    # so that the test can go on

	# Until init reaps the killed postmaster its PID answers kill(pid, 0),
	# and the new postmaster would take the lock file for a live one's.  An
	# init that never reaps gets the lock file removed, as an administrator
	# would.
	my $reaped = 0;
	for (1 .. 600)
	{
		$reaped = !-e "/proc/$pid";
		last if $reaped;
		usleep(50_000);
	}
	unlink $node->data_dir . '/postmaster.pid' unless $reaped;
	return scalar @children;
}

# Wait until the server answers a query that returns "t" (default: that it
# is out of recovery).  Not poll_query_until(), which feeds psql its query
# on stdin and dies of the broken pipe when psql gives up at once on a
# server that is still starting.
sub server_up
{
	my ($node, $query) = @_;
	$query //= 'SELECT NOT pg_is_in_recovery()';
	local $ENV{PGCONNECT_TIMEOUT} = 10;
	for (1 .. 1800)
	{
		my ($stdout, $stderr) = ('', '');
		IPC::Run::run(
			[
				'psql', '-X', '-At', '-d', $node->connstr('postgres'),
				'-c', $query
			],
			'<', \undef, '>', \$stdout, '2>', \$stderr);
		return 1 if $stdout eq "t\n";
		usleep(100_000);
	}
	return 0;
}

# An LSN "X/Y" as a number.
sub lsn_value
{
	my ($lsn) = @_;
	die "not an LSN: $lsn" unless $lsn =~ m{^([0-9A-Fa-f]+)/([0-9A-Fa-f]+)$};
	return hex($1) * 2**32 + hex($2);
}

# pg_waldump, from the server's own bindir, over the WAL in pg_wal of a
# stopped (crashed) server, from the first segment there on, with --stats.
# It reads until a record cannot be read: at the true end of the WAL (an
# invalid record length, a stale page of a recycled segment...), or at a
# corruption in the middle, which the caller tells apart by comparing where
# it stopped with where recovery ended (see wal_read_through).  --end is the
# start of the segment after the last file, so that it never stops for a
# missing file, and prints its figures whatever the end.  Returns a hash:
# first (segment), end (the end of the last record read, "X/Y"), records,
# bytes, error (what it said when it stopped), exit (its status).
sub wal_dump
{
	my ($node) = @_;
	my $bindir = $node->config_data('--bindir');
	my $pg_wal = $node->data_dir . '/pg_wal';
	opendir my $dh, $pg_wal or die "could not open $pg_wal: $!";
	my @segments = sort grep { /^[0-9A-F]{24}$/ } readdir $dh;
	closedir $dh;
	return { first => '(none)', error => 'no WAL segment in pg_wal' }
	  unless @segments;

	# the segment size is the size of any segment file
	my $segsize = -s "$pg_wal/$segments[0]";
	my $segment_start = sub {
		my ($name, $next) = @_;
		my ($log, $seg) = $name =~ /^.{8}(.{8})(.{8})$/;
		my $lsn = (hex($log) * (2**32 / $segsize) + hex($seg) + $next) * $segsize;
		return sprintf('%X/%X', int($lsn / 2**32), $lsn % 2**32);
	};
	my $timeline = hex(substr($segments[0], 0, 8));

	my ($stdout, $stderr) = ('', '');
	IPC::Run::run(
		[
			"$bindir/pg_waldump", '--path' => $pg_wal,
			'--timeline' => $timeline,
			'--start' => $segment_start->($segments[0], 0),
			'--end' => $segment_start->($segments[-1], 1),
			'--stats'
		],
		'<', \undef, '>', \$stdout, '2>', \$stderr);
	my %r = (
		first => $segments[0],
		last => $segments[-1],
		exit => $? >> 8,
		error => $stderr);
	($r{end}) = $stdout =~ m{^WAL statistics between \S+ and (\S+):}m;

	# "Total  N  RECORD_BYTES [%]  FPI_BYTES [%]  ALL_BYTES [100%]"
	if ($stdout =~ /^Total\s(.*)$/m)
	{
		(my $totals = $1) =~ s/\[[^\]]*\]//g;
		($r{records}, undef, undef, $r{bytes}) = split ' ', $totals;
	}
	return \%r;
}

# After the restart: the pg_waldump run of wal_dump() on the crashed WAL
# read every record recovery replayed, the last one too (its end is past
# $redo_done, "redo done at" of the log), and none beyond where recovery
# ended ($recovery_end: the redo point of the end-of-recovery checkpoint, or
# of a later one), or recovery would have left records out.
sub wal_read_through
{
	my ($dump, $label, $redo_done, $recovery_end) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $ok = defined $dump->{end}
	  && defined $redo_done
	  && lsn_value($dump->{end}) > lsn_value($redo_done)
	  && lsn_value($dump->{end}) <= lsn_value($recovery_end);
	ok($ok,
		"$label: pg_waldump read the crashed WAL from $dump->{first} through the last record replayed ("
		  . ($dump->{records} // 0)
		  . ' records to '
		  . ($dump->{end} // '?')
		  . ', redo done at '
		  . ($redo_done // '?')
		  . ", recovery ended by $recovery_end)")
	  or diag("pg_waldump (exit $dump->{exit}): $dump->{error}");
	return $ok;
}

# walscale's lines for the resizes it applied, in the order of the log
# text: [from, to, held_ms, waited_ms] each.
sub resize_log_lines
{
	my ($text) = @_;
	my @lines;
	while ($text =~
		/walscale: WAL insertion locks resized from (\d+) to (\d+); all locks held for ([\d.]+) ms after waiting ([\d.]+) ms for them/g
	  )
	{
		push @lines, [ $1, $2, $3, $4 ];
	}
	return @lines;
}

1;
