#!/usr/bin/env python3
# Copyright (c) 2026, walscale developers
"""Draw one SVG per scenario from make simulate's per-window CSV files.

Each scenario gets a panel per CPU count: the number of insertion locks auto
mode had in effect (a step line, log2 scale, left axis) and the tps of each
window (right axis), with the best fixed count's tps dashed.  Every figure is
simulated, and the plots say so.  Python's standard library only: the SVG is
written by hand.
"""

import csv
import glob
import math
import os
import re
import sys
from xml.sax.saxutils import escape

W, PANEL_H, TOP, LEFT, RIGHT, GAP = 820, 190, 50, 70, 70, 45


def read(path):
    with open(path) as f:
        header = f.readline()
        rows = list(csv.DictReader(f))
    m = re.match(r"# simulated: (.*), (\d+) CPUs(?:, beta [\d.]+, seed \d+)?; best fixed (\d+) locks at ([\d.]+) tps", header)
    return {
        "title": m.group(1),
        "cpus": int(m.group(2)),
        "best_locks": int(m.group(3)),
        "best_tps": float(m.group(4)),
        "t": [float(r["t_s"]) for r in rows],
        "locks": [int(r["locks"]) for r in rows],
        "tps": [float(r["tps"]) for r in rows],
    }


def panel(out, run, y0):
    x0, x1 = LEFT, W - RIGHT
    y1 = y0 + PANEL_H
    tmax = max(run["t"])
    lmax = max(max(run["locks"]), run["best_locks"], 8)
    lexp = max(math.ceil(math.log2(lmax)), 4)
    pmax = max(max(run["tps"]), run["best_tps"]) * 1.1 or 1

    def x(t):
        return x0 + (x1 - x0) * t / tmax

    def yl(n):
        return y1 - (y1 - y0) * math.log2(n) / lexp

    def yt(v):
        return y1 - (y1 - y0) * v / pmax

    out.append(f'<rect x="{x0}" y="{y0}" width="{x1 - x0}" height="{PANEL_H}" fill="none" stroke="#999"/>')
    out.append(f'<text x="{x0}" y="{y0 - 6}" font-size="13">{run["cpus"]} CPUs (simulated)</text>')
    for e in range(0, lexp + 1, 2 if lexp > 6 else 1):
        out.append(f'<text x="{x0 - 6}" y="{yl(2 ** e) + 4:.1f}" font-size="10" text-anchor="end" fill="#1f5fa8">{2 ** e}</text>')
        out.append(f'<line x1="{x0}" x2="{x1}" y1="{yl(2 ** e):.1f}" y2="{yl(2 ** e):.1f}" stroke="#eee"/>')
    for k in range(0, 5):
        v = pmax * k / 4
        out.append(f'<text x="{x1 + 6}" y="{yt(v) + 4:.1f}" font-size="10" fill="#b5472b">{v:.0f}</text>')
    step = 600 if tmax > 1800 else 300
    for t in range(0, int(tmax) + 1, step):
        out.append(f'<text x="{x(t):.1f}" y="{y1 + 14}" font-size="10" text-anchor="middle">{t // 60} min</text>')
    # tps
    pts = " ".join(f"{x(t):.1f},{yt(v):.1f}" for t, v in zip(run["t"], run["tps"]))
    out.append(f'<polyline points="{pts}" fill="none" stroke="#b5472b" stroke-width="1"/>')
    out.append(f'<line x1="{x0}" x2="{x1}" y1="{yt(run["best_tps"]):.1f}" y2="{yt(run["best_tps"]):.1f}" '
               f'stroke="#b5472b" stroke-dasharray="5,4"/>')
    # locks, as a step line: a window ran with the count in effect at its start
    pts, prev_t = [], 0.0
    for t, n in zip(run["t"], run["locks"]):
        pts.append(f"{x(prev_t):.1f},{yl(n):.1f} {x(t):.1f},{yl(n):.1f}")
        prev_t = t
    out.append(f'<polyline points="{" ".join(pts)}" fill="none" stroke="#1f5fa8" stroke-width="2"/>')


def draw(name, runs, path):
    runs.sort(key=lambda r: r["cpus"])
    h = TOP + len(runs) * (PANEL_H + GAP) + 20
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{h}" font-family="sans-serif">',
           f'<rect width="{W}" height="{h}" fill="white"/>',
           f'<text x="{LEFT}" y="22" font-size="15">Simulated: {escape(runs[0]["title"])}</text>',
           f'<text x="{LEFT}" y="38" font-size="11"><tspan fill="#1f5fa8">auto mode\'s insertion locks (left, log2)</tspan>'
           f' · <tspan fill="#b5472b">tps per window (right); dashed: best fixed count</tspan></text>']
    for i, run in enumerate(runs):
        panel(out, run, TOP + 14 + i * (PANEL_H + GAP))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "results")
    groups = {}
    for path in sorted(glob.glob(os.path.join(d, "*.csv"))):
        name = re.sub(r"-\d+\.csv$", "", os.path.basename(path))
        groups.setdefault(name, []).append(read(path))
    for name, runs in sorted(groups.items()):
        draw(name, runs, os.path.join(d, name + ".svg"))
    print(f"plot.py: {len(groups)} SVG plots in {os.path.basename(os.path.abspath(d))}/")


if __name__ == "__main__":
    main()
