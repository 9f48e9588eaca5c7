"""Your own grids from Python: what converting a numpy array to cavesweep's bits and back costs
beside the step kernel, on a 1024x1024 uint8 array (medians of 200 calls, one thread).

    python python/benches/bench_step.py

Prints a Markdown table (results/python-grids.md holds a run of it).
"""

import time

import numpy as np

import cavesweep as cs


def median_ms(f, n=200):
    f()
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return sorted(ts)[n // 2] * 1e3


def main():
    g = (np.random.default_rng(1).random((1024, 1024)) < 0.45).astype(np.uint8)
    cells = g.size
    rows = [
        ("numpy copy of the array (`g.copy()`)", lambda: g.copy()),
        ("array -> bits -> new array: `cs.step(g, rule, steps=0)`", lambda: cs.step(g, "B5678/S45678", steps=0)),
        ("the same with one step of the 4-5 rule: `steps=1`", lambda: cs.step(g, "B5678/S45678", steps=1)),
        ("ten steps: `steps=10`", lambda: cs.step(g, "B5678/S45678", steps=10)),
        ("array -> bits, wall count: `cs.measure(g, \"wall_fraction\")`", lambda: cs.measure(g, "wall_fraction")),
        ("a bool array: `cs.step(g.astype(bool), rule, steps=0)`", lambda b=g.astype(bool): cs.step(b, "B5678/S45678", steps=0)),
    ]
    print("| call on a 1024x1024 uint8 array | median ms | ns per cell |")
    print("|---|---:|---:|")
    for name, f in rows:
        ms = median_ms(f)
        print(f"| {name} | {ms:.4f} | {ms * 1e6 / cells:.4f} |")


if __name__ == "__main__":
    main()
