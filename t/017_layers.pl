# walscale's source files call each other in layers, never in a circle:
# the files a file includes walscale headers of, directly or through other
# headers, are its imports, and no file may import, at any remove, a file
# that imports it.  walscale_X.h belongs to walscale_X.c, walscale.h to
# walscale_common.c; walscale_core.h is the core patch's and
# walscale_compat.h PostgreSQL's versions', and they import nothing.  No
# server is started.
use strict;
use warnings FATAL => 'all';

use File::Basename qw(basename dirname);
use Test::More;

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
		push @circles, join(' -> ', @from, $c);
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

done_testing();
