#!/usr/bin/env python3
"""How much auto mode's windows moved from one to the next in the
simulator's own runs: sim/results/<scenario>-<cpus>.csv (make simulate),
each window's tps, locks and clients.

    sim/window_spread.py [RESULTS_DIR]      default sim/results

Two windows in a row count when they had the same locks and clients (no
change between them, the load unmoved): ln(later / earlier), pooled per
CPU count and count of locks, as the rms (what `walscale_sim spread` calls
the sd of the ratio, and what sim/real_spread.py prints for a real
server) and the mean |ln| (what the rules call the spread).  Every figure
is simulated.
"""

import csv
import glob
import math
import os
import re
import sys


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "results")
    pooled = {}
    for path in sorted(glob.glob(os.path.join(d, "*-*.csv"))):
        m = re.match(r"(.*)-(\d+)\.csv$", os.path.basename(path))
        if not m:
            continue
        cpus = int(m.group(2))
        with open(path, newline="") as f:
            rows = [r for r in csv.DictReader(
                line for line in f if not line.startswith("#"))]
        for a, b in zip(rows, rows[1:]):
            if (a["locks"] != b["locks"] or a["clients"] != b["clients"]
                    or a["reason"] or float(a["tps"]) <= 0
                    or float(b["tps"]) <= 0):
                continue
            key = (cpus, int(a["locks"]))
            pooled.setdefault(key, []).append(
                math.log(float(b["tps"]) / float(a["tps"])))
    if not pooled:
        print("no windows under %s" % d)
        return 1
    print("| CPUs | locks | pairs | rms ln ratio | mean abs ln ratio |")
    print("|---:|---:|---:|---:|---:|")
    for (cpus, locks), ls in sorted(pooled.items()):
        print("| %d | %d | %d | %.2f%% | %.2f%% |" % (
            cpus, locks, len(ls),
            100 * math.sqrt(sum(v * v for v in ls) / len(ls)),
            100 * sum(abs(v) for v in ls) / len(ls)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
