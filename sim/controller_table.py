#!/usr/bin/env python3
"""The simulator's controller table, from the lines `walscale_sim
scenarios` writes (one per auto mode's run; sim/run.sh gathers them):
auto mode beside the best fixed count, stock's 8 and a static count per
CPU size fitted on the same runs.  Every figure is simulated.

    sim/controller_table.py RUNS.tsv...

The static count for a CPU size is the single fixed count, floor to
maximum, that maximizes its worst ratio (each row by its own goal's ratio)
over that size's rows, every beta and scenario, as bench/auto-grid.sh fits
it on the grid of synthetic windows.  A fixed count meets its goals when
its ratio reaches the row's throughput goal and it spends at most 5% of the
judged windows at twice the phase's best count or more.
"""

import statistics
import sys

MIN_RATIO = 0.98
MIN_PHASE_RATIO = 0.97
MAX_OVER_SHARE = 0.05
MAX_CHANGES_PER_DAY = 240
STOCK = 8


def read(paths):
    rows = []
    for path in paths:
        with open(path) as f:
            header = None
            for line in f:
                line = line.rstrip("\n")
                if line.startswith("#"):
                    header = line[1:].split("\t")
                    continue
                if not line:
                    continue
                r = dict(zip(header, line.split("\t")))
                r["fixed"] = {
                    int(c): (float(ratio), float(over))
                    for c, ratio, over in
                    (item.split(":") for item in r["fixed"].split(","))}
                rows.append(r)
    return rows


def fixed_ok(goal, ratio, over):
    return ratio >= goal and over <= MAX_OVER_SHARE


def main():
    runs = read(sys.argv[1:])
    if not runs:
        sys.exit("controller_table: no runs")
    groups = {}
    for r in runs:
        key = (r["scenario"], int(r["cpus"]), float(r["beta"]))
        groups.setdefault(key, []).append(r)

    # the static count per CPU size: the best worst ratio over its rows
    static = {}
    fit_lines = []
    for cpus in sorted({k[1] for k in groups}):
        keys = [k for k in groups if k[1] == cpus]
        counts = sorted(set.intersection(
            *(set(groups[k][0]["fixed"]) for k in keys)))
        worst = {c: min(groups[k][0]["fixed"][c][0] for k in keys)
                 for c in counts}
        best = max(counts, key=lambda c: (worst[c], -c))
        static[cpus] = best
        fit_lines.append(
            "- static count for %d CPUs: %d (its worst row's ratio %.3f; "
            "per count: %s)" % (cpus, best, worst[best], " ".join(
                "%d:%.3f" % (c, worst[c]) for c in counts)))

    order = sorted(groups, key=lambda k: (k[0], k[1], k[2]))
    seeds = sorted({int(r["seed"]) for r in runs})
    sweep_seeds = sorted({int(r["sweep_seed"]) for r in runs})
    minutes = sorted({r["minutes"] for r in runs})
    judged = sorted({r["judged_from_minute"] for r in runs})
    print("\n".join(fit_lines))
    print("- auto mode's seeds: %s (`SIMULATE_SEEDS`); the fixed counts ran "
          "once per row, with seed %s" % (
              " ".join(str(s) for s in seeds),
              " ".join(str(s) for s in sweep_seeds)))
    print("- each scenario ran %s minutes; throughput and time over are "
          "judged from minute %s on, the changes over the whole run "
          "(a day has one start: its first 10 minutes count once, the rest "
          "is scaled to the rest of a day)" % (
              "/".join(minutes), "/".join(judged)))
    print("- ratio: throughput over the best fixed count's (where the best "
          "moves, over the per-phase best's); goals: ratio >= %.2f (%.2f "
          "per phase), at most %d%% of windows at twice the phase's best "
          "count or more (the largest count within 2%% of the best), at "
          "most %d changes a day; a fixed count meets the first two" % (
              MIN_RATIO, MIN_PHASE_RATIO, MAX_OVER_SHARE * 100,
              MAX_CHANGES_PER_DAY))
    print()
    print("| scenario | CPUs | β | seeds | best fixed (count) | auto ratio "
          "median | min | time at >= 2x best, worst | changes a day, worst "
          "| checkpoints: auto, fixed | auto meets every goal (seeds) | "
          "static (count) | static meets its goals | stock 8 | stock 8 "
          "meets its goals |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---|"
          "---:|---|")
    tally = {}
    for key in order:
        rs = groups[key]
        sc, cpus, beta = key
        first = rs[0]
        goal = MIN_PHASE_RATIO if first["moving"] == "1" else MIN_RATIO
        ratios = [float(r["auto_ratio"]) for r in rs]
        ok = sum(r["ok"] == "yes" for r in rs)
        st = static[cpus]
        st_ratio, st_over = first["fixed"][st]
        s8_ratio, s8_over = first["fixed"].get(STOCK, (float("nan"), 1.0))
        st_ok = fixed_ok(goal, st_ratio, st_over)
        s8_ok = fixed_ok(goal, s8_ratio, s8_over)
        t = tally.setdefault(beta, [0, 0, 0, 0])
        t[0] += 1
        t[1] += ok == len(rs)
        t[2] += st_ok
        t[3] += s8_ok
        print("| %s | %d | %g | %d | %d | %.3f | %.3f | %.1f%% | %.0f | "
              "%s, %s | %s | %.3f (%d) | %s | %.3f | %s |" % (
                  first["title"], cpus, beta, len(rs),
                  int(first["best_locks"]), statistics.median(ratios),
                  min(ratios),
                  100 * max(float(r["auto_over"]) for r in rs),
                  max(float(r["changes_day"]) for r in rs),
                  min(int(r["checkpoints"]) for r in rs),
                  first["sweep_checkpoints_min"],
                  "%d/%d" % (ok, len(rs)) if ok == len(rs) else
                  "**%d/%d**" % (ok, len(rs)),
                  st_ratio, st, "yes" if st_ok else "**no**" +
                  (" (over)" if st_over > MAX_OVER_SHARE else ""),
                  s8_ratio, "yes" if s8_ok else "**no**" +
                  (" (over)" if s8_over > MAX_OVER_SHARE else "")))
    print()
    for beta in sorted(tally):
        n, a, s, e = tally[beta]
        print("- β %g: auto mode meets every goal on every seed in %d of %d "
              "rows; the static count meets its goals in %d; stock's 8 in "
              "%d" % (beta, a, n, s, e))


if __name__ == "__main__":
    main()
