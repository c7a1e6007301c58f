#!/usr/bin/env python3
"""Write report.md, summary.csv and PNG plots for one walscale benchmark.

    bench/report.py RESULTS_DIR
    bench/report.py --best-fixed RESULTS_DIR   (for bench/run.sh)

RESULTS_DIR holds what bench/run.sh or bench/device-sweep.sh measured:
meta.env, runs.csv, workloads.tsv, settings-*.conf and, when instruction
counts were taken, instructions.csv and cg-functions.csv.  The report can be
written again from those files at any time (for example after fetching a
device run's CSV files); nothing here measures anything.
"""

import csv
import math
import os
import statistics
import sys
from collections import OrderedDict, defaultdict

# Overhead targets of the issue "make bench" (instructions, callgrind).
TARGET_RECORD = 1.0          # % more per WAL record, walscale 8/0 vs stock
TARGET_COMMIT_64 = 1.0       # % more per commit at 64 locks vs stock's 8
TARGET_COMMIT_1024 = 10.0    # % more per commit at 1024 locks vs stock's 8

SWEEP_WORKLOADS_ORDER = ["insdel", "tpcb", "fp_fit", "fp_overflow", "walmsg", "synccommit"]


def read_meta(d, name="meta.env"):
    meta = OrderedDict()
    p = os.path.join(d, name)
    if os.path.exists(p):
        with open(p) as f:
            for line in f:
                line = line.rstrip("\n")
                if "=" in line:
                    k, v = line.split("=", 1)
                    meta[k] = v
    return meta


def read_csv(p):
    if not os.path.exists(p):
        return []
    with open(p, newline="") as f:
        return list(csv.DictReader(f))


def read_workloads(d):
    out = OrderedDict()
    p = os.path.join(d, "workloads.tsv")
    if os.path.exists(p):
        with open(p) as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
        for r in rows:
            out[r["workload"]] = r
    return out


def num(x, default=None):
    try:
        return float(x)
    except (TypeError, ValueError):
        return default


def is_fp_workload(wl):
    return wl.startswith("fp_")


def config_key(r):
    return (r["variant"], int(r["insert_locks"]), int(r["attempts"]), int(r["fastpath_groups"]))


def config_label(key, wl):
    variant, locks, attempts, fp = key
    if variant == "stock":
        return "stock"
    if is_fp_workload(wl):
        return "walscale fastpath_groups=%d%s" % (fp, " (derived)" if fp == 0 else "")
    if locks == -1:
        return "walscale auto/%d" % attempts
    return "walscale %d/%d" % (locks, attempts)


def sort_key(key):
    variant, locks, attempts, fp = key
    return (0 if variant == "stock" else 1, fp, locks, attempts)


def pct(ratio):
    return "%+.1f%%" % ((ratio - 1) * 100)


def fmt_tps(x):
    if x is None:
        return "n/a"
    if x >= 100:
        return "%.0f" % x
    return "%.1f" % x


def summarize(runs):
    """(workload, clients, config key) -> summary dict"""
    groups = defaultdict(list)
    for r in runs:
        if num(r.get("tps")) is None:
            continue
        groups[(r["workload"], int(r["clients"]), config_key(r))].append(r)
    summ = {}
    for (wl, clients, key), rs in groups.items():
        tps = sorted(num(r["tps"]) for r in rs)
        s = {
            "workload": wl, "clients": clients, "key": key, "n": len(tps),
            "min": tps[0], "median": statistics.median(tps), "max": tps[-1],
        }
        if key[0] == "walscale" and rs[0].get("acquisitions", "") != "":
            acq = sum(num(r["acquisitions"], 0) for r in rs)
            xacts = sum(num(r["xacts"], 0) for r in rs)
            s["acq_per_xact"] = acq / xacts if xacts else None
            s["blocking_per_1000"] = 1000 * sum(num(r["blocking_waits"], 0) for r in rs) / acq if acq else 0.0
            s["failed_per_1000"] = 1000 * sum(num(r["failed_attempts"], 0) for r in rs) / acq if acq else 0.0
            s["blocked_ms"] = statistics.median(num(r["blocked_ms"], 0) for r in rs)
            s["flush_waits_per_1000_xacts"] = 1000 * sum(num(r["flush_waits"], 0) for r in rs) / xacts if xacts else 0.0
            s["locks_used"] = max(int(num(r["locks_used"], 0)) for r in rs)
            s["fp_overflows_per_xact"] = sum(num(r["fp_overflows"], 0) for r in rs) / xacts if xacts else 0.0
            s["fp_groups"] = int(num(rs[0]["fp_groups"], 0))
            ends = sorted(int(num(r["locks_at_end"])) for r in rs if num(r.get("locks_at_end")) is not None)
            if ends:
                s["locks_at_end"] = (ends[0], ends[-1])
        summ[(wl, clients, key)] = s
    # ratio to stock
    for (wl, clients, key), s in summ.items():
        st = summ.get((wl, clients, ("stock", 8, 0, 0)))
        s["ratio"] = s["median"] / st["median"] if st and st["median"] else None
    return summ


def write_summary_csv(d, summ):
    cols = ["workload", "clients", "variant", "insert_locks", "attempts", "fastpath_groups", "n",
            "tps_min", "tps_median", "tps_max", "ratio_to_stock", "blocking_waits_per_1000_acq",
            "failed_attempts_per_1000_acq", "blocked_ms_median_per_run", "acquisitions_per_xact",
            "flush_waits_per_1000_xacts", "fp_overflows_per_xact", "locks_used"]
    with open(os.path.join(d, "summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for k in sorted(summ, key=lambda k: (order_of(k[0]), k[1], sort_key(k[2]))):
            s = summ[k]
            v, l, a, fp = s["key"]
            w.writerow([s["workload"], s["clients"], v, l, a, fp, s["n"],
                        "%.2f" % s["min"], "%.2f" % s["median"], "%.2f" % s["max"],
                        "" if s["ratio"] is None else "%.4f" % s["ratio"],
                        opt(s, "blocking_per_1000", "%.3f"), opt(s, "failed_per_1000", "%.3f"),
                        opt(s, "blocked_ms", "%.3f"), opt(s, "acq_per_xact", "%.2f"),
                        opt(s, "flush_waits_per_1000_xacts", "%.3f"),
                        opt(s, "fp_overflows_per_xact", "%.2f"), opt(s, "locks_used", "%d")])


def opt(s, k, f):
    return "" if s.get(k) is None else f % s[k]


def order_of(wl):
    return SWEEP_WORKLOADS_ORDER.index(wl) if wl in SWEEP_WORKLOADS_ORDER else 99


# ---------------------------------------------------------------------------
# Plots

def plots(d, summ, wls, workloads):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:  # noqa: BLE001
        print("report: no matplotlib (%s), no plots" % e, file=sys.stderr)
        return {}
    made = {}
    for wl in wls:
        pts = [s for s in summ.values() if s["workload"] == wl]
        if not pts:
            continue
        clients = sorted({s["clients"] for s in pts})
        fig, axes = plt.subplots(1, len(clients), figsize=(5.2 * len(clients), 4.2), squeeze=False)
        for ax, c in zip(axes[0], clients):
            cp = [s for s in pts if s["clients"] == c]
            stock = [s for s in cp if s["key"][0] == "stock"]
            if is_fp_workload(wl):
                cp.sort(key=lambda s: sort_key(s["key"]))
                labels = ["stock" if s["key"][0] == "stock" else
                          "fp=%d%s" % (s["key"][3], " (derived)" if s["key"][3] == 0 else "") for s in cp]
                med = [s["median"] for s in cp]
                err = [[s["median"] - s["min"] for s in cp], [s["max"] - s["median"] for s in cp]]
                colors = ["#888888" if s["key"][0] == "stock" else "#1f77b4" for s in cp]
                ax.bar(range(len(cp)), med, yerr=err, color=colors, capsize=4)
                ax.set_xticks(range(len(cp)))
                ax.set_xticklabels(labels, rotation=20)
                ax.set_xlabel("walscale.fastpath_groups")
            else:
                ws = [s for s in cp if s["key"][0] == "walscale"]
                for att in sorted({s["key"][2] for s in ws}):
                    line = sorted((s for s in ws if s["key"][2] == att), key=lambda s: s["key"][1])
                    xs = [s["key"][1] for s in line]
                    ys = [s["median"] for s in line]
                    err = [[s["median"] - s["min"] for s in line], [s["max"] - s["median"] for s in line]]
                    ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label="walscale, attempts %d" % att)
                if stock:
                    st = stock[0]
                    ax.axhline(st["median"], color="black", linestyle="--", label="stock (8 locks)")
                    ax.axhspan(st["min"], st["max"], color="gray", alpha=0.2)
                ax.set_xscale("log", base=2)
                ticks = sorted({s["key"][1] for s in ws})
                ax.set_xticks(ticks)
                ax.set_xticklabels([str(t) for t in ticks])
                ax.set_xlabel("walscale.insert_locks")
            ax.set_ylabel("tps (median, bars min..max)")
            ax.set_ylim(bottom=0)
            ax.set_title("%d client%s" % (c, "" if c == 1 else "s"))
            ax.grid(True, alpha=0.3)
            if not is_fp_workload(wl):
                ax.legend(fontsize=8, loc="lower right")
        title = workloads[wl]["title"] if wl in workloads else wl
        fig.suptitle(title, fontsize=10)
        fig.tight_layout()
        name = "%s.png" % wl
        fig.savefig(os.path.join(d, name), dpi=90)
        plt.close(fig)
        made[wl] = name
    return made


def best_fixed(summ, wl, c):
    """The fixed walscale setting (L/A, not auto) with the highest median."""
    fixed = [s for s in summ.values() if s["workload"] == wl and s["clients"] == c
             and s["key"][0] == "walscale" and s["key"][1] != -1]
    return max(fixed, key=lambda s: s["median"]) if fixed else None


def auto_pairs(summ):
    """(workload, clients) that have an auto arm and a fixed setting."""
    return sorted({(wl, c) for (wl, c, key) in summ
                   if key == ("walscale", -1, 0, 0) and best_fixed(summ, wl, c)},
                  key=lambda p: (order_of(p[0]), p[1]))


def static_fitted(summ):
    """The one fixed walscale setting (L/A) that does best across every auto
    arm's (workload, clients) of this run: the highest geometric mean of its
    median over that pair's best fixed median, among the settings measured
    at every pair.  It is the static count for this machine's CPU size,
    fitted on the same family of loads that auto mode is judged on, so that
    the auto tables can show whether adapting beats one number per machine
    (bench/results/auto-grid.md does the same over the simulated family)."""
    pairs = auto_pairs(summ)
    if not pairs:
        return None
    common = None
    for wl, c in pairs:
        keys = {s["key"] for s in summ.values() if s["workload"] == wl and s["clients"] == c
                and s["key"][0] == "walscale" and s["key"][1] != -1}
        common = keys if common is None else common & keys
    scored = []
    for key in common or ():
        logs = [math.log(summ[(wl, c, key)]["median"] / best_fixed(summ, wl, c)["median"])
                for wl, c in pairs
                if summ[(wl, c, key)]["median"] and best_fixed(summ, wl, c)["median"]]
        if len(logs) == len(pairs):
            scored.append((sum(logs) / len(logs), key))
    return max(scored)[1] if scored else None


def print_best_fixed(d):
    """For bench/run.sh: "workload clients BEST STATIC" per auto arm of
    runs.csv, each as L/A: the arm's best fixed setting and the static one
    fitted on the whole run (static_fitted)."""
    summ = summarize(read_csv(os.path.join(d, "runs.csv")))
    static = static_fitted(summ)
    for wl, c in auto_pairs(summ):
        b = best_fixed(summ, wl, c)
        s = static or b["key"]
        print("%s %d %d/%d %d/%d" % (wl, c, b["key"][1], b["key"][2], s[1], s[2]))


def locks_range(s):
    lo_hi = s.get("locks_at_end")
    if not lo_hi:
        return "?"
    return str(lo_hi[0]) if lo_hi[0] == lo_hi[1] else "%d..%d" % lo_hi


def fmt_spread(s):
    return "%s [%s..%s]" % (fmt_tps(s["median"]), fmt_tps(s["min"]), fmt_tps(s["max"]))


def auto_against_best(summ, static=None):
    """Per auto arm: auto's and the best fixed setting's summaries, the
    cells both auto tables start with, auto / stock and auto / the static
    setting fitted on this run (their last two)."""
    static = static or static_fitted(summ)
    for wl, c in auto_pairs(summ):
        a = summ[(wl, c, ("walscale", -1, 0, 0))]
        b = best_fixed(summ, wl, c)
        st = summ.get((wl, c, ("stock", 8, 0, 0)))
        lead = [wl, c, fmt_spread(a), locks_range(a), config_label(b["key"], wl), fmt_spread(b),
                "%.3f" % (a["median"] / b["median"]) if b["median"] else "-"]
        vs_stock = "%.3f" % (a["median"] / st["median"]) if st and st["median"] else "-"
        fit = summ.get((wl, c, static)) if static else None
        vs_static = ("%s: %.3f" % (config_label(static, wl), a["median"] / fit["median"])
                     if fit and fit["median"] else "-")
        yield a, b, lead, vs_stock, vs_static


# Auto mode passes when its median is within this fraction of the best
# fixed setting's (the issue "self-tuning": within 5%).
AUTO_WITHIN = 0.05


def head_to_head_section(d, L):
    """Auto, the sweep's best fixed setting and stock, measured again in
    rounds of their own (confirm.csv): the sweep's best is the highest of
    many noisy medians, so comparing auto with it there favours the best."""
    runs = read_csv(os.path.join(d, "confirm.csv"))
    if not runs:
        return
    summ = summarize(runs)
    # the static setting fitted on the sweep, which the rounds were planned with
    static = static_fitted(summarize(read_csv(os.path.join(d, "runs.csv"))))
    byrep = defaultdict(dict)
    for r in runs:
        if num(r.get("tps")) is not None:
            byrep[(r["workload"], int(r["clients"]), config_key(r))][int(r["rep"])] = num(r["tps"])
    rows = []
    for a, b, lead, vs_stock, vs_static in auto_against_best(summ, static):
        wl, c = a["workload"], a["clients"]
        ra, rb = byrep[(wl, c, a["key"])], byrep[(wl, c, b["key"])]
        paired = sorted(ra[k] / rb[k] for k in ra if k in rb and rb[k])
        ratio = a["median"] / b["median"]
        if ratio >= 1 - AUTO_WITHIN:
            verdict = "yes"
        elif a["max"] >= b["min"]:
            verdict = "no, %.1f%% behind (within noise)" % ((1 - ratio) * 100)
        else:
            verdict = "**no, %.1f%% behind**" % ((1 - ratio) * 100)
        rows.append(lead + ["%.3f [%.3f..%.3f]" % (statistics.median(paired), paired[0], paired[-1])
                            if paired else "-", verdict, vs_stock, vs_static])
    if not rows:
        return
    n = max(s["n"] for s in summ.values())
    secs = runs[0].get("seconds", "?")
    L.append("### Auto mode head to head with the best fixed setting\n")
    L.append("The sweep's best fixed setting is the highest of many noisy medians, so the table above "
             "favours it. Here auto, that setting and stock were measured again, %d rounds of %s s runs "
             "interleaved among the three alone (`confirm-plan.txt`, `confirm.csv`). Paired: auto / best "
             "within each round, median [min..max]. Within %d%%: auto's median at least %.2f times the "
             "best's.\n" % (n, secs, AUTO_WITHIN * 100, 1 - AUTO_WITHIN))
    L.append(md_table(["workload", "clients", "auto median [min..max]", "auto's locks at the end",
                       "best fixed", "its median [min..max]", "auto / best", "paired auto / best",
                       "within 5%", "auto / stock", "auto / static fitted"], rows))
    L.append("")


# ---------------------------------------------------------------------------
# Markdown

def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(x) for x in r) + " |")
    return "\n".join(out)


def instructions_section(d, lines):
    ins = read_csv(os.path.join(d, "instructions.csv"))
    funcs = read_csv(os.path.join(d, "cg-functions.csv"))
    verdicts = []
    if not ins:
        return verdicts
    by = {r["config"]: r for r in ins}
    st = by.get("stock")

    def rel(r, k):
        if not st or not num(st[k]):
            return ""
        return pct(num(r[k]) / num(st[k]))

    lines.append("## Instruction counts (callgrind, one backend)\n")
    r0 = ins[0]
    lines.append(
        "Each configuration ran one single-user backend (`postgres --single`, which processes "
        "`shared_preload_libraries`) under `valgrind --tool=callgrind`, on a fresh copy of one "
        "template cluster. A block of N operations and a block of 2N were each followed by a "
        "`SELECT pg_backend_pid()` marker and `--dump-after=pg_backend_pid`; the cost of one "
        "operation is (profile of 2N - profile of N) / N, so start-up and warm-up cancel. "
        "N = %s WAL records, %s single-row commits, %s plpgsql commits. Settings: fsync = off "
        "(the fdatasync itself is kernel time, not counted either way), synchronous_commit = on, "
        "wal_buffers = 64MB. See bench/instructions.sh.\n"
        % (r0["n_records"], r0["n_commits"], r0["n_commits_plpgsql"]))
    lines.append("- **per WAL record**: `SELECT count(pg_logical_emit_message(false, 'walscale', 'x')) "
                 "FROM generate_series(1, N)`, one small non-transactional record each, not flushed.")
    lines.append("- **per commit**: N lines `INSERT INTO cg_commit VALUES (1);`, each its own "
                 "transaction whose commit flushes WAL (`XLogFlush` -> `WaitXLogInsertionsToFinish`), "
                 "the method behind the reference figures' 52.0k / 54.4k / 94.7k per commit at 8 / 64 / 1024 locks "
                 "for stock with the constant raised.")
    lines.append("- **per commit (plpgsql)**: `DO $$ ... FOR i IN 1..N LOOP INSERT ...; COMMIT; END LOOP $$`: "
                 "the same commit without parsing and planning a statement, so the flush path is a "
                 "larger share (a stricter view of the same cost).\n")
    rows = []
    for r in ins:
        name = {"stock": "stock (8 locks)", "patched-no-module": "patched, walscale not loaded (8)"}.get(
            r["config"], "walscale %s/%s" % (r["insert_locks"], r["attempts"]))
        rows.append([name, "%.0f" % num(r["per_record"]), rel(r, "per_record"),
                     "%.0f" % num(r["per_commit"]), rel(r, "per_commit"),
                     "%.0f" % num(r["per_commit_plpgsql"]), rel(r, "per_commit_plpgsql")])
    lines.append(md_table(["configuration", "instr / WAL record", "vs stock", "instr / commit",
                           "vs stock", "instr / commit (plpgsql)", "vs stock"], rows))
    lines.append("")
    if st:
        lines.append("Stock's own figure against the reference figures': %.1fk per commit here, 52.0k there; "
                     "the reference stock with the constant raised to 64 and 1024 locks: 54.4k (+4.6%%) "
                     "and 94.7k (+82%%).\n" % (num(st["per_commit"]) / 1000))

    # verdicts
    def ver(name, cfg, key, limit, info=False):
        if st and cfg in by:
            r = num(by[cfg][key]) / num(st[key])
            over = (r - 1) * 100 - limit
            if info:
                v = "for information: %s" % ("within" if over <= 0 else "%.1f points over" % over)
            else:
                v = "met" if over <= 0 else "**missed by %.1f points**" % over
            verdicts.append((name, pct(r), "+%.0f%%" % limit, v))
    ver("instructions per WAL record, walscale 8/0 vs stock", "walscale-8", "per_record", TARGET_RECORD)
    ver("instructions per WAL record, patched without walscale vs stock", "patched-no-module",
        "per_record", TARGET_RECORD)
    ver("instructions per commit (flush path), 64 locks vs stock's 8", "walscale-64", "per_commit",
        TARGET_COMMIT_64)
    ver("instructions per commit (flush path), 1024 locks vs stock's 8", "walscale-1024", "per_commit",
        TARGET_COMMIT_1024)
    ver("per plpgsql commit (no parse/plan, stricter), 64 locks vs stock's 8", "walscale-64",
        "per_commit_plpgsql", TARGET_COMMIT_64, info=True)
    ver("per plpgsql commit (no parse/plan, stricter), 1024 locks vs stock's 8", "walscale-1024",
        "per_commit_plpgsql", TARGET_COMMIT_1024, info=True)

    if funcs:
        lines.append("### Where the instructions go\n")
        lines.append("Inclusive instructions per operation (self in parentheses) of the functions on the "
                     "insertion and flush paths, from `callgrind_annotate` of the same profile pairs. "
                     "A function the compiler inlined has no entry of its own (its cost is in its caller).\n")
        cfgs = [r["config"] for r in ins]
        for measure, title in (("record", "per WAL record"), ("commit", "per commit"),
                               ("commit_plpgsql", "per commit (plpgsql)")):
            fm = defaultdict(dict)
            for r in funcs:
                if r["measure"] == measure:
                    fm[r["function"]][r["config"]] = (num(r["inclusive_per_op"]), num(r["self_per_op"]))
            rows = []
            for fn, v in fm.items():
                if all(abs(v.get(c, (0, 0))[0]) < 0.05 for c in cfgs):
                    continue
                rows.append(["`%s`" % fn] + ["%.1f (%.1f)" % v[c] if c in v else "" for c in cfgs])
            if rows:
                lines.append("**%s**\n" % title)
                lines.append(md_table(["function"] + cfgs, rows))
                lines.append("")
    return verdicts


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--best-fixed":
        print_best_fixed(sys.argv[2])
        return
    d = sys.argv[1] if len(sys.argv) > 1 else "."
    meta = read_meta(d)
    runs = read_csv(os.path.join(d, "runs.csv"))
    workloads = read_workloads(d)
    summ = summarize(runs)
    write_summary_csv(d, summ)
    wls = [w for w in SWEEP_WORKLOADS_ORDER if any(s["workload"] == w for s in summ.values())]
    wls += sorted({s["workload"] for s in summ.values()} - set(wls))
    pngs = plots(d, summ, wls, workloads)

    L = []
    L.append("# walscale benchmark: %s, %s (%s mode)\n" % (meta.get("date", "?"), meta.get("host", "?"),
                                                          meta.get("mode", "?")))
    L.append("Measured by `%s` in %s (the estimate printed at its start: %s); written by "
             "bench/report.py from the CSV files beside this report, which hold every run.\n"
             % (meta.get("command", "make bench"), meta.get("elapsed", "?"), meta.get("estimated", "?")))
    L.append("## Machine and software\n")
    rows = [
        ["CPU", meta.get("cpu", "?")], ["cores", meta.get("cores", "?")], ["memory", meta.get("memory", "?")],
        ["OS", meta.get("os", "?")], ["kernel", meta.get("kernel", "?")],
        ["stock PostgreSQL", meta.get("pg_stock", "?")], ["patched PostgreSQL", meta.get("pg_patched", "?")],
        ["configure", "`%s`" % meta.get("pg_configure", "?")], ["CFLAGS", "`%s`" % meta.get("pg_cflags", "?")],
        ["walscale commit", meta.get("commit", "?")], ["core patches (sha256)", meta.get("patches", "?")],
        ["runs", "%s s each, %s repetitions, pgbench -j min(clients, %s), %s server restarts"
         % (meta.get("seconds", "?"), meta.get("reps", "?"), meta.get("cores_for_pgbench_j", "?"),
            meta.get("restarts", "?"))],
        ["started (UTC)", meta.get("started", "?")],
    ]
    if meta.get("load_start") or meta.get("load_end"):
        rows.append(["load average (1, 5, 15 min)", "%s at the start, %s at the end (other jobs share "
                     "the machine when this exceeds the core count)" % (meta.get("load_start", "?"),
                                                                      meta.get("load_end", "?"))])
    if meta.get("note"):
        rows.append(["note", meta["note"]])
    L.append(md_table(["", ""], rows))
    L.append("")

    # --- summary
    L.append("## Summary\n")
    body = []
    verdicts = instructions_section(d, body)
    if verdicts:
        L.append("### Overhead targets\n")
        L.append(md_table(["target", "measured", "limit", "verdict"], [list(v) for v in verdicts]))
        L.append("")

    L.append("### walscale 8/0 against stock (must match)\n")
    L.append("Within noise: the min..max ranges of the two overlap.\n")
    rows = []
    for wl in wls:
        for c in sorted({s["clients"] for s in summ.values() if s["workload"] == wl}):
            st = summ.get((wl, c, ("stock", 8, 0, 0)))
            ws = summ.get((wl, c, ("walscale", 8, 0, 0)))
            if not st or not ws:
                continue
            overlap = ws["min"] <= st["max"] and st["min"] <= ws["max"]
            rows.append([wl, c, fmt_spread(st), fmt_spread(ws),
                         "%.3f" % ws["ratio"], "yes" if overlap else "**no**"])
    if rows:
        L.append(md_table(["workload", "clients", "stock median [min..max]", "walscale 8/0 median [min..max]",
                           "ratio", "within noise"], rows))
        L.append("")

    L.append("### Best setting per workload and client count\n")
    rows = []
    for wl in wls:
        for c in sorted({s["clients"] for s in summ.values() if s["workload"] == wl}):
            cand = [s for s in summ.values() if s["workload"] == wl and s["clients"] == c
                    and s["key"][0] == "walscale"]
            st = summ.get((wl, c, ("stock", 8, 0, 0)))
            if not cand or not st:
                continue
            b = max(cand, key=lambda s: s["median"])
            why = ""
            if b.get("blocking_per_1000") is not None:
                why = "%.2f blocking / %.2f failed per 1000 acq" % (b["blocking_per_1000"], b["failed_per_1000"])
                if is_fp_workload(wl):
                    why = "%.1f fast-path overflows / xact" % b["fp_overflows_per_xact"]
            clear = "yes" if b["min"] > st["max"] else ("no (slower)" if b["max"] < st["min"] else "no")
            rows.append([wl, c, config_label(b["key"], wl), fmt_tps(b["median"]), fmt_tps(st["median"]),
                         "%.3f" % b["ratio"], clear, why])
    if rows:
        L.append("Clear of noise: the best configuration's slowest run beat stock's fastest.\n")
        L.append(md_table(["workload", "clients", "best configuration", "median tps", "stock median",
                           "ratio", "clear of noise", "walscale counters of the best"], rows))
        L.append("")
    L.append("### Auto mode against the best fixed setting\n")
    rows = []
    for a, b, lead, vs_stock, vs_static in auto_against_best(summ):
        rows.append(lead + ["yes" if a["max"] >= b["min"] else "no (slower)", vs_stock, vs_static])
    if rows:
        L.append("Auto mode (`walscale.insert_locks = -1`, `walscale.auto_interval = 1s`, "
                 "restarted from its CPU-derived start with each configuration change) against the fixed "
                 "setting with the highest median, interleaved with it. Within noise: auto's fastest run "
                 "reached the best setting's slowest. Static fitted: the one fixed setting that does "
                 "best across every auto arm of this run (geometric mean of its median over each arm's "
                 "best), the static count for this machine's CPU size fitted on these loads.\n")
        L.append(md_table(["workload", "clients", "auto median [min..max]", "auto's locks at the end",
                           "best fixed", "its median [min..max]", "auto / best", "within noise",
                           "auto / stock", "auto / static fitted"], rows))
        L.append("")
    head_to_head_section(d, L)
    if os.path.exists(os.path.join(d, "auto.md")):
        L.append("Auto mode from a cold start at 1 lock, tps each second with each resize marked: "
                 "[auto.md](auto.md) (bench/auto-coldstart.sh).\n")
        if os.path.exists(os.path.join(d, "auto-coldstart.png")):
            L.append("![auto mode from a cold start](auto-coldstart.png)\n")
    try:
        cores = int(meta.get("cores", "0"))
    except ValueError:
        cores = 0
    if 0 < cores < 8:
        L.append("On %d cores at most %d backends run at once, so insertion locks are rarely contended "
                 "(see the blocking waits columns): these runs show what walscale costs, not what it "
                 "buys on many cores. Differences of a few percent between configurations are within "
                 "the noise of a shared machine (compare each point's min..max); the instruction "
                 "counts above are exact.\n" % (cores, cores))

    # --- per workload
    L.append("## Workloads\n")
    for wl in wls:
        info = workloads.get(wl, {})
        L.append("### %s: %s\n" % (wl, info.get("title", "")))
        if info:
            L.append("- command: `%s`" % info.get("pgbench", ""))
            L.append("- data: %s" % info.get("data", ""))
            L.append("- server settings: `settings-%s.conf` (below), plus the configuration's walscale "
                     "settings\n" % info.get("settings", ""))
        fp = is_fp_workload(wl)
        header = ["clients", "configuration", "runs", "tps min", "tps median", "tps max", "ratio to stock"]
        if fp:
            header += ["fast-path groups", "fast-path overflows / xact"]
        else:
            header += ["blocking waits / 1000 acq", "blocked ms / run", "failed attempts / 1000 acq",
                       "acquisitions / xact", "locks used"]
            if wl == "synccommit":
                header += ["flush waits / 1000 xacts"]
        rows = []
        for k in sorted((k for k in summ if k[0] == wl), key=lambda k: (k[1], sort_key(k[2]))):
            s = summ[k]
            r = [s["clients"], config_label(s["key"], wl), s["n"], fmt_tps(s["min"]), fmt_tps(s["median"]),
                 fmt_tps(s["max"]), "%.3f" % s["ratio"] if s["ratio"] else "n/a"]
            has = s.get("blocking_per_1000") is not None
            if fp:
                r += [s["fp_groups"] if has else "4 (derived)",
                      "%.1f" % s["fp_overflows_per_xact"] if has else "n/a"]
            else:
                r += ["%.2f" % s["blocking_per_1000"] if has else "n/a",
                      "%.1f" % s["blocked_ms"] if has else "n/a",
                      "%.2f" % s["failed_per_1000"] if has else "n/a",
                      "%.1f" % s["acq_per_xact"] if has and s["acq_per_xact"] is not None else "n/a",
                      s["locks_used"] if has else "n/a"]
                if wl == "synccommit":
                    r += ["%.1f" % s["flush_waits_per_1000_xacts"] if has else "n/a"]
            rows.append(r)
        L.append(md_table(header, rows))
        L.append("")
        if wl in pngs:
            L.append("![%s](%s)\n" % (wl, pngs[wl]))

    L.extend(body)

    # --- settings
    L.append("## Server settings\n")
    for name in ("seed000", "synccommit"):
        p = os.path.join(d, "settings-%s.conf" % name)
        if os.path.exists(p):
            with open(p) as f:
                L.append("`settings-%s.conf`:\n\n```\n%s```\n" % (name, f.read()))
    L.append("Each walscale configuration adds `shared_preload_libraries = 'walscale'`, "
             "`walscale.insert_locks`, `walscale.insert_lock_attempts` and `walscale.fastpath_groups` "
             "(\"walscale L/A\" is L locks and A attempts, fastpath_groups 0; \"fastpath_groups=N\" keeps "
             "8 locks and 0 attempts). Stock runs the unpatched build with none of them. Both builds "
             "share one data directory made by the stock initdb.\n")

    L.append("## Method\n")
    L.append("- Configurations are interleaved: each repetition measures every configuration once, in "
             "the order A B C, then C B A, then a fixed pseudo-random order and its reverse, so that a "
             "drift of the machine spreads over all of them (`plan.txt` has the order). The server restarts when the build, `insert_locks`, `fastpath_groups` or the "
             "workload's settings change, and reloads when only `insert_lock_attempts` does.")
    L.append("- Before each run: the workload's preparation (TRUNCATE and/or CHECKPOINT), then "
             "`SELECT walscale_reset()` on walscale; after it, the sums over `walscale_stats` and "
             "`walscale_fastpath` are the run's deltas (the counters include the server's own WAL "
             "insertions during the run, e.g. the checkpointer's).")
    L.append("- tps is pgbench's figure without the initial connection time; ratio = median / stock's "
             "median at the same client count; blocking waits and failed attempts are summed over the "
             "repetitions and divided by the acquisitions; blocked ms is the median per run.")
    L.append("- pgbench is the stock build's for every configuration.\n")

    L.append("## Files\n")
    files = sorted(f for f in os.listdir(d) if f != "report.md")
    L.append(", ".join("`%s`" % f for f in files) + "\n")

    with open(os.path.join(d, "report.md"), "w") as f:
        f.write("\n".join(L))
    print("report: %s" % os.path.join(d, "report.md"))


if __name__ == "__main__":
    main()
