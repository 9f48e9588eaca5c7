#!/usr/bin/env python3
"""What each metric costs on an open map, against labelling the components of the same grid.

Issue #42 asks that the distance metrics cost O(cells) however open the map is: on an
all-floor side x side grid, ``reach_depth``, ``path_length`` and ``min_width`` within 10x of
``components`` on it. The band BFS that serves 90x140 caves cost side^3 / 32 word operations
there (4.8 s at 8192); grids wider than 256 cells now run it by 64x64 tiles that each keep
the rows still to compute (crates/core/src/measure/bfs.rs, ``Bfs::run_tiles``). Each figure is the median of ``--repeats`` calls of ``cavesweep.measure``
with one metric, in this process, spawn at (0, 0) and exit at the far corner; the ratio to
``components`` of the same side is printed beside it. A classic-4-5 cave of the largest side
is measured too, for scale (a cave's BFS reaches only its spawn's region).

    python python/benches/bench_open_metrics.py [--sides 1024,4096,8192] [--repeats 5]
"""

import argparse
import time

import numpy as np

import cavesweep as cs

METRICS = ["components", "reach_depth", "path_length", "min_width", "boundary"]


def median_ms(f, repeats):
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return sorted(ts)[len(ts) // 2] * 1e3


def row(name, g, repeats, spawn, exit):
    base = None
    cells = []
    for m in METRICS:
        ms = median_ms(lambda: cs.measure(g, metrics=m, spawn=spawn, exit=exit), repeats)
        base = base or ms
        cells.append(f"{ms:9.1f} ms ({ms / base:4.1f}x)")
    print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sides", default="1024,4096,8192")
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    sides = [int(s) for s in a.sides.split(",")]
    print("| grid | " + " | ".join(METRICS) + " |")
    print("|---" * (len(METRICS) + 1) + "|")
    for side in sides:
        g = np.zeros((side, side), np.uint8)
        row(f"open {side}x{side}", g, a.repeats, (0, 0), (side - 1, side - 1))
    side = sides[-1]
    g = cs.generate(cs.recipe("classic-4-5", rows=side, cols=side), 1)
    row(f"classic-4-5 {side}x{side}", g, a.repeats, (side // 2, side // 2), None)


if __name__ == "__main__":
    main()
