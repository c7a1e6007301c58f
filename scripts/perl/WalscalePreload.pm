# Loaded by scripts/test-postgres.sh into every TAP test of src/test/recovery
# and of the WAL tools (PERL5OPT=-MWalscalePreload): keeps walscale in
# shared_preload_libraries on every node, whatever a test writes there itself.
#
# TEMP_CONFIG's "shared_preload_libraries = 'walscale'" is replaced by any
# later line that sets shared_preload_libraries (027_stream_regress.pl sets
# 'pg_stat_statements', tests of injection points set 'injection_points').
# After PostgreSQL::Test::Cluster or PostgreSQL::Test::Utils writes a
# server configuration file (append_conf, adjust_conf, append_to_file,
# string_replace_file), every shared_preload_libraries line of that file is
# made to list walscale besides what the test asked for:
#     shared_preload_libraries = 'pg_stat_statements'
# becomes
#     shared_preload_libraries = 'walscale,pg_stat_statements'
#
# test-postgres.sh proves the result from the nodes' logs: every start of
# every node logs walscale's "LOG:  walscale: " line.
#
# PERL5OPT reaches every perl process of the run (prove itself, and any perl
# that a test starts): the shim does nothing outside a test file t/NNN_*.pl.
package WalscalePreload;

use strict;
use warnings;

our $active = 0;

# A shared_preload_libraries value (quoted or not) with walscale in its list.
sub merged_value
{
	my ($v) = @_;
	$v = '' unless defined $v;
	my $inner = $v =~ /\A'(.*)'\z/s ? $1 : $v;
	my @libs =
	  grep { length } map { my $l = $_; $l =~ s/\A\s+|\s+\z//g; $l } split /,/,
	  $inner;
	return $v if grep { my $l = $_; $l =~ s/\A"|"\z//g; $l eq 'walscale' } @libs;
	return "'" . join(',', 'walscale', @libs) . "'";
}

# The text of a configuration file with walscale in every
# shared_preload_libraries line.
sub merged_text
{
	my ($text) = @_;
	$text =~ s{^([ \t]*shared_preload_libraries[ \t]*(?:=[ \t]*|[ \t]))('(?:[^'\\]|''|\\.)*'|[^\s#']*)}
	  {$1 . merged_value($2)}gemi;
	return $text;
}

# A server configuration file: postgresql.conf, postgresql.auto.conf or any
# file they include, not the authentication files.
sub is_server_conf
{
	my ($file) = @_;
	return 0 unless defined $file && !ref $file;
	return 0 if $file =~ m{(?:\A|/)pg_(?:hba|ident)\.conf\z};
	return $file =~ /\.conf\z/ ? 1 : 0;
}

sub fix_file
{
	my ($file) = @_;
	return unless is_server_conf($file) && -f $file;
	open my $in, '<', $file or die "walscale shim: cannot read $file: $!";
	my $text = do { local $/; <$in> };
	close $in;
	my $fixed = merged_text($text);
	return if $fixed eq $text;
	open my $out, '>', $file or die "walscale shim: cannot write $file: $!";
	print $out $fixed;
	close $out or die "walscale shim: cannot write $file: $!";
	my %before = map { $_ => 1 } split /\n/, $text;
	Test::More::note("walscale shim: $file: $_")
	  for grep { !$before{$_} } split /\n/, $fixed;
	return;
}

sub install
{
	require PostgreSQL::Test::Utils;
	require PostgreSQL::Test::Cluster;
	require Test::More;

	no strict 'refs';
	no warnings 'redefine';

	# Utils' functions take the file name first, the node's methods the
	# node and a name relative to its data directory.
	for my $sub (qw(append_to_file string_replace_file))
	{
		my $orig = \&{"PostgreSQL::Test::Utils::$sub"};
		*{"PostgreSQL::Test::Utils::$sub"} = sub {
			my @r = $orig->(@_);
			fix_file($_[0]);
			return @r;
		};
	}
	my $append_conf = \&PostgreSQL::Test::Cluster::append_conf;
	*PostgreSQL::Test::Cluster::append_conf = sub {
		my ($self, $filename) = @_;
		my @r = $append_conf->(@_);
		fix_file($self->data_dir . '/' . $filename);
		return @r;
	};
	my $adjust_conf = \&PostgreSQL::Test::Cluster::adjust_conf;
	*PostgreSQL::Test::Cluster::adjust_conf = sub {
		my ($self, $filename, $setting, $value) = @_;
		my @r = $adjust_conf->(@_);
		my $file = $self->data_dir . '/' . $filename;
		# a test that removes the setting gets walscale alone
		if (   is_server_conf($file)
			&& lc($setting) eq 'shared_preload_libraries'
			&& !defined $value)
		{
			PostgreSQL::Test::Utils::append_to_file($file,
				"shared_preload_libraries = 'walscale'\n");
		}
		fix_file($file);
		return @r;
	};
	$active = 1;
	return;
}

# Only in a test file: elsewhere, loading PostgreSQL::Test::Utils would
# open a test log and redirect the process's output.
install() if $0 =~ m{(?:\A|/)t/\d+_[^/]*\.pl\z};

1;
