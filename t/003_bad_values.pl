
# Copyright (c) 2026, walscale developers

# Bad values for walscale's settings: in postgresql.conf they must stop the
# server from starting, naming the parameter; in SET and ALTER SYSTEM they
# must be refused while the server keeps running; on a reload they must
# leave the value in effect as it was.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;

my $node = PostgreSQL::Test::Cluster->new('bad_values');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'walscale'
include = 'walscale_case.conf'
});

# Write the walscale settings into the file postgresql.conf includes.
sub set_walscale_conf
{
	my (%settings) = @_;
	my $file = $node->data_dir . '/walscale_case.conf';

	open my $fh, '>', $file or die "could not write \"$file\": $!";
	foreach my $setting (sort keys %settings)
	{
		print $fh "walscale.$setting = '$settings{$setting}'\n";
	}
	close $fh;
	return;
}

# PostgreSQL's messages for a value that does not parse, fails a check hook,
# or is out of range, all naming the parameter.
sub bad_value_message
{
	my ($setting) = @_;
	return
	  qr/(?:invalid value for parameter|\S+ is outside the valid range for parameter) "walscale\.$setting"/;
}

my %bad_values = (
	insert_locks => [ '0', '1025', '-5', 'abc', '' ],
	fastpath_groups => [ '3', '2048', '-1', 'x' ],
	insert_lock_attempts => [ '-1', '17', 'x' ],);

# 1. a bad value in postgresql.conf stops the server from starting
foreach my $setting (sort keys %bad_values)
{
	foreach my $value (@{ $bad_values{$setting} })
	{
		my $name = "postgresql.conf: walscale.$setting = '$value'";
		my $log_offset = -s $node->logfile // 0;

		set_walscale_conf($setting => $value);
		my $started = $node->start(fail_ok => 1);
		ok(!$started, "$name: server refuses to start");

		my $log = slurp_file($node->logfile, $log_offset);
		like(
			$log,
			qr/(?:FATAL|ERROR):\s+@{[ bad_value_message($setting) ]}/,
			"$name: the log names the parameter at FATAL");

		# if it started after all, stop it so that the next case can start
		$node->stop if $started;
	}
}

# 2. a good configuration starts
set_walscale_conf(
	insert_locks => 16,
	insert_lock_attempts => 2,
	fastpath_groups => 2);
ok($node->start(fail_ok => 1), 'good configuration: server starts');
$node->safe_psql('postgres', 'CREATE EXTENSION walscale');
is( $node->safe_psql(
		'postgres', q{
SELECT insert_locks, insert_lock_attempts, fastpath_groups,
       fastpath_groups_source
FROM walscale_settings}),
	# PostgreSQL 17 accepts the fast-path groups and has none to size
	no_fastpath_groups()
	? '16|2||none: fixed fast-path slots'
	: '16|2|2|walscale.fastpath_groups',
	'good configuration: walscale_settings reports it');

# 3. SET cannot change what is fixed at server start, nor what a reload sets
{
	my ($stdout, $stderr);
	my $ret = $node->psql(
		'postgres', "SET walscale.fastpath_groups = 4",
		stdout => \$stdout,
		stderr => \$stderr);
	isnt($ret, 0, "SET walscale.fastpath_groups fails");
	like(
		$stderr,
		qr/parameter "walscale\.fastpath_groups" cannot be changed without restarting the server/,
		"SET walscale.fastpath_groups: needs a restart");
}
foreach my $setting ('insert_locks', 'insert_lock_attempts')
{
	my ($stdout, $stderr);
	my $ret = $node->psql(
		'postgres', "SET walscale.$setting = 1",
		stdout => \$stdout,
		stderr => \$stderr);
	isnt($ret, 0, "SET walscale.$setting fails");
	like(
		$stderr,
		qr/parameter "walscale\.$setting" cannot be changed now/,
		"SET walscale.$setting: only the configuration sets it");
}
{
	my ($stdout, $stderr);
	my $ret;

	$ret = $node->psql(
		'postgres', 'SET walscale.no_such_setting = 1',
		stdout => \$stdout,
		stderr => \$stderr);
	isnt($ret, 0, 'SET of an unknown walscale.* parameter fails');
	like(
		$stderr,
		qr/invalid configuration parameter name "walscale\.no_such_setting"/,
		'the walscale prefix is reserved');
}

# 4. ALTER SYSTEM refuses bad values, and the server keeps running
foreach my $setting (sort keys %bad_values)
{
	foreach my $value (@{ $bad_values{$setting} })
	{
		my $name = "ALTER SYSTEM SET walscale.$setting = '$value'";
		my ($stdout, $stderr);
		my $ret = $node->psql(
			'postgres', "ALTER SYSTEM SET walscale.$setting = '$value'",
			stdout => \$stdout,
			stderr => \$stderr);
		isnt($ret, 0, "$name: fails");
		like(
			$stderr,
			bad_value_message($setting),
			"$name: the error names the parameter");
		is($node->safe_psql('postgres', 'SELECT 1'),
			'1', "$name: the server still answers");
	}
}
unlike(slurp_file($node->data_dir . '/postgresql.auto.conf'),
	qr/walscale/, 'no bad value reached postgresql.auto.conf');

# 5. a good value for walscale.insert_locks takes effect on reload, applied
# by walscale's background worker, with no restart pending
$node->safe_psql('postgres',
	'ALTER SYSTEM SET walscale.insert_locks = 32; SELECT pg_reload_conf()');
ok( $node->poll_query_until(
		'postgres',
		'SELECT insert_locks || \'/\' || insert_locks_configured FROM walscale_settings',
		'32/32'),
	'ALTER SYSTEM SET walscale.insert_locks = 32: in effect after reload');
is( $node->safe_psql(
		'postgres',
		q{SELECT pending_restart FROM pg_settings WHERE name = 'walscale.insert_locks'}
	),
	'f',
	'ALTER SYSTEM SET walscale.insert_locks: no restart pending');
ok( $node->log_contains(
		qr/LOG:  walscale: WAL insertion locks resized from 16 to 32; all locks held for [0-9.]+ ms after waiting [0-9.]+ ms for them/
	),
	'the resize from 16 to 32 is logged, with how long all locks were held');

# A cancel has no statement to end in the worker: the same process goes on
# and applies the next reload (were the cancel to reach it, it would exit on
# its ERROR at once, and another process would apply the value 5 s later).
my $worker_query =
  "SELECT pid FROM pg_stat_activity WHERE backend_type = 'walscale'";
my $worker_pid = $node->safe_psql('postgres', $worker_query);
like($worker_pid, qr/^\d+$/, 'one walscale worker runs');
is($node->safe_psql('postgres', "SELECT pg_cancel_backend($worker_pid)"),
	't', 'pg_cancel_backend() signals the walscale worker');
$node->safe_psql('postgres',
	'ALTER SYSTEM RESET walscale.insert_locks; SELECT pg_reload_conf()');
ok( $node->poll_query_until(
		'postgres', 'SELECT insert_locks FROM walscale_settings', '16'),
	'ALTER SYSTEM RESET walscale.insert_locks: back to 16 after reload');
is($node->safe_psql('postgres', $worker_query),
	$worker_pid, 'the worker that was sent a cancel applied the reload');
ok( !$node->log_contains(qr/canceling statement due to user request/),
	'the cancel did not end the worker');

# 6. a bad value on reload is ignored, with the usual message, for both
# settings that a reload changes
foreach my $case ([ insert_lock_attempts => '17' ],
	[ insert_lock_attempts => 'x' ],
	[ insert_locks => '0' ],
	[ insert_locks => '1025' ],
	[ insert_locks => 'x' ])
{
	my ($setting, $value) = @$case;
	my $name = "reload with walscale.$setting = '$value'";
	my $log_offset = -s $node->logfile;

	set_walscale_conf(
		insert_locks => 16,
		insert_lock_attempts => 2,
		fastpath_groups => 2,
		$setting => $value);
	$node->safe_psql('postgres', 'SELECT pg_reload_conf()');
	ok($node->wait_for_log(bad_value_message($setting), $log_offset),
		"$name: the log names the parameter");
	is( $node->safe_psql(
			'postgres',
			'SELECT insert_locks, insert_locks_configured, insert_lock_attempts FROM walscale_settings'
		),
		'16|16|2',
		"$name: the old values stay in effect");
	is($node->safe_psql('postgres', "SHOW walscale.$setting"),
		$setting eq 'insert_locks' ? '16' : '2',
		"$name: SHOW reports the old value");
}

# and a good one takes effect, in new sessions, without a restart
set_walscale_conf(
	insert_locks => 16,
	insert_lock_attempts => 3,
	fastpath_groups => 2);
$node->safe_psql('postgres', 'SELECT pg_reload_conf()');
ok( $node->poll_query_until(
		'postgres', 'SELECT insert_lock_attempts FROM walscale_settings', '3'
	),
	'reload with walscale.insert_lock_attempts = 3: takes effect');
is( $node->safe_psql(
		'postgres', 'SELECT insert_locks FROM walscale_settings'),
	'16',
	'the lock count is unchanged');

unlike(
	slurp_file($node->logfile),
	qr/\bPANIC:|terminated by signal/,
	'no server process crashed');

$node->stop;

done_testing();
