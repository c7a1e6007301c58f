#!/usr/bin/env python3
"""bench/allock_stall_report.py DIR [LATENCIES]: report.md, runs.csv and
at-start.csv.gz of bench/allock-stall.sh from every transaction's latency
(LATENCIES, default DIR/latencies.csv.gz; the script leaves it in its
scratch directory) and DIR's ops.csv, tps.csv and meta.env.

Per run (arm, round) and operation kind (checkpoint, switch): the
transactions "at the start", whose run [end - latency, end] overlaps
[start, start + window] of an operation of that kind, and the transactions
"away", overlapping no [start - window, end + window] of any operation;
p50, p99 and max latency of each, and the operations' median duration.
Per arm and kind: the medians over the rounds, the ratio at the start /
away (p99), and the ratio of each arm's median p99 at the start to
stock's."""
import csv
import gzip
import os
import re
import statistics
import subprocess
import sys
from collections import defaultdict


def pct(v, p):
    """nearest-rank percentile of a sorted list"""
    if not v:
        return float("nan")
    k = max(0, min(len(v) - 1, int(round(p / 100.0 * len(v) + 0.5)) - 1))
    return v[k]


def fmt(x, d=1):
    return "-" if x != x else f"{x:.{d}f}"


def main(d, lat_path=None):
    meta = {}
    with open(os.path.join(d, "meta.env")) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("=")
            meta[k] = v
    w = float(meta["window_ms"]) / 1000.0
    arms = meta["arms"].split()
    ops = defaultdict(list)  # (arm, round) -> [(op, start, end)]
    with open(os.path.join(d, "ops.csv")) as f:
        for row in csv.DictReader(f):
            ops[(row["arm"], row["round"])].append(
                (row["op"], float(row["start"]), float(row["end"])))
    tx = defaultdict(list)  # (arm, round) -> [(begin, end, latency_ms)]
    with gzip.open(lat_path or os.path.join(d, "latencies.csv.gz"), "rt") as f:
        for row in csv.DictReader(f):
            e = float(row["end"])
            lat = int(row["latency_us"])
            tx[(row["arm"], row["round"])].append((e - lat / 1e6, e, lat / 1000.0))
    tps = {}
    with open(os.path.join(d, "tps.csv")) as f:
        for row in csv.DictReader(f):
            tps[(row["arm"], row["round"])] = float(row["tps"])

    kinds = ["checkpoint", "switch"]
    runs = []
    for (arm, rnd), t in sorted(tx.items()):
        o = ops[(arm, rnd)]
        away = sorted(lat for b, e, lat in t
                      if not any(b < oe + w and e > os_ - w for _, os_, oe in o))
        for k in kinds:
            ko = [(s, e) for op, s, e in o if op == k]
            at = sorted(lat for b, e, lat in t
                        if any(b < s + w and e > s for s, _ in ko))
            runs.append({
                "arm": arm, "round": rnd, "op": k, "ops": len(ko),
                "op_ms": statistics.median([(e - s) * 1000 for s, e in ko]) if ko else float("nan"),
                "n_at": len(at), "p50_at": pct(at, 50), "p99_at": pct(at, 99),
                "max_at": at[-1] if at else float("nan"),
                "n_away": len(away), "p50_away": pct(away, 50), "p99_away": pct(away, 99),
                "max_away": away[-1] if away else float("nan"),
                "tps": tps.get((arm, rnd), float("nan")),
                "_at": at, "_away": away,
            })
    with gzip.open(os.path.join(d, "at-start.csv.gz"), "wt") as f:
        f.write("arm,round,op,end,latency_us\n")
        for (arm, rnd), t in sorted(tx.items()):
            for k in kinds:
                ko = [s for op, s, e in ops[(arm, rnd)] if op == k]
                for b, e, lat in t:
                    if any(b < s + w and e > s for s in ko):
                        f.write(f"{arm},{rnd},{k},{e:.6f},{round(lat * 1000)}\n")
    cols = [c for c in runs[0].keys() if not c.startswith("_")]
    with open(os.path.join(d, "runs.csv"), "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=cols)
        wr.writeheader()
        for r in runs:
            wr.writerow({k: (f"{v:.3f}" if isinstance(v, float) else v) for k, v in r.items() if k in cols})

    def med(arm, k, col):
        v = [r[col] for r in runs if r["arm"] == arm and r["op"] == k and r[col] == r[col]]
        return statistics.median(v) if v else float("nan")

    def spread(arm, k, col):
        v = [r[col] for r in runs if r["arm"] == arm and r["op"] == k and r[col] == r[col]]
        return f"{min(v):.1f}..{max(v):.1f}" if v else "-"

    def pooled(arm, k, col):
        v = sorted(x for r in runs if r["arm"] == arm and r["op"] == k for x in r[col])
        return pct(v, 99), len(v)

    def ratio_med(arm, k):
        v = [r["p99_at"] / r["p99_away"] for r in runs
             if r["arm"] == arm and r["op"] == k and r["p99_away"] > 0 and r["p99_at"] == r["p99_at"]]
        return statistics.median(v) if v else float("nan")

    def label(a):
        return "stock" if a == "stock" else f"walscale {a} locks"

    L = []
    L.append("# The all-lock stall: other sessions' latency while a checkpoint or a WAL switch starts")
    L.append("")
    L.append(f"{meta['started']}, commit {meta['commit']}, core patches {meta['patches']}; "
             f"{meta['cpu']}, {meta['cores']} cores, {meta['kernel']}; load average "
             f"{meta['load_start']} at the start, {meta['load_end']} at the end (a shared machine).")
    ver = re.search(r"PostgreSQL\) (\S+)", meta["pg_stock"])
    L.append(f"PostgreSQL {ver.group(1) if ver else '?'}, stock and patched from the same source. "
             f"Made by `{meta['command']}` in {int(meta['elapsed_s']) // 60}:{int(meta['elapsed_s']) % 60:02d}.")
    L.append("")
    L.append(f"Workload: {meta['workload']}. Server: {meta['settings']}.")
    L.append(f"Arms: {', '.join(label(a) for a in arms)} (walscale.insert_locks at the server's start); "
             f"{meta['rounds']} rounds, each running every arm once, the order rotated by one a round. "
             f"In each {meta['seconds']} s run, every {meta['interval']} s from the second one on, a separate "
             "session runs CHECKPOINT and `pg_switch_wal()` in turn, each between two reads of the "
             "server's clock_timestamp(); both take every active insertion lock exclusively "
             "(WALInsertLockAcquireExclusive()), a checkpoint for its redo point, then writes the dirty buffers.")
    L.append(f"\"At the start\": transactions whose run overlaps the {meta['window_ms']} ms after an operation's "
             f"start; \"away\": transactions overlapping no operation widened by {meta['window_ms']} ms either side. "
             "Per run the nearest-rank p50, p99 and the max latency of each set; below, the median over the "
             "rounds (min..max of the rounds for p99) and the ratios of medians.")
    L.append("")
    for k in kinds:
        L.append(f"## {'CHECKPOINT' if k == 'checkpoint' else 'pg_switch_wal()'}")
        L.append("")
        L.append("| arm | operation ms | tx at the start (per run) | p50 at start ms | p99 at start ms (rounds) | max at start ms "
                 "| p50 away ms | p99 away ms | p99 start / away | p99 at start / stock's | p99 at start, rounds pooled (tx) | tps |")
        L.append("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
        sp99 = med("stock", k, "p99_at") if "stock" in arms else float("nan")
        for a in arms:
            p99 = med(a, k, "p99_at")
            L.append(f"| {label(a)} | {fmt(med(a, k, 'op_ms'), 2)} | {fmt(med(a, k, 'n_at'), 0)} | "
                     f"{fmt(med(a, k, 'p50_at'), 2)} | {fmt(p99, 2)} ({spread(a, k, 'p99_at')}) | "
                     f"{fmt(med(a, k, 'max_at'), 1)} | {fmt(med(a, k, 'p50_away'), 2)} | "
                     f"{fmt(med(a, k, 'p99_away'), 2)} | {fmt(ratio_med(a, k), 2)} | "
                     f"{fmt(p99 / sp99 if sp99 == sp99 and sp99 > 0 else float('nan'), 2)} | "
                     f"{fmt(pooled(a, k, '_at')[0], 2)} ({pooled(a, k, '_at')[1]}) | "
                     f"{fmt(med(a, k, 'tps'), 0)} |")
        L.append("")
    # the verdict: does an arm's p99 at the start stand clear of the
    # spread over the rounds of stock's, and of walscale's at 8 locks?
    for base in [b for b in ("stock", "8") if b in arms]:
        L.append(f"## Verdict against {label(base)}")
        L.append("")
        for k in kinds:
            bv = [r["p99_at"] for r in runs if r["arm"] == base and r["op"] == k and r["p99_at"] == r["p99_at"]]
            if not bv:
                continue
            parts = []
            for a in arms:
                if a == base:
                    continue
                v = [r["p99_at"] for r in runs if r["arm"] == a and r["op"] == k and r["p99_at"] == r["p99_at"]]
                if not v:
                    continue
                if min(v) > max(bv):
                    what = "slower in every round than the slowest round of the base"
                elif max(v) < min(bv):
                    what = "faster in every round than the fastest round of the base"
                else:
                    what = "within the base's spread"
                parts.append(f"{label(a)} {statistics.median(v) / statistics.median(bv):.2f}x, {what} "
                             f"({min(v):.1f}..{max(v):.1f} ms against {min(bv):.1f}..{max(bv):.1f})")
            L.append(f"- {'CHECKPOINT' if k == 'checkpoint' else 'pg_switch_wal()'}, p99 at the start: "
                     + "; ".join(parts) + ".")
        L.append("")
    L.append("\"p99 start / away\" is the median over the rounds of each run's ratio; "
             "\"operation ms\" the median time from the first clock read to the second, the operation's "
             "whole run (a checkpoint's includes its buffer writes, with fsync off).")
    L.append("")
    try:
        rc = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    except OSError:
        rc = "unknown"
    L.append("Files: `runs.csv` (per run and kind), `ops.csv` (every operation's start and end, "
             "seconds since the epoch), `at-start.csv.gz` (the transactions at an operation's start: end, latency), "
             "`tps.csv`, `meta.env`. Every transaction's latency was left in the scratch directory (too large to keep); "
             "with it, `bench/allock_stall_report.py DIR LATENCIES` writes this report again. "
             f"This report was written by `bench/allock_stall_report.py` at commit {rc}.")
    with open(os.path.join(d, "report.md"), "w") as f:
        f.write("\n".join(L) + "\n")
    print("\n".join(L))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
