# walscale's source files call each other in layers, never in a circle.  A
# file imports another when it includes, directly or through other headers,
# that file's header (walscale_X.h belongs to walscale_X.c, walscale.h to
# walscale_common.c; walscale_core.h is the core patch's and
# walscale_compat.h PostgreSQL's versions', and they import nothing), and
# when it uses a name that the other file defines: each file is compiled
# with the flags of the server under test, and nm says which names its
# object defines and which it uses, whatever header declares them.  No file
# may import, at any remove, a file that imports it.  No server is started.
use strict;
use warnings FATAL => 'all';

use File::Basename qw(basename dirname);
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;
use Text::ParseWords qw(shellwords);

my $dir = dirname(__FILE__) . '/..';

# the walscale headers a file includes directly
sub includes
{
	my ($path) = @_;
	open my $fh, '<', $path or die "$path: $!";
	my @inc;
	while (<$fh>)
	{
		push @inc, $1 if /^\s*#\s*include\s+"(walscale[a-z_]*\.h)"/;
	}
	close $fh;
	return @inc;
}

sub owner
{
	my ($header) = @_;
	return undef
	  if $header eq 'walscale_core.h' || $header eq 'walscale_compat.h';
	return 'walscale_common.c' if $header eq 'walscale.h';
	(my $c = $header) =~ s/\.h$/.c/;
	return $c;
}

my @sources = map { basename($_) } glob("$dir/walscale*.c");
ok(scalar(@sources) >= 9, 'the sources are found: ' . join(' ', @sources));

# the files each file imports: through its headers and theirs
my %imports;
for my $c (@sources)
{
	my %seen;
	my @todo = includes("$dir/$c");
	while (my $h = shift @todo)
	{
		next if $seen{$h}++;
		ok(-f "$dir/$h", "$c: $h exists");
		push @todo, includes("$dir/$h") if -f "$dir/$h";
	}
	$imports{$c} =
	  [ grep { defined $_ && $_ ne $c } map { owner($_) } sort keys %seen ];
	my @missing = grep { !-f "$dir/$_" } @{ $imports{$c} };
	is("@missing", '', "$c: every header it includes has its source file");
}

# the names each object file defines and those it uses, from nm
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
my @cc = (
	$words->('--cc'), $words->('--cflags'),
	'-O0', $words->('--cppflags'),
	"-I$dir", "-I$includedir_server",
	'-DWALSCALE_VERSION="0"', '-c');
my $objdir = PostgreSQL::Test::Utils::tempdir('layers');
my (%defined_by, %uses);
for my $c (@sources)
{
	(my $o = "$objdir/$c") =~ s/\.c$/.o/;
	my ($out, $err) = ('', '');
	my $built =
	  IPC::Run::run([ @cc, '-o', $o, "$dir/$c" ], '>' => \$out, '2>' => \$err);
	ok($built, "$c compiles with the server's compiler and flags")
	  or diag("$out$err");
	next unless $built;
	($out, $err) = ('', '');
	IPC::Run::run([ 'nm', '-P', $o ], '>' => \$out, '2>' => \$err)
	  or BAIL_OUT("nm $o failed: $err");
	for my $line (split /\n/, $out)
	{
		my ($name, $type) = split ' ', $line;
		next unless defined $type;
		if ($type eq 'U' || $type eq 'w' || $type eq 'v')
		{
			push @{ $uses{$c} }, $name;
		}
		elsif ($type =~ /^[A-Z]$/)
		{
			$defined_by{$name} = $c;
		}
	}
}
ok(exists $defined_by{walscale_insert_locks},
	'nm finds the definitions: walscale_insert_locks is defined by '
	  . ($defined_by{walscale_insert_locks} // 'none'));

# a name used in one file and defined in another imports the other
my %by_name;    # "a b": the names that a uses from b
for my $c (@sources)
{
	for my $name (@{ $uses{$c} || [] })
	{
		my $d = $defined_by{$name};
		next unless defined $d && $d ne $c;
		push @{ $by_name{"$c $d"} }, $name;
		push @{ $imports{$c} }, $d
		  unless grep { $_ eq $d } @{ $imports{$c} };
	}
}

# a depth-first walk: a file met again while on the path closes a circle
my %state;    # 1: on the path, 2: done
my @path;
my @circles;

sub walk
{
	my ($c) = @_;
	return if ($state{$c} // 0) == 2;
	if (($state{$c} // 0) == 1)
	{
		my @from = @path;
		shift @from while @from && $from[0] ne $c;
		my @steps = (@from, $c);
		push @circles,
		  join(' -> ',
			map {
				my $names = $by_name{"$steps[$_] $steps[$_ + 1]"};
				$steps[$_]
				  . ($names ? ' (' . join(', ', sort @$names) . ')' : '')
			} 0 .. $#steps - 1)
		  . " -> $c";
		return;
	}
	$state{$c} = 1;
	push @path, $c;
	walk($_) for @{ $imports{$c} || [] };
	pop @path;
	$state{$c} = 2;
}
walk($_) for sort @sources;
is(join('; ', @circles), '', 'no file imports, at any remove, a file that imports it');

# the pure rules and the common layer import no other walscale file
is("@{ $imports{'walscale_auto_rules.c'} }", '',
	'walscale_auto_rules.c imports no other walscale file');
is("@{ $imports{'walscale_common.c'} }", '',
	'walscale_common.c imports no other walscale file');

# walscale.c, _PG_init's file, is the top: nothing imports it
my @importers = grep {
	my $c = $_;
	grep { $_ eq 'walscale.c' } @{ $imports{$c} }
} @sources;
is("@importers", '', 'no file imports walscale.c');
my %seen_name;
my @called = sort grep { !$seen_name{$_}++ } grep { ($defined_by{$_} // '') eq 'walscale.c' }
  map { @{ $uses{$_} || [] } } grep { $_ ne 'walscale.c' } @sources;
is("@called", '', 'no other file uses a name that walscale.c defines');

done_testing();
