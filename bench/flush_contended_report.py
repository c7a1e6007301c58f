#!/usr/bin/env python3
"""bench/flush-contended.sh's tables: the traced backend's callgrind profiles
cut into blocks (one CSV line per block), and the report.

  flush_contended_report.py header
  flush_contended_report.py blocks LABEL VARIANT LOCKS TR_OUT PLACEMENT_CSV PROFILE...
  flush_contended_report.py report RESULTS_DIR
"""
import csv
import os
import re
import sys

FUNCS = ("WaitXLogInsertionsToFinish", "LWLockFirstHeldExclusive", "LWLockWaitForVar", "LWLockWaitForVarSlept")
HEADER = ("config,variant,insert_locks,committers,block,rep,commits,instr_per_commit,"
          "flushes_per_commit,instr_per_flush,first_held_calls_per_flush,wait_for_var_calls_per_flush,"
          "locks_read_per_flush")


def profile(path):
    """Total Ir, and per function called: calls and inclusive Ir."""
    names = {}
    calls = {f: 0 for f in FUNCS}
    incl = {f: 0 for f in FUNCS}
    total = 0
    cfn = None
    pending = None
    with open(path) as f:
        for line in f:
            if pending is not None:
                parts = line.split()
                if pending in incl and len(parts) >= 2:
                    incl[pending] += int(parts[-1])
                pending = None
                continue
            if line.startswith("cfn="):
                m = re.match(r"cfn=\((\d+)\)(?: (.*))?", line.rstrip("\n"))
                if m:
                    if m.group(2) is not None:
                        names[m.group(1)] = m.group(2)
                    cfn = names.get(m.group(1))
                else:
                    cfn = line[4:].strip()
            elif line.startswith("fn="):
                m = re.match(r"fn=\((\d+)\)(?: (.*))?", line.rstrip("\n"))
                if m and m.group(2) is not None:
                    names[m.group(1)] = m.group(2)
            elif line.startswith("calls="):
                n = int(line[6:].split()[0])
                if cfn in calls:
                    calls[cfn] += n
                pending = cfn
            elif line.startswith("summary:") or line.startswith("totals:"):
                total = int(line.split()[1])
    return total, calls, incl


def blocks(label, variant, locks, tr_out, placement, profiles):
    markers = []
    with open(tr_out) as f:
        for line in f:
            m = re.match(r"BLOCK (\d+) (\w+)\|", line)
            if m:
                markers.append((int(m.group(1)), m.group(2)))
    if len(markers) != len(profiles):
        sys.exit(f"flush_contended_report: {label}: {len(markers)} markers, {len(profiles)} profiles")
    calib = {}
    reps = {}
    w = csv.writer(sys.stdout, lineterminator="\n")
    for (n, name), path in zip(markers, profiles):
        total, calls, incl = profile(path)
        if name == "calib2":
            calib[n] = (total, calls, incl)
            continue
        if name == "calib" or name.startswith("ckpt"):
            continue
        commits = int(os.environ.get("BENCH_FC_STEADY", "30")) if name == "steady" else 1
        ctot, ccalls, cincl = calib.get(n, (0, {f: 0 for f in FUNCS}, {f: 0 for f in FUNCS}))
        key = (n, name)
        reps[key] = reps.get(key, 0) + 1
        flushes = calls["WaitXLogInsertionsToFinish"] - ccalls["WaitXLogInsertionsToFinish"]
        fl = max(flushes, 1)
        fhe = calls["LWLockFirstHeldExclusive"] - ccalls["LWLockFirstHeldExclusive"]
        # a held lock found: the patched flush waits on it with
        # LWLockWaitForVarSlept(), stock with LWLockWaitForVar()
        wfv = (calls["LWLockWaitForVar"] - ccalls["LWLockWaitForVar"]
               + calls["LWLockWaitForVarSlept"] - ccalls["LWLockWaitForVarSlept"])
        if variant == "stock":
            locks_read = wfv / fl
        else:
            locks_read = 8 * (fhe - wfv) / fl
        w.writerow([label, variant, locks, n, name, reps[key], commits,
                    "%.1f" % ((total - ctot) / commits), "%.2f" % (flushes / commits),
                    "%.1f" % ((incl["WaitXLogInsertionsToFinish"] - cincl["WaitXLogInsertionsToFinish"]) / fl),
                    "%.2f" % (fhe / fl), "%.2f" % (wfv / fl), "%.1f" % locks_read])


def report(results):
    rows = list(csv.DictReader(open(os.path.join(results, "flush-contended.csv"))))
    place = list(csv.DictReader(open(os.path.join(results, "placement.csv"))))
    meta = open(os.path.join(results, "flush-contended-meta.txt")).read().strip()

    def going(cfg, n):
        """locks and groups of the committers that ran at N: the traced one
        and the N - 1 background ones chosen as the script chooses them"""
        ps = [p for p in place if p["config"] == cfg]
        max_n = len(ps)
        step = (max_n - 1) // (n - 1) if n > 1 else 0
        sel = [p for p in ps if p["role"] == "traced" or
               (n > 1 and int(p["k"]) % step == 0 and int(p["k"]) < max_n)]
        lks = {int(p["lock"]) for p in sel}
        return len(lks), len({lk // 8 for lk in lks})

    agg = {}
    for r in rows:
        name = r["block"]
        key = (r["config"], int(r["committers"]), name)
        a = agg.setdefault(key, {"n": 0, "instr": 0.0, "flinstr": 0.0, "locks": 0.0, "fpc": 0.0,
                                 "variant": r["variant"], "L": int(r["insert_locks"]), "min": 1e18, "max": 0})
        a["n"] += 1
        a["instr"] += float(r["instr_per_commit"])
        a["flinstr"] += float(r["instr_per_flush"])
        a["locks"] += float(r["locks_read_per_flush"])
        a["fpc"] += float(r["flushes_per_commit"])
        a["min"] = min(a["min"], float(r["locks_read_per_flush"]))
        a["max"] = max(a["max"], float(r["locks_read_per_flush"]))
    out = []
    out.append("# The WAL flush under contention: one traced backend among 1..64 committers")
    out.append("")
    out.append(meta)
    out.append("")
    out.append("Each figure: one backend of a multi-user server traced by callgrind (every other")
    out.append("process on valgrind's core, uninstrumented), per commit of a single-row INSERT")
    out.append("statement, less an empty statement's cost; a 2-core machine, so the committers are")
    out.append("time-sliced, not parallel.  steady: mean over the block of steady commits;")
    out.append("after1..3: the 1st, 2nd and 3rd commit after a CHECKPOINT, mean over the")
    out.append("checkpoints (min..max of the locks read in brackets).  locks read per flush:")
    out.append("patched, 8 x (calls of LWLockFirstHeldExclusive - calls of LWLockWaitForVarSlept) per")
    out.append("flush, i.e. 8 per group visited (a held lock found costs one more call in its group);")
    out.append("stock, its calls of LWLockWaitForVar (it reads every lock).  One lock slot is one 128-byte padded slot: the locks read are the")
    out.append("lock-array lines read.  in use: distinct locks (groups) of the committers that ran.")
    out.append("")
    out.append("| config | committers | in use: locks (groups) | block | flushes/commit | instr/flush | locks read/flush | instr/commit | stock locks read | stock instr/flush | stock instr/commit | locks read <= stock + locks in use |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    order = {"steady": 0, "after1": 1, "after2": 2, "after3": 3}
    for key in sorted(agg, key=lambda k: (k[0] != "stock", agg[k]["L"], k[1], order.get(k[2], 9))):
        cfg, n, name = key
        a = agg[key]
        c = a["n"]
        nl, ng = going(cfg, n)
        s = agg.get(("stock", n, name))
        sl = s["locks"] / s["n"] if s else None
        rng = "" if c == 1 else " [%.0f..%.0f]" % (a["min"], a["max"])
        verdict = ""
        if sl is not None and cfg != "stock":
            verdict = "yes" if a["locks"] / c <= sl + nl + 1e-9 else "no (%.0f > %.0f)" % (a["locks"] / c, sl + nl)
        out.append("| %s | %d | %d (%d) | %s | %.2f | %.0f | %.1f%s | %.0f | %s | %s | %s | %s |" % (
            cfg, n, nl, ng, name, a["fpc"] / c, a["flinstr"] / c, a["locks"] / c, rng, a["instr"] / c,
            "%.1f" % sl if s else "-", "%.0f" % (s["flinstr"] / s["n"]) if s else "-",
            "%.0f" % (s["instr"] / s["n"]) if s else "-", verdict))
    out.append("")
    # instructions of the patched flush per lock read: the least-squares
    # slope over every patched block (steady and after a checkpoint)
    pts = [(float(r["locks_read_per_flush"]), float(r["instr_per_flush"]))
           for r in rows if r["variant"] != "stock" and float(r["flushes_per_commit"]) > 0]
    if len(pts) > 1:
        mx = sum(x for x, _ in pts) / len(pts)
        my = sum(y for _, y in pts) / len(pts)
        sxx = sum((x - mx) ** 2 for x, _ in pts)
        if sxx > 0:
            b = sum((x - mx) * (y - my) for x, y in pts) / sxx
            out.append("Patched flush, instructions per lock read: %.2f (least-squares slope of instr/flush"
                       % b)
            out.append("on locks read/flush over the %d patched blocks, %.0f to %.0f locks read; intercept %.0f)."
                       % (len(pts), min(x for x, _ in pts), max(x for x, _ in pts), my - b * mx))
        else:
            out.append("Patched flush: every block read the same number of locks (%.0f); no per-lock slope." % mx)
        out.append("")
    return "\n".join(out)


def main():
    cmd = sys.argv[1]
    if cmd == "header":
        print(HEADER)
    elif cmd == "blocks":
        label, variant, locks, tr_out, placement = sys.argv[2:7]
        blocks(label, variant, int(locks), tr_out, placement, sys.argv[7:])
    elif cmd == "report":
        print(report(sys.argv[2]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
