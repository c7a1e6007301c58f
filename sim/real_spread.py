#!/usr/bin/env python3
"""How much a real server's throughput moves from one window to the next at
a fixed number of locks, from the per-second tps that bench/common.sh keeps
(runs.csv, column tps_each_second: pgbench -P 1's reports joined by ';').

    sim/real_spread.py [RUNS.CSV ...]     default: every bench/results/*/runs.csv
                                          with a tps_each_second column

For each run at a fixed count (auto mode's runs are left out: their count may
move), the first second (clients connecting) is dropped; the rest are
summed into windows of k consecutive seconds, and every two adjacent
windows of one run give ln(later / earlier): what a one-window trial
compares.  Printed per k, pooled over the runs: the pairs, the mean
|ln ratio| (what walscale_auto_rules.c calls the spread), its median (the
sweep report's "1-s step" at k = 1) and its root mean square (the
standard deviation `walscale_sim spread` prints, "sd of the ratio").
Windows start at every second, so the pairs of one run overlap.

Then a fit: each run's seconds less a straight line through them (the
run's drift: after the TRUNCATE and CHECKPOINT before each run, full-page
images fade), and the residuals' standard deviation s, pooled.  If the
residuals are independent from second to second, two adjacent windows of
k seconds differ by sqrt(2 / k) s on the log scale, drift aside: printed
for k = 1, 2 (to hold against the measured) and 10 (extrapolated, not
measured).  Measured figures only; nothing here is simulated.
"""

import csv
import glob
import math
import os
import statistics
import sys


def series(paths):
    """(path, locks, rep, [tps of each second but the first]) per fixed run."""
    out = []
    for path in paths:
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                each = r.get("tps_each_second") or ""
                locks = int(r.get("insert_locks") or 0)
                if not each or locks <= 0:
                    continue
                tps = [float(x) for x in each.split(";") if x][1:]
                if len(tps) >= 2 and min(tps) > 0:
                    out.append((path, locks, r.get("rep"), tps))
    return out


def pairs(tps, k):
    """ln(later / earlier) of every two adjacent k-second windows."""
    out = []
    for s in range(len(tps) - 2 * k + 1):
        a = sum(tps[s:s + k])
        b = sum(tps[s + k:s + 2 * k])
        out.append(math.log(b / a))
    return out


def residual_sd(runs):
    """Pooled sd of ln tps about each run's straight line, and the
    pooled lag-1 autocorrelation of those residuals."""
    ss = 0.0
    dof = 0
    lag_num = 0.0
    lag_den = 0.0
    for _, _, _, tps in runs:
        n = len(tps)
        if n < 3:
            continue
        y = [math.log(v) for v in tps]
        xm = (n - 1) / 2
        ym = sum(y) / n
        sxx = sum((i - xm) ** 2 for i in range(n))
        b = sum((i - xm) * (y[i] - ym) for i in range(n)) / sxx
        e = [y[i] - ym - b * (i - xm) for i in range(n)]
        ss += sum(v * v for v in e)
        dof += n - 2
        lag_num += sum(e[i] * e[i + 1] for i in range(n - 1))
        lag_den += sum(v * v for v in e)
    if dof == 0:
        return None, None
    return math.sqrt(ss / dof), lag_num / lag_den if lag_den > 0 else None


def pct(v):
    return "-" if v is None else "%.2f%%" % (100 * v)


def report(runs, title):
    print("### %s: %d runs, %s\n" % (
        title, len(runs),
        ", ".join("%d locks" % l for l in sorted({r[1] for r in runs}))))
    print("| window | pairs | mean abs ln ratio (the rules' spread) | median | rms |")
    print("|---:|---:|---:|---:|---:|")
    longest = max(len(r[3]) for r in runs)
    for k in range(1, longest // 2 + 1):
        ls = [v for r in runs for v in pairs(r[3], k)]
        if not ls:
            break
        a = [abs(v) for v in ls]
        print("| %d s | %d | %s | %s | %s |" % (
            k, len(ls), pct(sum(a) / len(a)), pct(statistics.median(a)),
            pct(math.sqrt(sum(v * v for v in ls) / len(ls)))))
    s, rho = residual_sd(runs)
    if s is None:
        print()
        return
    print()
    print("Each second's ln tps about its run's straight line: sd %s, lag-1"
          " autocorrelation %s.  Independent seconds would give two adjacent"
          " windows an rms ln ratio of %s at 1 s and %s at 2 s (drift"
          " aside), and, extrapolated, %s at 10 s (a mean |ln ratio|, the"
          " rules' spread, of %s).\n" % (
              pct(s), "-" if rho is None else "%.2f" % rho,
              pct(s * math.sqrt(2)), pct(s), pct(s * math.sqrt(0.2)),
              pct(s * math.sqrt(0.2) * 2 / math.sqrt(math.pi))))


def main():
    paths = sys.argv[1:]
    if not paths:
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            "..", "bench", "results")
        for p in sorted(glob.glob(os.path.join(root, "*", "runs.csv"))):
            with open(p, newline="") as f:
                if "tps_each_second" in (f.readline() or ""):
                    paths.append(p)
    runs = series(paths)
    if not runs:
        print("no run with tps_each_second at a fixed count")
        return 1
    print("Measured (pgbench -P 1), from: %s\n" % ", ".join(
        os.path.relpath(p) for p in paths))
    report(runs, "all fixed counts")
    for locks in sorted({r[1] for r in runs}):
        report([r for r in runs if r[1] == locks], "%d locks" % locks)
    report([(p, l, rep, t[:-1]) for p, l, rep, t in runs],
           "all fixed counts, the last second left out too")
    return 0


if __name__ == "__main__":
    sys.exit(main())
