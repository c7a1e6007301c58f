
# Copyright (c) 2026, walscale developers

# What more than one TAP file needs: a time limit, queries over
# walscale_stats, pgbench load in the background, and C unit programs built
# with the tested server's compiler.

package WalscaleTest;

use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use File::Basename qw(dirname);
use FindBin;
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;
use Text::ParseWords qw(shellwords);

# Test::More's TODO, read from this package by the ok() of run_unit_program
our $TODO;

our @EXPORT =
  qw(write_case_conf stats_summary_query inconsistent_locks_query reset_while_idle
  start_pgbench finish_pgbench run_unit_program tested_pg_major
  no_fastpath_groups);

# A file that hangs must fail, not stall the whole run until CI gives up (one
# CI run sat 75 minutes in t/101): WALSCALE_TEST_TIME_LIMIT seconds (default
# 900) after it starts, a file that uses this module dies, and the END
# blocks of PostgreSQL::Test::Cluster stop its servers.
my $time_limit = $ENV{WALSCALE_TEST_TIME_LIMIT} // 900;
die "WALSCALE_TEST_TIME_LIMIT must be a positive number of seconds"
  unless $time_limit =~ /^[1-9]\d*$/;
$SIG{ALRM} = sub { die "time limit of $time_limit s reached\n"; };
alarm($time_limit);

# The major version of the PostgreSQL the TAP files run against, 17 or 18:
# that of the first pg_config in PATH, where make installcheck puts the
# tested server's.
my $tested_pg_major;

sub tested_pg_major
{
	return $tested_pg_major if defined $tested_pg_major;
	my ($out) = run_command([ 'pg_config', '--version' ]);
	$out =~ /PostgreSQL (\d+)/ or die "pg_config --version said \"$out\"";
	$tested_pg_major = $1;
	return $tested_pg_major;
}

# Why the tested server has no fast-path lock groups to size, where it has
# none (PostgreSQL 17, walscale_compat.h), for the tests of them to skip
# with; undef on 18.
sub no_fastpath_groups
{
	return tested_pg_major() >= 18
	  ? undef
	  : 'PostgreSQL 17 has 16 fixed fast-path slots per backend and no fast-path lock groups';
}

# Write walscale_case.conf, which the node's postgresql.conf includes: the
# number of insertion locks and of attempts for the next start or reload
# (undef: the setting's default).
sub write_case_conf
{
	my ($node, $locks, $attempts) = @_;
	my $file = $node->data_dir . '/walscale_case.conf';

	open my $fh, '>', $file or die "could not write \"$file\": $!";
	print $fh "walscale.insert_locks = $locks\n" if defined $locks;
	print $fh "walscale.insert_lock_attempts = $attempts\n"
	  if defined $attempts;
	close $fh;
	return;
}

# All locks' counters in one line, for the test log.
sub stats_summary_query
{
	return q{
SELECT 'locks ' || count(*) || ', acquisitions ' || sum(acquisitions)
       || ', first_try ' || sum(first_try)
       || ', failed_attempts ' || sum(failed_attempts)
       || ', blocking_waits ' || sum(blocking_waits)
       || ', blocked_ms ' || round(sum(blocked_ms)::numeric, 1)
       || ', exclusive ' || min(exclusive_acquisitions)
       || ', flush_waits ' || sum(flush_waits)
FROM walscale_stats};
}

# The number of locks whose counters contradict one another, for a server
# at walscale.insert_lock_attempts = $attempts with $locks insertion locks
# since the last reset ($locks: the number of rows of walscale_stats when
# not given).  An acquisition is a first try or a contended one, and only a
# contended one can sleep; a sleep is timed, and time is only counted for a
# sleep.  The attempts in effect are min($attempts, $locks - 1), each on a
# different lock: with none, no attempt fails and every contended
# acquisition slept (PostgreSQL's own LWLockAcquire); with some, each
# contended acquisition failed at least one attempt (its preferred lock) and
# at most that many.
sub inconsistent_locks_query
{
	my ($attempts, $locks) = @_;

	die "attempts must be a non-negative integer"
	  unless defined $attempts && $attempts =~ /^\d+$/;
	die "locks must be a positive integer"
	  if defined $locks && $locks !~ /^[1-9]\d*$/;
	my $effective =
	  defined $locks
	  ? ($attempts < $locks - 1 ? $attempts : $locks - 1)
	  : "least($attempts, (SELECT count(*) FROM walscale_stats) - 1)";
	return qq{
SELECT count(*) FROM walscale_stats
WHERE acquisitions < 0 OR first_try < 0 OR failed_attempts < 0
   OR blocking_waits < 0 OR blocked_ms < 0 OR exclusive_acquisitions < 0
   OR flush_waits < 0
   OR acquisitions - first_try < 0
   OR blocking_waits > acquisitions - first_try
   OR (blocking_waits = 0) <> (blocked_ms = 0)
   OR CASE WHEN $effective = 0
           THEN failed_attempts <> 0
                OR blocking_waits <> acquisitions - first_try
           ELSE failed_attempts NOT BETWEEN acquisitions - first_try
                AND (acquisitions - first_try) * $effective
      END};
}

# The counters of all locks summed (exclusive_acquisitions: its minimum
# over the locks), and the number of locks with any counter not zero, as
# "name=value" pairs in one line.
my $counters_query = q{
SELECT 'acquisitions=' || sum(acquisitions)
       || ' first_try=' || sum(first_try)
       || ' contended=' || sum(acquisitions - first_try)
       || ' failed_attempts=' || sum(failed_attempts)
       || ' blocking_waits=' || sum(blocking_waits)
       || ' blocked_ms=' || sum(blocked_ms)
       || ' exclusive_acquisitions=' || min(exclusive_acquisitions)
       || ' flush_waits=' || sum(flush_waits)
       || ' nonzero_locks=' || count(*) FILTER (WHERE
            acquisitions <> 0 OR first_try <> 0 OR failed_attempts <> 0
            OR blocking_waits <> 0 OR blocked_ms <> 0
            OR exclusive_acquisitions <> 0 OR flush_waits <> 0)
FROM walscale_stats};

sub _parse_counters
{
	my ($line) = @_;
	my %c = map { split /=/, $_, 2 } split / /, $line;
	return \%c;
}

# With the server idle, reset and read every counter right after, in one
# session: after a CHECKPOINT (so that every lock has been taken exclusively
# since the last reset, and no checkpoint is under way), the same query
# before and after the reset, so that the session finds its catalog entries
# cached and writes no WAL in between.  Returns the counters before and
# after the reset, as hashes of counter name => value (with nonzero_locks:
# the locks with any counter not zero), and the time the reset returned.
# Only a server with nothing else writing WAL (autovacuum = off, no
# checkpoint due, no load) may be expected to read all zeros after it.
sub reset_while_idle
{
	my ($node) = @_;

	my $out = $node->safe_psql(
		'postgres', qq{
CHECKPOINT;
$counters_query;
SELECT 'reset_at=' || walscale_reset();
$counters_query;
});
	my @lines = split /\n/, $out;
	die "unexpected output: $out" unless @lines == 3;
	my ($reset_at) = $lines[1] =~ /^reset_at=(.*)$/;
	return (_parse_counters($lines[0]), _parse_counters($lines[2]),
		$reset_at);
}

# Start pgbench in the background against $node: $clients clients for
# $seconds seconds, @workload naming what they run (--file, --builtin).
# Returns the run for finish_pgbench; $run->{handle} is its IPC::Run handle,
# to pump while the test does other work.
sub start_pgbench
{
	my ($node, $clients, $seconds, @workload) = @_;
	my $run = { out => '', err => '' };

	$run->{handle} = IPC::Run::start(
		[
			'pgbench', '--no-vacuum',
			'--client' => $clients,
			'--jobs' => ($clients < 4 ? $clients : 4),
			'--time' => $seconds,
			@workload,
			'--host' => $node->host,
			'--port' => $node->port,
			'postgres'
		],
		'<' => \undef,
		'>' => \$run->{out},
		'2>' => \$run->{err},
		IPC::Run::timeout(
			$seconds + $PostgreSQL::Test::Utils::timeout_default));
	return $run;
}

# Wait for a run of start_pgbench to end: it must exit with status 0 and
# have no failed transaction.  Returns the transactions it processed.
sub finish_pgbench
{
	my ($run, $name) = @_;

	$run->{handle}->finish;
	is($run->{handle}->result(0), 0, "$name: pgbench exits with status 0")
	  or diag($run->{err});
	like(
		$run->{out},
		qr/number of failed transactions: 0 /,
		"$name: pgbench has no failed transactions");
	my ($processed) =
	  $run->{out} =~ /transactions actually processed: (\d+)/;
	return $processed // 0;
}

# Build a C unit program of t/unit with the compiler and flags of the
# server under test (make installcheck puts its bindir first in PATH; a
# PG_CONFIG given to make is in the environment) and walscale's sources
# given, relative to the repository (or other files, by absolute path), and
# libm; run it, and turn each of its
# TAP lines into a test of this file, its comments into diagnostics.  It
# needs no server.
sub run_unit_program
{
	my ($program, @sources) = @_;
	my $repo = dirname($FindBin::RealBin);
	my $pg_config = $ENV{PG_CONFIG} // 'pg_config';
	my $words = sub {
		my ($option) = @_;
		my ($out, $err);
		IPC::Run::run([ $pg_config, $option ], '>' => \$out, '2>' => \$err)
		  or BAIL_OUT("$pg_config $option failed: $err");
		chomp $out;
		return shellwords($out);
	};
	my ($includedir_server) = $words->('--includedir-server');
	my ($libdir) = $words->('--libdir');
	my $dir = PostgreSQL::Test::Utils::tempdir($program);
	my $binary = "$dir/$program";
	my @build = (
		$words->('--cc'), $words->('--cflags'),
		$words->('--cppflags'), '-DFRONTEND',
		"-I$repo", "-I$includedir_server",
		'-o' => $binary,
		"$repo/t/unit/$program.c", map({ m{^/} ? $_ : "$repo/$_" } @sources),
		"-L$libdir", $words->('--ldflags'),
		# -lpgcommon -lpgport among them: c.h makes printf pg_printf
		$words->('--libs'), '-lm');
	note(join(' ', @build));

	my ($out, $err) = ('', '');
	my $built = IPC::Run::run(
		\@build,
		'>' => \$out,
		'2>' => \$err,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	diag("compiler output:\n$out$err") if $out ne '' || $err ne '';
	ok($built, "$program.c builds with the server's compiler and flags");
	return unless $built;

	# The programs only compute: a loop that never ends is caught by a limit
	# on CPU time, which a loaded machine does not shorten as it does a limit
	# on wall time (t/020's grid takes about a minute of CPU, and more than
	# three minutes of wall time at a load average of 15 on two cores).  The
	# wall limit only backs it up.
	my $cpu_limit = $PostgreSQL::Test::Utils::timeout_default;
	($out, $err) = ('', '');
	IPC::Run::run(
		[ 'sh', '-c', 'ulimit -t "$1" && exec "$2"', 'sh', $cpu_limit, $binary ],
		'>' => \$out,
		'2>' => \$err,
		IPC::Run::timeout(10 * $cpu_limit));
	my $status = $?;

	my ($planned, $results) = (undef, 0);
	for my $line (split /\n/, $out)
	{
		if ($line =~ /^(not )?ok (\d+)(?: - (.*?))?(?: # TODO (.*))?$/)
		{
			$results++;
			# a TODO line is a known shortfall: reported, and not a failure
			local $TODO = $4;
			ok(!defined $1, 'unit: ' . ($3 // "test $2"));
		}
		elsif ($line =~ /^1\.\.(\d+)$/)
		{
			$planned = $1;
		}
		elsif ($line =~ /^#/)
		{
			diag($line);
		}
		else
		{
			diag("unexpected output: $line");
		}
	}
	diag($err) if $err ne '';
	is($results, $planned // -1, "$program ran the tests of its plan");
	is($status, 0, "$program exits with status 0");
	return;
}

1;
