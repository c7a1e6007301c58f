
# Copyright (c) 2026, walscale developers

# Queries over walscale_stats that more than one TAP file asks.

package WalscaleTest;

use strict;
use warnings FATAL => 'all';

use Exporter 'import';

our @EXPORT = qw(stats_summary_query inconsistent_locks_query);

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
# at walscale.insert_lock_attempts = $attempts since the last reset: an
# acquisition is a first try or a contended one, only a contended one can
# sleep, a sleep is timed, and each contended acquisition fails between one
# and $attempts conditional attempts (none when attempts are off).
sub inconsistent_locks_query
{
	my ($attempts) = @_;

	die "attempts must be a non-negative integer"
	  unless defined $attempts && $attempts =~ /^\d+$/;
	return qq{
SELECT count(*) FROM walscale_stats
WHERE acquisitions < 0 OR first_try < 0 OR failed_attempts < 0
   OR blocking_waits < 0 OR blocked_ms < 0 OR exclusive_acquisitions < 0
   OR flush_waits < 0
   OR first_try > acquisitions
   OR blocking_waits > acquisitions - first_try
   OR (blocking_waits = 0) <> (blocked_ms = 0)
   OR CASE WHEN $attempts = 0 THEN failed_attempts <> 0
           ELSE failed_attempts NOT BETWEEN acquisitions - first_try
                AND (acquisitions - first_try) * $attempts
      END};
}

1;
