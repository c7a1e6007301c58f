#!/usr/bin/env python3
"""The report of bench/sweep.sh: a table, a plot and a verdict.

    bench/sweep_report.py RESULTS_DIR

Reads runs.csv and meta.env (bench/common.sh's formats), writes sweep.md and
sweep.svg into RESULTS_DIR and prints the tables and the verdict.  The
standard library only, so that it runs wherever python3 does.

Each configuration was measured once per round, the rounds interleaved
(bench/common.sh's plan_workload).  A number of locks is compared with 8,
PostgreSQL's own number, by the ratio of their throughputs within each round
(paired), so that a drift of the machine between rounds cancels out: the
median of those ratios and their range.

A number of locks helps where every one of its n rounds' ratios is at least
1 + GAIN.  Every round, not the median, and corrected for the k numbers
compared with 8: with no difference at all, one number beats 8 in a round
at most half the time, so in all n rounds at most 2^-n of sweeps, and some
one of k numbers at most k * 2^-n (the union bound, whatever the rounds'
ratios share through their common 8).  A gain is called only where that is
at most ALPHA; where a number beat 8 in every round but k * 2^-n is larger,
the report says so and how many rounds would decide (5 numbers need 7
rounds).  More locks hurt where every round's ratio of the best number (by
median) is at most 1 - GAIN.  Fewer than MIN_ROUNDS rounds give no verdict.
"""

import math
import os
import statistics
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402  (bench/report.py: its CSV and summary helpers)

BASE = 8            # PostgreSQL's NUM_XLOGINSERT_LOCKS
GAIN = 0.03         # a difference smaller than 3% is not called a gain
MIN_ROUNDS = 5      # fewer paired rounds are not enough to judge
ALPHA = 0.05        # the chance, with no difference, of calling a gain
AUTO = -1           # insert_locks of auto mode in runs.csv


def label(locks):
    return "auto" if locks == AUTO else "%d" % locks


def paired(byrep, a, b):
    """Ratios a / b of the rounds that measured both, sorted."""
    return sorted(byrep[a][k] / byrep[b][k] for k in byrep[a] if k in byrep[b] and byrep[b][k])


def fmt_ratio(r):
    if not r:
        return "-"
    return "%.3f [%.3f..%.3f]" % (statistics.median(r), r[0], r[-1])


def chance(k, n):
    """Bound on the chance that one of k numbers beats 8 in all n rounds
    when none differs from it."""
    return k * 0.5 ** n


def rounds_needed(k):
    """The fewest rounds at which a number that beats 8 in every one is
    called a gain among k numbers."""
    n = MIN_ROUNDS
    while chance(k, n) > ALPHA:
        n += 1
    return n


def judge(best, others):
    """The verdict on (locks, paired ratios) best, the number with the best
    median, among others, every number compared with 8 (best included):
    ('helps', locks, ratios) for the number that beat 8 by GAIN in every
    round with the best median, ('unsettled', ...) for one that did but over
    too few rounds for as many numbers, ('hurts' | 'noise', best...) or
    ('too few rounds', best...)."""
    locks, r = best
    if len(r) < MIN_ROUNDS:
        return ("too few rounds", locks, r)
    beat = [(n, rr) for n, rr in others if len(rr) >= MIN_ROUNDS and rr[0] >= 1 + GAIN]
    if beat:
        n, rr = max(beat, key=lambda p: statistics.median(p[1]))
        if chance(len(others), len(rr)) <= ALPHA:
            return ("helps", n, rr)
        return ("unsettled", n, rr)
    if r[-1] <= 1 - GAIN:
        return ("hurts", locks, r)
    return ("noise", locks, r)


def step_spread(each):
    """The median size of a change of throughput from one second to the
    next, |ln(tps / tps a second before)|, in one run's progress reports
    ("t1;t2;..."), its first second (the clients connecting) left out;
    None with fewer than three seconds."""
    tps = [float(x) for x in (each or "").split(";") if x][1:]
    steps = [abs(math.log(b / a)) for a, b in zip(tps, tps[1:]) if a > 0 and b > 0]
    return statistics.median(steps) if steps else None


def parse_waits(text):
    """{event: share} of one run's top_waits ("Lock:extend=0.58;CPU=0.34")."""
    out = {}
    for part in (text or "").split(";"):
        name, _, share = part.rpartition("=")
        if name and report.num(share) is not None:
            out[name] = float(share)
    return out


def fmt_waits(listed):
    """The three events of the largest mean share over the runs of one
    number of locks, each run's four most sampled (an event not among a
    run's four counts 0 there)."""
    if not listed:
        return "-"
    names = {n for w in listed for n in w}
    mean = {n: sum(w.get(n, 0) for w in listed) / len(listed) for n in names}
    top = sorted(mean, key=lambda n: -mean[n])[:3]
    return ", ".join("%s %.0f%%" % (n, 100 * mean[n]) for n in top)


def analyse(runs):
    """Per (workload, clients): the rows of its table and its verdict."""
    summ = report.summarize(runs)
    byrep = defaultdict(dict)
    busy, steps, waits = defaultdict(list), defaultdict(list), defaultdict(list)
    for r in runs:
        key = (r["workload"], int(r["clients"]), int(r["insert_locks"]))
        if report.num(r.get("tps")) is not None:
            byrep[key][int(r["rep"])] = float(r["tps"])
        if report.num(r.get("cpu_busy")) is not None:
            busy[key].append(float(r["cpu_busy"]))
        w = parse_waits(r.get("top_waits"))
        if w:
            waits[key].append(w)
        st = step_spread(r.get("tps_each_second"))
        if st is not None:
            steps[key].append(st)
    out = []
    for wl, c in sorted({(k[0], k[1]) for k in summ}, key=lambda p: (report.order_of(p[0]), p[1])):
        pts = {k[2][1]: s for k, s in summ.items() if k[0] == wl and k[1] == c and k[2][0] == "walscale"}
        if BASE not in pts:
            continue
        base = (wl, c, BASE)
        rows, best, others = [], None, []
        for locks in sorted(pts, key=lambda n: (n == AUTO, n)):
            s = pts[locks]
            r = paired(byrep, (wl, c, locks), base) if locks != BASE else []
            if locks not in (BASE, AUTO) and r:
                others.append((locks, r))
                if best is None or statistics.median(r) > statistics.median(best[1]):
                    best = (locks, r)
            end = report.locks_range(s) if locks == AUTO else ""
            k = (wl, c, locks)
            rows.append({"locks": locks, "s": s, "ratio": r, "end": end,
                         "busy": statistics.median(busy[k]) if busy[k] else None,
                         "step": statistics.median(steps[k]) if steps[k] else None,
                         "waits": fmt_waits(waits[k])})
        auto = paired(byrep, (wl, c, AUTO), base) if AUTO in pts else []
        auto_best = paired(byrep, (wl, c, AUTO), (wl, c, best[0])) if AUTO in pts and best else []
        v = judge(best, others) if best else ("no other number", None, [])
        out.append({"workload": wl, "clients": c, "rows": rows, "best": best, "auto": auto, "auto_best": auto_best,
                    "verdict": v[0], "judged": (v[1], v[2]), "compared": len(others)})
    return out


def sentence(a):
    wl = a["workload"]
    if a["best"] is None:
        return "%s: only 8 locks were measured" % wl
    locks, r = a["judged"]
    m = statistics.median(r)
    spread = "paired ratio %s over %d rounds" % (fmt_ratio(r), len(r))
    v, k = a["verdict"], a["compared"]
    if v == "helps":
        return "%s: more locks help: %d locks give %+.1f%% over 8, at least %+.1f%% in every round (%s)" % (
            wl, locks, (m - 1) * 100, (r[0] - 1) * 100, spread)
    if v == "unsettled":
        return "%s: not settled: %d locks beat 8 by at least %.1f%% in every round (%s), but with %d numbers " \
            "compared, chance alone does that in up to %.1f%% of sweeps; %d rounds would decide (SWEEP_ROUNDS)" % (
                wl, locks, (r[0] - 1) * 100, spread, k, chance(k, len(r)) * 100, rounds_needed(k))
    if v == "hurts":
        return "%s: more locks cost throughput: even the best, %d, gives %+.1f%% (%s)" % (
            wl, locks, (m - 1) * 100, spread)
    if v == "noise":
        return "%s: no difference beyond the noise: no number beat 8 by %.0f%% in every round; the best median, " \
            "%d locks, gives %+.1f%%, its rounds from %+.1f%% to %+.1f%% (%s)" % (
                wl, GAIN * 100, locks, (m - 1) * 100, (r[0] - 1) * 100, (r[-1] - 1) * 100, spread)
    return "%s: %s to judge %d locks against 8 (%s)" % (wl, v, locks, spread)


def svg(analyses, path):
    """One panel per workload: median tps at each number of locks, bars from
    the slowest to the fastest run, auto mode as its own point."""
    pw, ph, ml, mt, mb = 360, 250, 62, 34, 44
    w = pw * max(1, len(analyses))
    h = ph
    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
         'font-size="11">' % (w, h), '<rect width="100%" height="100%" fill="white"/>']
    for i, a in enumerate(analyses):
        x0, rows = i * pw + ml, a["rows"]
        iw, ih = pw - ml - 16, ph - mt - mb
        top = max(r["s"]["max"] for r in rows) * 1.1 or 1
        step = iw / max(1, len(rows))

        def X(j):
            return x0 + step * (j + 0.5)

        def Y(v):
            return mt + ih - ih * v / top
        o.append('<text x="%d" y="16" font-weight="bold">%s, %d clients</text>' % (i * pw + 8, a["workload"], a["clients"]))
        o.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (x0, mt + ih, x0 + iw, mt + ih))
        o.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (x0, mt, x0, mt + ih))
        for k in range(5):
            v = top * k / 4
            o.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (x0, Y(v), x0 + iw, Y(v)))
            o.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (x0 - 4, Y(v) + 4, report.fmt_tps(v)))
        base = next(r for r in rows if r["locks"] == BASE)["s"]["median"]
        o.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="gray" stroke-dasharray="4,3"/>' % (
            x0, Y(base), x0 + iw, Y(base)))
        fixed = [(j, r) for j, r in enumerate(rows) if r["locks"] != AUTO]
        o.append('<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="%s"/>' % " ".join(
            "%.1f,%.1f" % (X(j), Y(r["s"]["median"])) for j, r in fixed))
        for j, r in enumerate(rows):
            s, color = r["s"], "#d62728" if r["locks"] == AUTO else "#1f77b4"
            o.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"/>' % (X(j), Y(s["min"]), X(j), Y(s["max"]), color))
            o.append('<circle cx="%.1f" cy="%.1f" r="4" fill="%s"/>' % (X(j), Y(s["median"]), color))
            o.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (X(j), mt + ih + 15, label(r["locks"])))
        o.append('<text x="%d" y="%d" text-anchor="middle">walscale.insert_locks (dashed: 8 locks\' median)</text>' % (
            x0 + iw / 2, ph - 8))
        o.append('<text transform="translate(%d,%d) rotate(-90)" text-anchor="middle">tps, median and min..max</text>' % (
            i * pw + 12, mt + ih / 2))
    o.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    d = sys.argv[1]
    meta = report.read_meta(d)
    runs = report.read_csv(os.path.join(d, "runs.csv"))
    analyses = analyse(runs)
    if not analyses:
        print("sweep: no runs at 8 locks in %s/runs.csv" % d, file=sys.stderr)
        return 1
    L = ["# Scaling sweep on %s" % meta.get("host", "?"), ""]
    L.append("%s CPUs (%s), %s, %s; %s." % (meta.get("cores", "?"), meta.get("cpu", "?"), meta.get("memory", "?"),
                                            meta.get("os", "?"), meta.get("pg_patched", "?").rsplit(" (", 1)[0]))
    L.append("Runs of %s s, %s rounds interleaved, %s clients, wal_buffers %s; load average %s at the start, %s at the "
             "end; %s in all. Command: `%s`." % (meta.get("seconds", "?"), meta.get("reps", "?"), meta.get("clients", "?"),
                                                 meta.get("wal_buffers", "?"), meta.get("load_start", "?"),
                                                 meta.get("load_end", "?"), meta.get("elapsed", "?"), meta.get("command", "?")))
    L.append("")
    L.append("Ratio to 8: the throughput at that number over the throughput at 8 locks (PostgreSQL's number) in the "
             "same round, median [min..max] over the rounds. A gain is called when every round's ratio is at least "
             "%.2f over enough rounds that chance alone, among the numbers compared, does that in at most %.0f%% of "
             "sweeps (k numbers need k / 2^rounds <= %.2f); a loss when every round's ratio of the best number is "
             "at most %.2f. Auto mode starts each of its runs afresh. CPU busy: the share of the machine's CPU time "
             "not idle during a run, every process's (pgbench's too), median over the runs. 1-s step: the median "
             "change of throughput from one second to the next (|ln| of their ratio, pgbench -P 1, the first "
             "second left out), median over the runs: the noise a window of auto mode sees at a fixed count, at "
             "1 s. What active backends waited on: walscale_waits' samples, CPU for a backend running." % (1 + GAIN, ALPHA * 100, ALPHA, 1 - GAIN))
    L.append("")
    for a in analyses:
        L.append("## %s, %d clients" % (a["workload"], a["clients"]))
        L.append("")
        rows = []
        for r in a["rows"]:
            s = r["s"]
            rows.append([label(r["locks"]), s["n"], report.fmt_spread(s), fmt_ratio(r["ratio"]) if r["ratio"] else "1",
                         report.opt(s, "blocking_per_1000", "%.1f") or "-",
                         "-" if r["busy"] is None else "%.0f%%" % (100 * r["busy"]),
                         "-" if r["step"] is None else "%.1f%%" % (100 * r["step"]), r["end"] or "-"])
        L.append(report.md_table(["insert_locks", "runs", "tps median [min..max]", "ratio to 8 (paired)",
                                  "blocking waits / 1000 acquisitions", "CPU busy", "1-s step",
                                  "auto's locks at the end"], rows))
        if any(r["waits"] != "-" for r in a["rows"]):
            L.append("")
            L.append(report.md_table(["insert_locks", "what active backends waited on (mean share of samples)"],
                                     [[label(r["locks"]), r["waits"]] for r in a["rows"]]))
        L.append("")
    L.append("## Verdict")
    L.append("")
    for a in analyses:
        L.append("- " + sentence(a) + ".")
        if a["auto"]:
            L.append("  Auto mode: %s of 8 locks' throughput%s." % (
                fmt_ratio(a["auto"]), ", %s of the best number's" % fmt_ratio(a["auto_best"]) if a["auto_best"] else ""))
    helps = [a for a in analyses if a["verdict"] == "helps"]
    unsettled = [a for a in analyses if a["verdict"] == "unsettled"]
    judged = [a for a in analyses if a["verdict"] in ("helps", "hurts", "noise")]
    L.append("")
    if helps:
        L.append("**More WAL insertion locks help on this machine** for %s: set `walscale.insert_locks` to the best "
                 "number above, or leave auto mode (the default) on." % ", ".join(a["workload"] for a in helps))
    elif unsettled:
        L.append("**Not settled on this machine** for %s: a number of locks beat 8 in every round, but too few "
                 "rounds were run to tell that from chance among the numbers compared; rerun with the rounds named "
                 "above." % ", ".join(a["workload"] for a in unsettled))
    elif len(judged) < len(analyses):
        L.append("**Too little was measured to judge**: a verdict needs a number of locks besides 8 and at least "
                 "%d rounds (SWEEP_MAX_LOCKS, SWEEP_ROUNDS): with fewer, chance alone gives ratios like those above." % MIN_ROUNDS)
    else:
        L.append("**No gain from more WAL insertion locks was shown on this machine** for these workloads: no "
                 "number beat 8 (PostgreSQL's number) in every round, within the noise shown above.")
    L.append("")
    L.append("![tps against walscale.insert_locks](sweep.svg)")
    text = "\n".join(L) + "\n"
    with open(os.path.join(d, "sweep.md"), "w") as f:
        f.write(text)
    svg(analyses, os.path.join(d, "sweep.svg"))
    print(text[text.index("## "):])
    return 0


if __name__ == "__main__":
    sys.exit(main())
