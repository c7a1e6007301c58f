#!/usr/bin/env python3
"""Write resize.md, resize-summary.csv and the plots of bench/resize.sh.

    bench/resize_report.py RESULTS_DIR

RESULTS_DIR holds what bench/resize.sh measured: resize-meta.env,
resize-events.csv (every resize it requested), resize-runs.csv (every
pgbench run), resize-progress.csv (pgbench -P 1 --progress-timestamp),
resize-server.log, resize-settings.conf and resize-pg-settings.tsv.  Nothing
here measures anything; the report can be written again at any time.

Each resize logs, at LOG,

    walscale: WAL insertion locks resized from OLD to NEW; all locks held
    for X ms after waiting Y ms for them

and counts in walscale_settings.resizes, so the k-th such line of the log
is the resize after which resizes = k (the script records resizes after each
of its requests); the report checks that OLD and NEW agree.
"""

import csv
import math
import os
import re
import statistics
import sys
from collections import OrderedDict, defaultdict

import report
from report import num, read_csv

RESIZE_RE = re.compile(r"walscale: WAL insertion locks resized from (\d+) to (\d+); all locks held for "
                       r"([0-9.eE+-]+) ms after waiting ([0-9.eE+-]+) ms")
PROBLEM_RE = re.compile(r"\b(WARNING|ERROR|FATAL|PANIC):|TRAP:|terminated by signal|was terminated|"
                        r"exited with exit code [1-9]|terminating any other active server processes")
PHASE_TITLE = {"cost-idle": "no load", "cost-load": "under load", "cycle": "cycle arm (1 resize/s, under load)",
               "setup": "between runs"}


def read_meta(d):
    return report.read_meta(d, "resize-meta.env")


def quant(xs, q):
    """nearest-rank quantile of a sorted list"""
    if not xs:
        return None
    return xs[max(0, min(len(xs) - 1, int(math.ceil(q * len(xs))) - 1))]


def stats(xs):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    return {"n": len(xs), "min": xs[0], "median": statistics.median(xs), "p90": quant(xs, 0.9),
            "p10": quant(xs, 0.1), "max": xs[-1]}


def f3(x):
    if x is None:
        return "n/a"
    if x == 0:
        return "0"
    if x < 0.01:
        return "%.2g" % x
    if x >= 100:
        return "%.0f" % x
    if x >= 10:
        return "%.1f" % x
    if x >= 0.1:
        return "%.2f" % x
    return "%.3f" % x


def fmt_stats(s):
    if not s:
        return "n/a"
    return "%s / %s / %s / %s" % (f3(s["min"]), f3(s["median"]), f3(s["p90"]), f3(s["max"]))


def fmt_tps(x):
    return "n/a" if x is None else ("%.0f" % x if x >= 100 else "%.1f" % x)


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(x) for x in r) + " |")
    return "\n".join(out)


def parse_log(d):
    """resize lines per server start (1, 2, ...), problems, lines of shutdowns"""
    resizes, problems, shutdown = defaultdict(list), [], []
    p = os.path.join(d, "resize-server.log")
    if not os.path.exists(p):
        return resizes, problems, shutdown, 0
    start, stopping = 0, False
    with open(p, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if "database system is ready to accept connections" in line:
                start += 1
                stopping = False
            elif re.search(r"received (fast|smart|immediate) shutdown request", line):
                stopping = True
            m = RESIZE_RE.search(line)
            if m:
                resizes[start].append({"from": int(m.group(1)), "to": int(m.group(2)),
                                       "held_ms": float(m.group(3)), "wait_ms": float(m.group(4)),
                                       "line": line})
            elif PROBLEM_RE.search(line):
                # background workers exit with 1 at a shutdown (walscale's
                # resizer and the logical replication launcher alike)
                if stopping and re.search(r"background worker .* exited with exit code 1$", line):
                    shutdown.append(line)
                else:
                    problems.append(line)
    return resizes, problems, shutdown, start


def arm_order(arms):
    def k(a):
        if a == "cycle":
            return (0, 0)
        m = re.match(r"([a-z]+)(\d+)$", a)
        if m:
            return ({"fixed": 1, "reload": 2}.get(m.group(1), 3), int(m.group(2)))
        return (9, 0)
    return sorted(arms, key=k)


def arm_locks(arm):
    m = re.match(r"(fixed|reload|start)(\d+)$", arm)
    return int(m.group(2)) if m else None


def main():
    if len(sys.argv) != 2:
        print("usage: %s RESULTS_DIR" % sys.argv[0], file=sys.stderr)
        sys.exit(2)
    d = sys.argv[1]
    meta = read_meta(d)
    events = read_csv(os.path.join(d, "resize-events.csv"))
    runs = read_csv(os.path.join(d, "resize-runs.csv"))
    progress = read_csv(os.path.join(d, "resize-progress.csv"))
    logres_by_start, problems, shutdown, starts = parse_log(d)
    logres = [r for k in sorted(logres_by_start) for r in logres_by_start[k]]

    # ---- join the events with their log lines
    mismatches = []
    for e in events:
        e["log"] = None
        if e["ok"] != "t":
            continue
        k = int(num(e["resizes_now"], 0))
        lines = logres_by_start.get(int(num(e.get("server_start"), 1)), [])
        if 1 <= k <= len(lines):
            lg = lines[k - 1]
            if lg["from"] == int(e["from_locks"]) and lg["to"] == int(e["to_locks"]):
                e["log"] = lg
            else:
                mismatches.append("resize %d: requested %s -> %s, log says %d -> %d"
                                  % (k, e["from_locks"], e["to_locks"], lg["from"], lg["to"]))
        else:
            mismatches.append("resize %d (%s -> %s): no log line %d (%d resize lines)"
                              % (k, e["from_locks"], e["to_locks"], k, len(lines)))

    summary_rows = []

    # ---- part 1: cost per phase and direction
    cost = OrderedDict()
    for ph in ("cost-idle", "cost-load", "cycle", "setup"):
        for e in events:
            if e["phase"] != ph or e["ok"] == "reload":
                continue
            key = (ph, int(e["from_locks"]), int(e["to_locks"]))
            cost.setdefault(key, []).append(e)
    cost_stats = OrderedDict()
    for key, es in cost.items():
        ok = [e for e in es if e["ok"] == "t"]
        withlog = [e for e in ok if e["log"]]
        cs = {
            "requested": len(es), "applied": len(ok), "logged": len(withlog),
            "held": stats([e["log"]["held_ms"] for e in withlog]),
            "wait": stats([e["log"]["wait_ms"] for e in withlog]),
            "held_view": stats([num(e["held_ms_view"]) for e in ok]),
            "observed": stats([num(e["observed_ms"]) for e in ok]),
            "conns": stats([num(e["pgbench_conns"]) for e in es]),
        }
        cost_stats[key] = cs
        for measure in ("held", "wait", "held_view", "observed"):
            s = cs[measure]
            if s:
                summary_rows.append(["resize_cost", key[0], "%d->%d" % (key[1], key[2]),
                                     {"held": "held_ms_log", "wait": "wait_ms_log", "held_view": "held_ms_view",
                                      "observed": "reload_to_done_ms"}[measure],
                                     s["n"], "%.4f" % s["min"], "%.4f" % s["median"], "%.4f" % s["p90"],
                                     "%.4f" % s["max"], "", ""])

    # ---- part 2: tps per arm
    prog_by_run = defaultdict(list)
    for p in progress:
        prog_by_run[(p["phase"], p["run"])].append(p)
    arms = arm_order({r["phase"] for r in runs if r["phase"] != "cost-load"})
    tps_stats = OrderedDict()
    for arm in arms:
        rs = [r for r in runs if r["phase"] == arm]
        sec = []
        run_mins = []
        for r in rs:
            ps = sorted(prog_by_run[(arm, r["run"])], key=lambda p: num(p["epoch"]))
            # the first second holds the connections and the warm-up
            vals = [num(p["tps"]) for p in ps[1:] if num(p["tps"]) is not None]
            sec += vals
            if vals:
                run_mins.append(min(vals))
        ts = stats([num(r["tps"]) for r in rs])
        tps_stats[arm] = {
            "runs": len(rs), "tps": ts, "sec": stats(sec), "run_min": stats(run_mins),
            "failed": sum(int(num(r["failed"], 0)) for r in rs),
            "rc": sorted({r["rc"] for r in rs}),
            "resizes": sum(int(num(r["resizes_end"], 0)) - int(num(r["resizes_start"], 0)) for r in rs),
            "locks_used": [int(num(r.get("locks_used"), -1)) for r in rs],
            "max_lock": max([int(num(r.get("max_lock_used"), -1)) for r in rs] or [-1]),
            "blocking_per_1000": (1000.0 * sum(num(r.get("blocking_waits"), 0) for r in rs) /
                                  sum(num(r.get("acquisitions"), 0) for r in rs)
                                  if sum(num(r.get("acquisitions"), 0) for r in rs) else None),
        }
    fixed = [a for a in arms if a.startswith("fixed")]
    for arm, t in tps_stats.items():
        t["ratio"] = {}
        for fa in fixed:
            f = tps_stats[fa]["tps"]
            if t["tps"] and f and f["median"]:
                t["ratio"][fa] = t["tps"]["median"] / f["median"]
        s = t["tps"]
        if s:
            summary_rows.append(["tps_run", arm, "", "tps", s["n"], "%.2f" % s["min"], "%.2f" % s["median"],
                                 "%.2f" % s["p90"], "%.2f" % s["max"],
                                 "%.4f" % t["ratio"]["fixed8"] if "fixed8" in t["ratio"] else "",
                                 "%.4f" % t["ratio"]["fixed1024"] if "fixed1024" in t["ratio"] else ""])
        s = t["sec"]
        if s:
            summary_rows.append(["tps_per_second", arm, "", "tps", s["n"], "%.2f" % s["min"], "%.2f" % s["median"],
                                 "%.2f" % s["p90"], "%.2f" % s["max"], "", ""])

    # per-second tps of the cycle arm by the resize inside that second
    by_step = defaultdict(list)
    cyc_events = [e for e in events if e["phase"] == "cycle"]
    for (ph, run), ps in prog_by_run.items():
        if ph != "cycle":
            continue
        evs = [e for e in cyc_events if e["run"] == run]
        for p in sorted(ps, key=lambda p: num(p["epoch"]))[1:]:
            t1 = num(p["epoch"])
            inside = [e for e in evs if t1 - 1 < num(e["requested_epoch"]) <= t1]
            label = ", ".join("%s->%s" % (e["from_locks"], e["to_locks"]) for e in inside) or "none"
            by_step[label].append(num(p["tps"]))

    # cost-load pgbench run
    load_run = [r for r in runs if r["phase"] == "cost-load"]
    load_sec = []
    for r in load_run:
        ps = sorted(prog_by_run[("cost-load", r["run"])], key=lambda p: num(p["epoch"]))
        load_sec += [num(p["tps"]) for p in ps[1:]]

    with open(os.path.join(d, "resize-summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["section", "phase", "direction", "measure", "n", "min", "median", "p90", "max",
                    "ratio_to_fixed8", "ratio_to_fixed1024"])
        w.writerows(summary_rows)

    pngs = plots(d, runs, progress, events, cost, arms)

    # ---- markdown
    L = []
    L.append("# walscale: resizing the WAL insertion locks at run time, %s, %s\n"
             % (meta.get("date", "?"), meta.get("host", "?")))
    L.append("Measured by `%s` in %s (estimate printed at its start: %s); written by bench/resize_report.py "
             "from the CSV files and the server log beside this report.\n"
             % (meta.get("command", "bench/resize.sh"), meta.get("elapsed", "?"), meta.get("estimated", "?")))

    L.append("## Machine and software\n")
    loads = [num(r["load1_start"]) for r in runs] + [num(r["load1_end"]) for r in runs]
    loads = [x for x in loads if x is not None]
    rows = [
        ["CPU", meta.get("cpu", "?")], ["cores", meta.get("cores", "?")], ["memory", meta.get("memory", "?")],
        ["OS", meta.get("os", "?")], ["kernel", meta.get("kernel", "?")],
        ["patched PostgreSQL", meta.get("pg_patched", "?")],
        ["configure", "`%s`" % meta.get("pg_configure", "?")], ["CFLAGS", "`%s`" % meta.get("pg_cflags", "?")],
        ["walscale commit", meta.get("commit", "?")], ["core patches (sha256)", meta.get("patches", "?")],
        ["walscale.c / installed walscale.so (sha256)", "%s / %s" % (meta.get("walscale_c", "?"),
                                                                    meta.get("walscale_so", "?"))],
        ["extension version", meta.get("extversion", "?")],
        ["walscale_settings at the end", "`%s`" % meta.get("walscale_settings_end", "?")],
        ["started (UTC)", meta.get("started", "?")],
        ["load average (1, 5, 15 min)", "%s at the start, %s at the end; 1-minute load %s..%s over the pgbench runs "
         "(other jobs share the machine when this exceeds the core count)"
         % (meta.get("load_start", "?"), meta.get("load_end", "?"),
            "%.2f" % min(loads) if loads else "?", "%.2f" % max(loads) if loads else "?")],
    ]
    L.append(md_table(["", ""], rows))
    L.append("")
    L.append("Workload: %s, `%s` (the stock build's pgbench), %s clients. Part 1: %s resizes each way between "
             "%s, alternating, every %s s with no load and every %s s under load; part 2: arms `%s`, %s rounds "
             "of %s s, interleaved. Timeout per resize %s s.\n"
             % (meta.get("workload_title", meta.get("workload", "?")), meta.get("pgbench", "?"),
                meta.get("clients", "?"), meta.get("repeats", "?"), meta.get("pair", "?").replace(" ", " and "),
                meta.get("period_idle", "?"), meta.get("period_load", "?"), meta.get("arms", "?"),
                meta.get("runs", "?"), meta.get("seconds", "?"), meta.get("timeout", "?")))

    # ---- summary
    L.append("## Summary\n")
    pair = [int(x) for x in meta.get("pair", "8 1024").split()]
    for ph in ("cost-idle", "cost-load"):
        parts = []
        for (a, b) in ((pair[0], pair[1]), (pair[1], pair[0])):
            cs = cost_stats.get((ph, a, b))
            if cs and cs["held_view"] and cs["wait"]:
                parts.append("%d -> %d: all locks held %s ms median (max %s) after waiting %s ms median (max %s), "
                             "done %s ms after pg_reload_conf() (median)"
                             % (a, b, f3(cs["held_view"]["median"]), f3(cs["held_view"]["max"]),
                                f3(cs["wait"]["median"]), f3(cs["wait"]["max"]),
                                f3(cs["observed"]["median"] if cs["observed"] else None)))
        if parts:
            L.append("- **%s**: %s." % (PHASE_TITLE[ph], "; ".join(parts)))
    for arm, t in tps_stats.items():
        if not t["tps"]:
            continue
        rat = ", ".join("%.3f of %s" % (v, k) for k, v in t["ratio"].items() if k != arm)
        L.append("- **%s**: median %s tps over %d runs%s; per second median %s, lowest %s%s."
                 % (arm, fmt_tps(t["tps"]["median"]), t["runs"], " (%s)" % rat if rat else "",
                    fmt_tps(t["sec"]["median"]) if t["sec"] else "n/a",
                    fmt_tps(t["sec"]["min"]) if t["sec"] else "n/a",
                    ", %d resizes" % t["resizes"] if t["resizes"] else ""))
    beyond = []
    for r in runs:
        n = arm_locks(r["phase"])
        if n is not None and r.get("max_lock_used", "") != "" and int(num(r["max_lock_used"], -1)) >= n:
            beyond.append("%s round %s: lock %s used at %d locks" % (r["phase"], r["run"], r["max_lock_used"], n))
    if any(r.get("max_lock_used", "") != "" for r in runs):
        L.append("- Insertion locks used: %s." % (
            "**%d runs used a lock beyond the count in effect** (%s)" % (len(beyond), "; ".join(beyond[:5]))
            if beyond else "no run at a fixed count used a lock beyond it"))
    failed_resizes = [e for e in events if e["ok"] == "f"]
    total_failed = sum(int(num(r["failed"], 0)) for r in runs)
    bad_rc = [r for r in runs if r["rc"] != "0"]
    L.append("- Resizes requested %d, applied %d, not applied within the timeout %d; resize lines in the log %d, "
             "walscale_settings.resizes at the end %s%s."
             % (len([e for e in events if e["ok"] in ("t", "f")]), len([e for e in events if e["ok"] == "t"]),
                len(failed_resizes), len(logres), meta.get("resizes_total", "?"),
                "" if str(len(logres_by_start.get(starts, []))) == meta.get("resizes_total")
                else " (**it differs from the log's %d resize lines since the last start**)"
                % len(logres_by_start.get(starts, []))))
    L.append("- pgbench: %d failed transactions, %d runs with a non-zero exit status; server log: %d lines at "
             "WARNING or above (or a crash), %d log lines not matching the resize requested.\n"
             % (total_failed, len(bad_rc), len(problems), len(mismatches)))
    try:
        cores = int(meta.get("cores", "0"))
    except ValueError:
        cores = 0
    if 0 < cores < 8:
        L.append("On %d cores at most %d of the %s clients run at once, and the resize worker competes with "
                 "them for a CPU: its waiting time includes waiting to be scheduled, and a client preempted "
                 "while it holds an insertion lock makes the worker wait for it. tps differences of a few "
                 "percent are within the noise of a shared machine (compare the min..max).\n"
                 % (cores, min(cores, int(num(meta.get("clients"), cores))), meta.get("clients", "?")))

    # ---- part 1
    L.append("## 1. What one resize costs\n")
    L.append("Per direction: min / median / p90 / max in milliseconds (p90 nearest-rank). *held (view)* is "
             "`walscale_settings.last_resize_held_ms` read after the resize (full precision); *held (log)* and "
             "*waited (log)* are from walscale's LOG line of each resize (all locks held; waiting for them "
             "before), which rounds to 0.001 ms. The worker takes the active locks one after another, as a "
             "checkpoint does, and keeps each one it has taken while it waits for the next: an insertion "
             "whose lock was taken early can wait up to *waited* + *held*. *reload to done* is "
             "the time a client sees from `SELECT pg_reload_conf()` until `walscale_settings.resizes` has "
             "moved and `insert_locks` is the new count (polled every 0.2 ms from the same backend; it "
             "includes the postmaster's reload and the signal to the worker). *clients* is the number of "
             "pgbench connections when the resize was done.\n")
    rows = []
    for (ph, a, b), cs in cost_stats.items():
        rows.append([PHASE_TITLE.get(ph, ph), "%d -> %d" % (a, b), "%d/%d/%d" % (cs["requested"], cs["applied"],
                     cs["logged"]), fmt_stats(cs["held_view"]), fmt_stats(cs["held"]), fmt_stats(cs["wait"]),
                     fmt_stats(cs["observed"]), f3(cs["conns"]["median"]) if cs["conns"] else "n/a"])
    L.append(md_table(["load", "resize", "requested/applied/logged", "held ms (view)", "held ms (log)",
                       "waited ms (log)", "reload to done ms", "clients"], rows))
    L.append("")
    if "cost" in pngs:
        L.append("![cost of a resize](%s)\n" % pngs["cost"])
    if load_run:
        r = load_run[0]
        s = stats(load_sec)
        L.append("The loaded part ran while resizing every %s s: pgbench %s tps overall, per second %s "
                 "(min / median / p90 / max), %s failed transactions.\n"
                 % (meta.get("period_load", "?"), fmt_tps(num(r["tps"])), fmt_stats(s), r["failed"] or "0"))

    # ---- part 2
    L.append("## 2. tps while resizing every second\n")
    L.append("Arm `cycle`: a resize in the middle of every second of the run (%s, round and round, starting "
             "at %s); `fixedN`: the count brought to N (by a resize before the run, outside it) and left "
             "there; `reloadN`: every second an `ALTER SYSTEM` + `pg_reload_conf()` that leaves the count at "
             "N, the cost of the reload without a resize; `startN`: the server restarted with N locks before "
             "the run. Every run is preceded by the workload's CHECKPOINT and `walscale_reset()`. "
             "Per run: pgbench's tps without the connection time; per second: pgbench -P 1, without the first "
             "second of each run. *locks used*: insertion locks with acquisitions in the run (walscale_stats; "
             "it includes the server's own WAL, such as the checkpointer's), and the highest lock id among them: "
             "at a fixed count N it must stay below N.\n"
             % (" -> ".join(meta.get("cycle", "8 64 1024").split()), meta.get("cycle", "8").split()[0]))
    rows = []
    for arm, t in tps_stats.items():
        s, ps = t["tps"], t["sec"]
        rows.append([arm, t["runs"],
                     "%s [%s..%s]" % (fmt_tps(s["median"]), fmt_tps(s["min"]), fmt_tps(s["max"])) if s else "n/a",
                     "%.3f" % t["ratio"]["fixed8"] if "fixed8" in t["ratio"] else "n/a",
                     "%.3f" % t["ratio"]["fixed1024"] if "fixed1024" in t["ratio"] else "n/a",
                     fmt_tps(ps["median"]) if ps else "n/a", fmt_tps(ps["p10"]) if ps else "n/a",
                     fmt_tps(ps["min"]) if ps else "n/a",
                     "%.2f" % (ps["min"] / ps["median"]) if ps and ps["median"] else "n/a",
                     t["resizes"], t["failed"],
                     ", ".join(str(x) for x in t["locks_used"]) + " (highest id %d)" % t["max_lock"]
                     if t["locks_used"] and min(t["locks_used"]) >= 0 else "n/a",
                     "%.2f" % t["blocking_per_1000"] if t["blocking_per_1000"] is not None else "n/a"])
    L.append(md_table(["arm", "runs", "tps median [min..max]", "ratio to fixed8", "ratio to fixed1024",
                       "per-second median", "per-second p10", "per-second min (the dip)", "min / median",
                       "resizes", "failed xacts", "locks used per run", "blocking waits / 1000 acq"], rows))
    L.append("")
    if by_step:
        L.append("Cycle arm, per-second tps by the resize inside that second (the count changes every second, "
                 "so each second also runs at a different count):\n")
        rows = []
        for label in sorted(by_step):
            s = stats(by_step[label])
            rows.append([label, s["n"], fmt_tps(s["min"]), fmt_tps(s["median"]), fmt_tps(s["max"])])
        L.append(md_table(["resize in that second", "seconds", "tps min", "tps median", "tps max"], rows))
        L.append("")
    if "tps" in pngs:
        L.append("![tps over time](%s)\n" % pngs["tps"])
    L.append("Runs in the order measured (`resize-runs.csv`):\n")
    rows = []
    for r in runs:
        rows.append([r["phase"], r["run"], r["order"], fmt_tps(num(r["tps"])), r["failed"] or "0", r["rc"],
                     "%s -> %s" % (r["locks_start"], r["locks_end"]),
                     int(num(r["resizes_end"], 0)) - int(num(r["resizes_start"], 0)),
                     "%s / %s" % (r["load1_start"], r["load1_end"]),
                     "%s (highest %s)" % (r.get("locks_used", ""), r.get("max_lock_used", "")),
                     "%.2f" % (1000.0 * num(r.get("blocking_waits"), 0) / num(r.get("acquisitions")))
                     if num(r.get("acquisitions")) else "n/a"])
    L.append(md_table(["arm", "round", "order", "tps", "failed", "pgbench exit", "locks start -> end", "resizes",
                       "load1 start / end", "locks used", "blocking waits / 1000 acq"], rows))
    L.append("")

    # ---- log
    L.append("## Server log\n")
    L.append("%d resize lines (`resize-server.log`, %d server start%s); walscale_settings.resizes = %s at the "
             "end (it counts from the last start).\n"
             % (len(logres), starts, "" if starts == 1 else "s",
                meta.get("resizes_total", "?")))
    if mismatches:
        L.append("Resizes whose log line does not match the request:\n")
        L.extend("- %s" % m for m in mismatches[:20])
        L.append("")
    if problems:
        L.append("Lines at WARNING or above, or about a process that died (first 20 of %d):\n" % len(problems))
        L.append("```")
        L.extend(problems[:20])
        L.append("```\n")
    else:
        L.append("No line at WARNING, ERROR, FATAL or PANIC, and no process died.\n")
    if shutdown:
        L.append("At the server's shutdowns (expected: background workers exit with 1 when asked to stop):\n")
        L.append("```")
        L.extend(shutdown[:10])
        L.append("```\n")
    for what, title in (("held_ms", "Longest holds"), ("wait_ms", "Longest waits")):
        slow = sorted((e for e in events if e["log"]), key=lambda e: -e["log"][what])[:5]
        if slow:
            L.append("%s:\n" % title)
            L.append("```")
            L.extend("%s (%s, run %s)" % (e["log"]["line"], e["phase"], e["run"]) for e in slow)
            L.append("```\n")

    # ---- settings
    L.append("## Server settings\n")
    p = os.path.join(d, "resize-settings.conf")
    if os.path.exists(p):
        with open(p) as f:
            L.append("`resize-settings.conf` (included by postgresql.conf; the count is then changed by "
                     "`ALTER SYSTEM SET walscale.insert_locks`):\n\n```\n%s```\n" % f.read())
    p = os.path.join(d, "resize-pg-settings.tsv")
    if os.path.exists(p):
        with open(p) as f:
            rows = [line.rstrip("\n").split("\t") for line in f if line.strip()]
        L.append("Settings not at their default at the end (`pg_settings`):\n")
        L.append(md_table(["name", "setting", "unit", "source"], rows))
        L.append("")

    L.append("## Method\n")
    L.append("- One cluster (stock initdb, patched server, walscale preloaded), started once at %s locks. "
             "Every change of the count is `ALTER SYSTEM SET walscale.insert_locks = N` and `SELECT "
             "pg_reload_conf()` from one psql session; that session then polls walscale_settings until the "
             "resize is applied (or %s s pass) and records the result (`resize-events.csv`). Resizes are "
             "scheduled at fixed times (`pg_sleep_until`), so a slow one does not move the others." %
             (pair[0], meta.get("timeout", "?")))
    L.append("- The k-th resize line of the server log belongs to the resize after which "
             "`walscale_settings.resizes` = k.")
    L.append("- The tps arms are interleaved: A B C, C B A, then a fixed pseudo-random order and its "
             "reverse, so that a drift of the shared machine spreads over all arms. Ratios are of medians of "
             "runs.")
    L.append("- The cycle arm's cost includes the reload itself (every backend re-reads the configuration "
             "files); a `reloadN` arm (`BENCH_RESIZE_ARMS`) measures that part alone.\n")
    L.append("## Files\n")
    files = sorted(f for f in os.listdir(d) if f.startswith("resize") and f != "resize.md")
    L.append(", ".join("`%s`" % f for f in files) + "\n")

    with open(os.path.join(d, "resize.md"), "w") as f:
        f.write("\n".join(L))
    print("resize report: %s" % os.path.join(d, "resize.md"))


def plots(d, runs, progress, events, cost, arms):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:  # noqa: BLE001
        print("resize report: no matplotlib (%s), no plots" % e, file=sys.stderr)
        return {}
    made = {}

    # tps over time, one panel per arm (and the loaded part 1), one line per round
    panels = list(arms) + (["cost-load"] if any(r["phase"] == "cost-load" for r in runs) else [])
    if panels:
        fig, axes = plt.subplots(len(panels), 1, figsize=(10, 2.6 * len(panels)), squeeze=False)
        colors = {}
        ymax = 0
        palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]
        for ax, arm in zip(axes[:, 0], panels):
            rs = [r for r in runs if r["phase"] == arm]
            for r in rs:
                t0 = num(r["started_epoch"])
                ps = sorted((p for p in progress if p["phase"] == arm and p["run"] == r["run"]),
                            key=lambda p: num(p["epoch"]))
                xs = [num(p["epoch"]) - t0 for p in ps]
                ys = [num(p["tps"]) for p in ps]
                if xs:
                    xs, ys = [xs[0] - 1] + xs, [ys[0]] + ys
                # each value is the tps of the second before its timestamp
                ax.step(xs, ys, where="pre", linewidth=1,
                        label="round %s" % r["run"] if arm != "cost-load" else "tps")
                ymax = max([ymax] + [y for y in ys if y is not None])
                marks = [e for e in events if e["phase"] == arm and e["run"] == r["run"] and e["ok"] != "reload"]
                for e in marks:
                    to = e["to_locks"]
                    if to not in colors:
                        colors[to] = palette[len(colors) % len(palette)]
                    ax.axvline(num(e["requested_epoch"]) - t0, color=colors[to], alpha=0.35, linewidth=0.8,
                               linestyle=":")
                for e in (e for e in events if e["phase"] == arm and e["run"] == r["run"] and e["ok"] == "reload"):
                    ax.axvline(num(e["requested_epoch"]) - t0, color="gray", alpha=0.3, linewidth=0.8, linestyle=":")
            title = {"cycle": "cycle: a resize every second (dotted: the requests, colour = new count)",
                     "cost-load": "part 1 under load: 8 <-> 1024 resizes (dotted)"}.get(arm, arm)
            ax.set_title(title, fontsize=9)
            ax.set_ylabel("tps per second")
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=7, loc="lower right", ncol=4)
        for ax in axes[:, 0]:
            ax.set_ylim(0, ymax * 1.05 if ymax else 1)
        axes[-1, 0].set_xlabel("seconds since pgbench started (each step: tps of the second before)")
        if colors:
            from matplotlib.lines import Line2D
            handles = [Line2D([0], [0], color=c, linestyle=":", label="resize to %s" % k) for k, c in colors.items()]
            fig.legend(handles=handles, loc="upper right", fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(d, "resize-tps.png"), dpi=90)
        plt.close(fig)
        made["tps"] = "resize-tps.png"

    # cost: held and waited per phase and direction, each resize a dot
    keys = [k for k in cost if k[0] in ("cost-idle", "cost-load", "cycle")]
    if keys:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
        for ax, what, title in ((axes[0], "held_ms", "all locks held (ms, walscale_settings)"),
                                (axes[1], "wait_ms", "waited for the locks (ms, log line)")):
            for i, k in enumerate(keys):
                if what == "held_ms":
                    vals = [num(e["held_ms_view"]) for e in cost[k] if e["ok"] == "t" and num(e["held_ms_view"]) is not None]
                else:
                    vals = [e["log"][what] for e in cost[k] if e.get("log")]
                if not vals:
                    continue
                vals = [max(v, 1e-4) for v in vals]
                xs = [i + 0.25 * ((j * 0.618) % 1 - 0.5) for j in range(len(vals))]
                ax.scatter(xs, vals, s=10, alpha=0.6)
                ax.hlines(statistics.median(vals), i - 0.3, i + 0.3, color="black")
            ax.set_xticks(range(len(keys)))
            ax.set_xticklabels(["%s\n%d->%d\nn=%d" % ({"cost-idle": "idle", "cost-load": "load", "cycle": "cycle"}[k[0]],
                                                       k[1], k[2], len([e for e in cost[k] if e["ok"] == "t"]))
                                for k in keys], fontsize=7)
            ax.set_yscale("log")
            ax.set_title(title + ", bar = median", fontsize=9)
            ax.grid(True, alpha=0.3, axis="y")
        fig.tight_layout()
        fig.savefig(os.path.join(d, "resize-cost.png"), dpi=90)
        plt.close(fig)
        made["cost"] = "resize-cost.png"
    return made


if __name__ == "__main__":
    main()
