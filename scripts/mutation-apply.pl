#!/usr/bin/env perl
# The find/replace applier of the mutations (mutations/*.mutation, format in
# mutations/README.md).  scripts/mutate.sh plants the bugs with it and
# scripts/check-mutations.sh (make test) checks with it that they still
# apply: one reader of the format, so that the check cannot pass a mutation
# that make mutate would find stale.  perl is there wherever PostgreSQL's TAP
# tests run.  Modes:
#   parse MUTATION             check the file's syntax; print the file: and
#                              tests: values, the description, the flavor:
#                              value (default injection) and the postgres:
#                              value (default any), a line each
#   apply MUTATION FILE IN OUT apply the blocks to IN (whose path relative to
#                              its tree is FILE), write the result to OUT
#                              (- to check only)
#   check MUTATION REPO TREE   whether make mutate would find it stale from
#                              the start: every test it names is in REPO, and
#                              its blocks apply to its file, taken from REPO
#                              for walscale's own files and from TREE (the
#                              patched PostgreSQL source) for the server's;
#                              a mutation for another major version than
#                              TREE's is not checked (exit status 3)
# Exit status: 0, 1 when the mutation is stale (a find text does not occur
# exactly once; check: or its file or a test is missing), said on standard
# error, 2 when the mutation file is malformed, 3 (check) when it is not for
# TREE's PostgreSQL major version, said on standard error.
use strict;
use warnings;

my ($mode, $mutation, @args) = @ARGV;
my ($name) = $mutation =~ m{([^/]+?)(?:\.mutation)?$};

sub malformed
{
	print STDERR "mutation $name: $mutation: @_\n";
	exit 2;
}

sub stale
{
	print STDERR "mutation $name: @_\n";
	exit 1;
}

open(my $fh, '<', $mutation) or malformed("cannot read it: $!");
my @lines = <$fh>;
close $fh;

my (%header, @description, @blocks, $part);
my $n = 0;
foreach my $line (@lines)
{
	$n++;
	$line =~ s/\n\z//;
	if ($line =~ /^@@/)
	{
		if ($line eq '@@ find')
		{
			push @blocks, { find => [], line => $n };
			$part = 'find';
		}
		elsif ($line eq '@@ replace')
		{
			malformed("line $n: \"\@\@ replace\" without an \"\@\@ find\" before it")
			  unless @blocks && $part eq 'find';
			$blocks[-1]{replace} = [];
			$part = 'replace';
		}
		else
		{
			malformed("line $n: \"$line\" is neither \"\@\@ find\" nor \"\@\@ replace\"");
		}
		next;
	}
	if (!@blocks)
	{
		next if $line =~ /^\s*$/;
		if ($line =~ /^#\s?(.*)$/)
		{
			push @description, $1;
			next;
		}
		if ($line =~ /^(file|tests|flavor|postgres):\s*(.*?)\s*$/)
		{
			malformed("line $n: a second \"$1:\" line") if exists $header{$1};
			$header{$1} = $2;
			next;
		}
		malformed("line $n: before the first \"\@\@ find\", only \"# ...\", \"file: ...\", \"tests: ...\", \"flavor: ...\" and \"postgres: ...\" lines may come");
	}
	push @{ $blocks[-1]{$part} }, $line;
}

foreach my $h ('file', 'tests')
{
	malformed("no \"$h:\" line") unless defined $header{$h} && $header{$h} ne '';
}
my $own_file = $header{file} =~ /^walscale(?:_[a-z]+)*\.c$/;
malformed("file: \"$header{file}\" must be one of walscale's .c files or a .c file under src/ of the PostgreSQL tree")
  unless $own_file
  || ($header{file} =~ m{^src/[A-Za-z0-9_./-]+\.c$} && $header{file} !~ m{(^|/)\.\.?/});
foreach my $t (split ' ', $header{tests})
{
	malformed("tests: \"$t\" is neither regress nor t/NNN_name.pl")
	  unless $t eq 'regress' || $t =~ m{^t/\d{3}_[A-Za-z0-9_]+\.pl$};
}
malformed("no \"\@\@ find\" block") unless @blocks;
# the flavor of the patched server it runs on (scripts/build-postgres.sh
# --flavor): code compiled only under EXEC_BACKEND is mutated on that build
$header{flavor} //= 'injection';
malformed("flavor: \"$header{flavor}\" is neither injection nor execbackend")
  unless $header{flavor} =~ /^(injection|execbackend)$/;
# the PostgreSQL major version whose code it mutates: code that only one
# version's series has (18's fast-path groups) is mutated on that one alone
$header{postgres} //= 'any';
malformed("postgres: \"$header{postgres}\" is neither any nor a major version such as 18")
  unless $header{postgres} =~ /^(any|[1-9][0-9])$/;

# A block's text is its lines joined by newlines, without a newline after
# the last one and without trailing blank lines.
sub text
{
	my @l = @{ $_[0] };
	pop @l while @l && $l[-1] =~ /^\s*$/;
	return join("\n", @l);
}
foreach my $b (@blocks)
{
	malformed("line $b->{line}: \"\@\@ find\" without an \"\@\@ replace\" after it")
	  unless defined $b->{replace};
	$b->{find_text} = text($b->{find});
	$b->{replace_text} = text($b->{replace});
	malformed("line $b->{line}: the find text is empty") if $b->{find_text} eq '';
	malformed("line $b->{line}: the replacement is the find text itself")
	  if $b->{find_text} eq $b->{replace_text};
}

if ($mode eq 'parse')
{
	print "$header{file}\n$header{tests}\n", join(' ', @description),
	  "\n$header{flavor}\n$header{postgres}\n";
	exit 0;
}

# The major version of a PostgreSQL source tree: from the pg_config.h that
# configure wrote into a built tree, else from configure.ac's AC_INIT or
# meson.build's version, which every tree has, configured or not; undef
# where none says.
sub tree_major_version
{
	my ($tree) = @_;
	my @sources = (
		[ 'src/include/pg_config.h', qr/^#define PG_MAJORVERSION "(\d+)"/ ],
		[ 'configure.ac', qr/^AC_INIT\(\[PostgreSQL\], \[(\d+)/ ],
		[ 'meson.build', qr/^\s*version: '(\d+)/ ]);
	foreach my $s (@sources)
	{
		open(my $h, '<', "$tree/$s->[0]") or next;
		while (my $l = <$h>)
		{
			return $1 if $l =~ $s->[1];
		}
	}
	return undef;
}

my ($file, $in, $out);
if ($mode eq 'check')
{
	die "usage: check MUTATION REPO TREE\n" unless @args == 2;
	my ($repo, $tree) = @args;
	if ($header{postgres} ne 'any' && $tree ne '')
	{
		my $major = tree_major_version($tree);
		if (defined $major && $major ne $header{postgres})
		{
			print STDERR "mutation $name: not for PostgreSQL $major (postgres: $header{postgres})\n";
			exit 3;
		}
	}
	foreach my $t (split ' ', $header{tests})
	{
		stale("no test $t") unless $t eq 'regress' || -f "$repo/$t";
	}
	$file = $header{file};
	$in = ($own_file ? $repo : $tree) . "/$file";
	stale("no file $file") unless -f $in;
	$out = '-';
}
else
{
	die "usage: apply MUTATION FILE IN OUT\n" unless $mode eq 'apply' && @args == 3;
	($file, $in, $out) = @args;
}
open($fh, '<', $in) or die "mutation $name: cannot read $in: $!\n";
my $text = do { local $/; <$fh> };
close $fh;

# Blocks apply in order, each to the text the ones before it left.
for my $i (0 .. $#blocks)
{
	my $find = $blocks[$i]{find_text};
	my ($count, $at, $pos) = (0, undef, -1);
	while (($pos = index($text, $find, $pos + 1)) >= 0)
	{
		$count++;
		$at //= $pos;
	}
	if ($count != 1)
	{
		stale("find text occurs $count times in $file",
			(@blocks > 1 ? "(block " . ($i + 1) . " of " . scalar(@blocks) . ", line $blocks[$i]{line})" : ()));
	}
	substr($text, $at, length($find)) = $blocks[$i]{replace_text};
}
exit 0 if $out eq '-';
open($fh, '>', "$out.tmp") or die "mutation $name: cannot write $out.tmp: $!\n";
print $fh $text;
close($fh) or die "mutation $name: cannot write $out.tmp: $!\n";
rename("$out.tmp", $out) or die "mutation $name: cannot rename $out.tmp: $!\n";
exit 0;
