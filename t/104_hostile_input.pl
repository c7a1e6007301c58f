
# Copyright (c) 2026, walscale developers

# Hostile input.  Every walscale setting at out-of-range, negative, huge,
# non-numeric and empty values, in postgresql.conf, on the command line,
# through SET and through ALTER SYSTEM; the library loaded without being
# preloaded; CREATE EXTENSION twice; DROP EXTENSION while the statistics are
# read; a non-superuser calling walscale_reset().  Each must get a clear error
# naming what is wrong, and the server must keep running, or refuse to start
# with a message that names the setting.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;

my %hostile = (
	insert_locks => [
		'0', '1025', '-2', '-2147483648', '2147483648',
		'99999999999999999999', '1e100', 'abc', '', ' ', '8kB', 'NaN', '8;',
		'1 2'
	],
	insert_lock_attempts => [
		'17', '-1', '-2147483649', '4294967296', '99999999999999999999',
		'abc', '', 'on', '3ms', 'Infinity'
	],
	fastpath_groups => [
		'3', '1000', '2048', '-1', '-1024', '2147483648',
		'99999999999999999999', 'abc', '', '0x', '3.4'
	],);
my $tried = 0;

# what PostgreSQL says about a value it refuses, naming the parameter
sub refusal
{
	my ($guc) = @_;
	return
	  qr/(?:invalid value for parameter|is outside the valid range for parameter) "walscale\.$guc"/;
}

my $node = PostgreSQL::Test::Cluster->new('hostile');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'walscale'
include_if_exists = 'hostile.conf'
});
my $hostile_conf = $node->data_dir . '/hostile.conf';

sub write_conf
{
	my ($text) = @_;
	open my $fh, '>', $hostile_conf or die $!;
	print $fh $text;
	close $fh;
}

sub quote_conf
{
	my ($v) = @_;
	$v =~ s/'/''/g;
	return "'$v'";
}

# 1. postgresql.conf: the server refuses to start and says which setting
for my $guc (sort keys %hostile)
{
	for my $value (@{ $hostile{$guc} })
	{
		my $label = "postgresql.conf walscale.$guc = '$value'";
		my $offset = -s $node->logfile // 0;
		write_conf("walscale.$guc = " . quote_conf($value) . "\n");
		my $started = $node->start(fail_ok => 1);
		ok(!$started, "$label: the server refuses to start");
		like(
			slurp_file($node->logfile, $offset),
			qr/(?:FATAL|ERROR):\s+.*@{[ refusal($guc) ]}/,
			"$label: the message names the setting");
		$node->stop if $started;
		$tried++;
	}
}

# an unquoted value that does not even parse as a configuration line
for
  my $line ("walscale.insert_locks = 16 16", "walscale.fastpath_groups = ''4")
{
	my $offset = -s $node->logfile // 0;
	write_conf("$line\n");
	my $started = $node->start(fail_ok => 1);
	ok(!$started, "postgresql.conf \"$line\": the server refuses to start");
	like(
		slurp_file($node->logfile, $offset),
		qr/syntax error in file ".*hostile\.conf" line 1/,
		"postgresql.conf \"$line\": the message names the file and line");
	$node->stop if $started;
	$tried++;
}

# the command line (postgres -c), which pg_ctl passes through
for my $case (
	[ 'insert_locks', '4096' ],
	[ 'fastpath_groups', '6' ],
	[ 'insert_lock_attempts', 'x' ])
{
	my ($guc, $value) = @$case;
	write_conf('');
	my ($stdout, $stderr);
	my $ok = IPC::Run::run(
		[
			'postgres', '-D', $node->data_dir, '-c',
			"walscale.$guc=$value", '-c', 'port=' . $node->port
		],
		'<',
		\undef,
		'>',
		\$stdout,
		'2>',
		\$stderr,
		IPC::Run::timeout(60));
	ok(!$ok, "postgres -c walscale.$guc=$value: refuses to start");
	like($stderr, refusal($guc),
		"postgres -c walscale.$guc=$value: the message names the setting");
	$tried++;
}

# a misspelt setting under the reserved prefix is dropped with a warning
# naming it, as for any extension that reserves its prefix
{
	my $offset = -s $node->logfile // 0;
	write_conf("walscale.insert_lock = 64\n");
	ok( $node->start(fail_ok => 1),
		'postgresql.conf walscale.insert_lock (misspelt): the server starts');
	like(
		slurp_file($node->logfile, $offset),
		qr/WARNING:\s+invalid configuration parameter name "walscale\.insert_lock", removing it/,
		'walscale.insert_lock (misspelt): a warning names it');
	$node->stop;
	$tried++;
}

# the largest values are accepted
write_conf(
	"walscale.insert_locks = 1024\nwalscale.insert_lock_attempts = 16\nwalscale.fastpath_groups = 1024\n"
);
ok($node->start(fail_ok => 1), 'the largest values start');
$node->safe_psql('postgres', 'CREATE EXTENSION walscale');
is( $node->safe_psql(
		'postgres',
		'SELECT insert_locks, insert_lock_attempts, fastpath_groups FROM walscale_settings'
	),
	# PostgreSQL 17 accepts 1024 groups, and has none
	no_fastpath_groups() ? '1024|16|' : '1024|16|1024',
	'walscale_settings reports the largest values');
my $pm_start =
  $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');

# run SQL that must fail: the error must match, and the server must still
# answer from the same postmaster
sub fails_like
{
	my ($sql, $re, $label, %opts) = @_;
	my ($stdout, $stderr);
	my $ret = $node->psql(
		$opts{db} // 'postgres', $sql,
		stdout => \$stdout,
		stderr => \$stderr,
		%{ $opts{connstr} ? { connstr => $opts{connstr} } : {} });
	isnt($ret, 0, "$label: fails");
	like($stderr, $re, "$label: clear error") or diag("stderr: $stderr");
	is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'),
		$pm_start, "$label: the server keeps running");
	$tried++;
}

# 2. SET: no walscale setting can be changed in a session, whatever the value
for my $guc (sort keys %hostile)
{
	for my $value (@{ $hostile{$guc} }, '4')
	{
		fails_like(
			"SET walscale.$guc = " . quote_conf($value),
			qr/parameter "walscale\.$guc" cannot be changed (?:now|without restarting the server)/,
			"SET walscale.$guc = '$value'");
	}
}
fails_like(
	"SET walscale.insert_locks TO DEFAULT",
	qr/parameter "walscale\.insert_locks" cannot be changed now/,
	'SET walscale.insert_locks TO DEFAULT');
fails_like(
	"SELECT set_config('walscale.insert_lock_attempts', '2', false)",
	qr/parameter "walscale\.insert_lock_attempts" cannot be changed now/,
	"set_config('walscale.insert_lock_attempts')");
fails_like(
	"SET walscale.bogus = 1",
	qr/invalid configuration parameter name "walscale\.bogus"/,
	'SET walscale.bogus');

# 3. ALTER SYSTEM: refused, postgresql.auto.conf untouched
for my $guc (sort keys %hostile)
{
	for my $value (@{ $hostile{$guc} })
	{
		fails_like("ALTER SYSTEM SET walscale.$guc = " . quote_conf($value),
			refusal($guc), "ALTER SYSTEM SET walscale.$guc = '$value'");
	}
}
fails_like(
	"ALTER SYSTEM SET walscale.bogus = 1",
	qr/invalid configuration parameter name "walscale\.bogus"/,
	'ALTER SYSTEM SET walscale.bogus');
unlike(slurp_file($node->data_dir . '/postgresql.auto.conf'),
	qr/walscale/, 'no hostile value reached postgresql.auto.conf');

# 4. a reload with hostile values: logged with the setting's name, the
# values in effect stay, the server keeps running
for my $guc (sort keys %hostile)
{
	my $offset = -s $node->logfile;
	write_conf(
		"walscale.insert_locks = 1024\nwalscale.insert_lock_attempts = 16\n"
		  . "walscale.fastpath_groups = 1024\nwalscale.$guc = 'abc'\n");
	$node->reload;
	ok( $node->wait_for_log(refusal($guc), $offset),
		"reload with walscale.$guc = 'abc': logged");
	is( $node->safe_psql(
			'postgres',
			'SELECT insert_locks, insert_lock_attempts, fastpath_groups FROM walscale_settings'
		),
		# PostgreSQL 17 has no fast-path groups: none in effect
		no_fastpath_groups() ? '1024|16|' : '1024|16|1024',
		"reload with walscale.$guc = 'abc': the settings in effect stay");
	$tried++;
}
write_conf(
	"walscale.insert_locks = 1024\nwalscale.insert_lock_attempts = 16\nwalscale.fastpath_groups = 1024\n"
);
$node->reload;

# 5. CREATE EXTENSION twice
fails_like(
	'CREATE EXTENSION walscale',
	qr/extension "walscale" already exists/,
	'CREATE EXTENSION walscale twice');
{
	my ($stdout, $stderr);
	$node->psql(
		'postgres', 'CREATE EXTENSION IF NOT EXISTS walscale',
		stdout => \$stdout,
		stderr => \$stderr);
	like(
		$stderr,
		qr/NOTICE:\s+extension "walscale" already exists, skipping/,
		'CREATE EXTENSION IF NOT EXISTS: a notice');
	$tried++;
}
fails_like(
	q{CREATE EXTENSION walscale VERSION '9.9'},
	qr/extension "walscale" already exists|version "9.9" of extension "walscale"/,
	q{CREATE EXTENSION walscale VERSION '9.9'});
# in another database too, where it works, and the statistics are shared
$node->safe_psql('postgres', 'CREATE DATABASE other');
$node->safe_psql('other', 'CREATE EXTENSION walscale');
is($node->safe_psql('other', 'SELECT count(*) FROM walscale_stats'),
	'1024', 'the extension in a second database sees the same 1024 locks');

# 6. a non-superuser
$node->safe_psql('postgres', 'CREATE ROLE mallory LOGIN');
my $as_mallory = $node->connstr('postgres') . ' user=mallory';
fails_like(
	'SELECT walscale_reset()',
	qr/permission denied for function walscale_reset/,
	'walscale_reset() as a non-superuser',
	connstr => $as_mallory);
fails_like(
	'ALTER SYSTEM SET walscale.insert_lock_attempts = 2',
	qr/permission denied to set parameter "walscale\.insert_lock_attempts"/,
	'ALTER SYSTEM as a non-superuser',
	connstr => $as_mallory);
fails_like(
	'DROP EXTENSION walscale',
	qr/must be owner of extension walscale/,
	'DROP EXTENSION as a non-superuser',
	connstr => $as_mallory);
$node->safe_psql('postgres',
	'GRANT EXECUTE ON FUNCTION walscale_reset() TO mallory');
is( $node->safe_psql(
		'postgres',
		'SELECT walscale_reset() IS NOT NULL',
		connstr => $as_mallory),
	't',
	'walscale_reset() after GRANT EXECUTE');

# 7. DROP EXTENSION while the statistics are read.  First in a fixed order:
# a reader in a transaction holds the view, DROP waits for it.
my $reader = $node->background_psql('postgres');
$reader->query_safe('BEGIN; SELECT count(*) FROM walscale_stats;');
my $dropper = $node->background_psql('postgres');
$dropper->query_until(qr/start/, "\\echo start\nDROP EXTENSION walscale;\n");
ok( $node->poll_query_until(
		'postgres',
		q{SELECT count(*) > 0 FROM pg_locks WHERE NOT granted AND locktype = 'relation'}
	),
	'DROP EXTENSION waits for the reader');
is($reader->query_safe('SELECT count(*) FROM walscale_stats'),
	'1024', 'the reader reads on while DROP waits');
$reader->query_safe('COMMIT');
$dropper->quit;
is( $node->safe_psql(
		'postgres',
		q{SELECT count(*) FROM pg_extension WHERE extname = 'walscale'}),
	'0',
	'DROP EXTENSION went through after the reader');
my ($ret, $stdout, $stderr) =
  $node->psql('postgres', 'SELECT count(*) FROM walscale_stats');
$reader->quit;
like(
	$stderr,
	qr/relation "walscale_stats" does not exist/,
	'the view is gone');
$tried++;

# Then in a race: four readers read the views, call the functions and reset,
# while the extension is dropped and created again and again.
$node->safe_psql('postgres', 'CREATE EXTENSION walscale');
my $read_sql = join '', map {
	"SELECT count(*) FROM walscale_stats;\nSELECT * FROM walscale_fastpath;\n"
	  . "SELECT * FROM walscale_settings;\nSELECT walscale_reset() IS NOT NULL;\n"
	  . "SELECT sum(acquisitions) FROM walscale_insert_lock_stats();\n"
} 1 .. 400;
my $tmp = PostgreSQL::Test::Utils::tempdir;
PostgreSQL::Test::Utils::append_to_file("$tmp/read.sql", $read_sql);
my @readers;
for my $r (0 .. 3)
{
	push @readers,
	  IPC::Run::start([ 'psql', '-X', '-q', '-d', $node->connstr('postgres') ],
		'<', "$tmp/read.sql", '>', '/dev/null', '2>', "$tmp/reader.$r.err");
}
my $cycles = 0;
while ($cycles < 30 || grep { $_->pumpable } @readers)
{
	$node->safe_psql('postgres', 'DROP EXTENSION walscale');
	$node->safe_psql('postgres', 'CREATE EXTENSION walscale');
	$cycles++;
}
$_->finish for @readers;
my @reader_err = map { slurp_file("$tmp/reader.$_.err") } 0 .. 3;
my @unexpected;
my $errors = 0;
my %error_kinds;
for my $text (@reader_err)
{
	for my $line (split /\n/, $text)
	{
		next unless $line =~ /ERROR:\s+(.*)/;
		$errors++;
		my $msg = $1;
		(my $kind = $msg) =~ s/\d+/N/g;
		$error_kinds{$kind}++;
		# what a concurrent DROP leaves a statement to find: the view or
		# function is gone (by name, or, for a function looked up just
		# before, by its OID, which PostgreSQL does not lock)
		push @unexpected, $msg
		  unless $msg =~ /^relation "walscale_\w+" does not exist/
		  || $msg =~ /^function walscale_\w+\(\) does not exist/
		  || $msg =~ /^cache lookup failed for function \d+/
		  || $msg =~ /^could not open relation with OID \d+/;
	}
}
cmp_ok($errors, '>', 0,
	"the readers ran into $errors dropped objects during $cycles DROP/CREATE EXTENSION cycles");
is(scalar @unexpected, 0,
	"$cycles DROP/CREATE EXTENSION cycles under 4 readers: only \"does not exist\" errors")
  or
  diag(join "\n", @unexpected[ 0 .. ($#unexpected < 9 ? $#unexpected : 9) ]);
note("errors of the readers: "
	  . join(', ', map { "$error_kinds{$_} x $_" } sort keys %error_kinds));
is($node->safe_psql('postgres', 'SELECT count(*) FROM walscale_stats'),
	'1024', 'the statistics read after the race');
is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'),
	$pm_start, 'no crash during the race');
$tried++;
$node->stop;

# 8. loaded but not preloaded: LOAD, session_preload_libraries, and
# CREATE EXTENSION all work, and every function says what is missing
my $plain = PostgreSQL::Test::Cluster->new('not_preloaded');
$plain->init;
$plain->start;
{
	my ($ret, $stdout, $stderr) =
	  $plain->psql('postgres', q{LOAD 'walscale'; SELECT 1});
	is($ret, 0, q{LOAD 'walscale' without preloading: no error});
	$plain->safe_psql('postgres', 'CREATE EXTENSION walscale');
	for my $sql (
		'SELECT * FROM walscale_stats',
		'SELECT * FROM walscale_fastpath',
		'SELECT * FROM walscale_settings',
		'SELECT walscale_reset()')
	{
		my ($stdout, $stderr);
		$plain->psql(
			'postgres', "\\set VERBOSITY verbose\n$sql",
			stdout => \$stdout,
			stderr => \$stderr);
		like(
			$stderr,
			qr/ERROR:\s+55000: walscale must be loaded via "shared_preload_libraries"/,
			"not preloaded: $sql says so, with SQLSTATE 55000");
		$tried++;
	}
	$plain->append_conf('postgresql.conf',
		"session_preload_libraries = 'walscale'\n");
	$plain->reload;
	($stdout, $stderr) = ('', '');
	$plain->psql(
		'postgres', 'SELECT * FROM walscale_settings',
		stdout => \$stdout,
		stderr => \$stderr);
	like(
		$stderr,
		qr/walscale must be loaded via "shared_preload_libraries"/,
		'session_preload_libraries: the same error');
	is($plain->safe_psql('postgres', 'SELECT 1'),
		'1', 'the server without preloading keeps running');
	$tried++;

	# Settings stored for a database and for a role while the module was not
	# loaded, as placeholders that nothing could check, and then the module
	# preloaded: the server starts, a session gets a warning that names the
	# setting, and the values in effect stay the server's.
	$plain->safe_psql('postgres',
		q{ALTER DATABASE postgres SET walscale.insert_locks = 'abc'});
	$plain->safe_psql('postgres',
		q{CREATE ROLE eve LOGIN; ALTER ROLE eve SET walscale.insert_lock_attempts = '-5'});
	$plain->append_conf('postgresql.conf',
		"shared_preload_libraries = 'walscale'\nsession_preload_libraries = ''\n");
	$plain->restart;
	($ret, $stdout, $stderr) = $plain->psql('postgres',
		'SELECT insert_locks, insert_lock_attempts FROM walscale_settings');
	is($stdout, '8|0', 'ALTER DATABASE SET walscale.insert_locks: no effect');
	like($stderr,
		qr/WARNING:\s+parameter "walscale\.insert_locks" cannot be changed now/,
		'ALTER DATABASE SET walscale.insert_locks: the session is warned');
	($ret, $stdout, $stderr) = $plain->psql('postgres',
		'SELECT insert_locks, insert_lock_attempts FROM walscale_settings',
		connstr => $plain->connstr('postgres') . ' user=eve');
	is($stdout, '8|0', 'ALTER ROLE SET walscale.insert_lock_attempts: no effect');
	like($stderr,
		qr/WARNING:\s+parameter "walscale\.insert_lock_attempts" cannot be changed now/,
		'ALTER ROLE SET walscale.insert_lock_attempts: the session is warned');
	$tried += 2;

	# and with the module preloaded, such settings are refused at once
	for my $case (
		[ 'ALTER DATABASE postgres SET walscale.fastpath_groups = 4',
			qr/parameter "walscale\.fastpath_groups" cannot be changed without restarting the server/ ],
		[ 'ALTER ROLE eve SET walscale.insert_lock_attempts = 2',
			qr/parameter "walscale\.insert_lock_attempts" cannot be changed now/ ],
		[ q{ALTER ROLE eve SET walscale.insert_locks = 'abc'},
			qr/"walscale\.insert_locks"/ ])
	{
		my ($sql, $re) = @$case;
		($ret, $stdout, $stderr) = $plain->psql('postgres', $sql);
		isnt($ret, 0, "$sql: fails");
		like($stderr, $re, "$sql: clear error");
		$tried++;
	}
}
$plain->stop;

diag(
	"hostile input: $tried inputs tried, each refused with a clear error or handled"
);
done_testing();
