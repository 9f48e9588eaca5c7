#!/usr/bin/env python3
"""What the Python shell costs: generate()'s overhead and generate_many()'s throughput.

1. Overhead of one ``generate`` call over the Rust pipeline: the per-cave time of
   ``cavesweep.generate(recipe, seed)`` in a Python loop (fill, steps, a new numpy array, the
   cells unpacked into it, the call itself) against the same pipeline run by the library in a
   Rust loop on one thread with no array (``cavesweep._native._time_pipeline``), both in this
   process, interleaved, medians of ``--repeats`` runs.
2. ``generate_many(recipe, range(N))`` caves/s on all cores (into a new array, and into a
   reused ``out=`` buffer, which skips the operating system's zeroing of fresh pages: N caves
   of 90x140 are N x 12.6 kB) against the command line's
   ``cavesweep sweep`` caves/s for the same recipe and seeds (its own report line), once with
   its default metrics (all) and once with the cheapest (``--metrics wall_fraction
   --per-seed none``), also interleaved.

Run from the repository root after ``pip install ./python`` and ``cargo build --release``:

    python python/benches/bench_generate.py [--seeds 100000] [--repeats 5]

Prints a Markdown table (the figures in python/README.md come from it).
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import cavesweep as cs


def per_call_generate(recipe, n, start):
    t = time.perf_counter()
    for s in range(start, start + n):
        cs.generate(recipe, s)
    return (time.perf_counter() - t) / n


def generate_many_rate(recipe, n, threads, out=None):
    t = time.perf_counter()
    a = cs.generate_many(recipe, range(n), threads=threads, out=out)
    secs = time.perf_counter() - t
    assert a.shape[0] == n
    del a
    return n / secs


def cli_rate(cli, preset, n, threads, extra):
    with tempfile.TemporaryDirectory() as d:
        cmd = [cli, "sweep", "--preset", preset, "--seeds", f"0..{n}", "--threads", str(threads), "--out", d, *extra]
        p = subprocess.run(cmd, capture_output=True, text=True, check=True)
    m = re.search(r"([0-9]+) caves/s", p.stderr)
    assert m, p.stderr
    return float(m.group(1)), " ".join(cmd[:6] + ["--threads", str(threads), "--out", "DIR", *extra])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="chapter-strict")
    ap.add_argument("--seeds", type=int, default=100_000, help="caves per generate_many / sweep run")
    ap.add_argument("--calls", type=int, default=20_000, help="generate calls per overhead run")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--cli", default=os.path.join("target", "release", "cavesweep"))
    a = ap.parse_args()
    if not os.path.isfile(a.cli):
        sys.exit(f"no {a.cli}: run `cargo build --release` first (or give --cli PATH)")

    r = cs.recipe(a.preset)
    cs.generate(r, 0)  # warm up (the per-thread generator, numpy's allocator)
    py_us, py_str_us, rust_us = [], [], []
    for i in range(a.repeats):
        start = i * a.calls
        py_us.append(per_call_generate(r, a.calls, start) * 1e6)
        py_str_us.append(per_call_generate(a.preset, a.calls, start) * 1e6)
        rust_us.append(cs._native._time_pipeline(r, start, a.calls) / a.calls * 1e6)
    overhead = [p - q for p, q in zip(py_us, rust_us)]
    overhead_str = [p - q for p, q in zip(py_str_us, rust_us)]

    many, reused, cli_all, cli_min = [], [], [], []
    cmd_all = cmd_min = ""
    generate_many_rate(r, min(a.seeds, 10_000), a.threads)  # warm up
    buf = np.ones((a.seeds, *r.shape), dtype=np.uint8)  # touched: its pages are mapped
    for _ in range(a.repeats):
        many.append(generate_many_rate(r, a.seeds, a.threads))
        reused.append(generate_many_rate(r, a.seeds, a.threads, out=buf))
        rate, cmd_all = cli_rate(a.cli, a.preset, a.seeds, a.threads, [])
        cli_all.append(rate)
        rate, cmd_min = cli_rate(a.cli, a.preset, a.seeds, a.threads, ["--metrics", "wall_fraction", "--per-seed", "none"])
        cli_min.append(rate)

    med = statistics.median
    rows, cols = r.shape
    print(f"{a.preset} ({rows}x{cols}), {a.repeats} interleaved runs, medians; {a.threads} threads for the throughput rows\n")
    print("| what | figure |")
    print("|---|---|")
    print(f"| Rust pipeline, one thread (`_time_pipeline`) | {med(rust_us):.2f} us/cave |")
    print(f"| `generate(recipe, seed)` in a Python loop | {med(py_us):.2f} us/call |")
    print(f"| overhead of `generate` over the pipeline | **{med(overhead):.2f} us/call** |")
    print(f"| `generate(\"{a.preset}\", seed)` (preset name each call) | {med(py_str_us):.2f} us/call (+{med(overhead_str):.2f}) |")
    print(f"| `generate_many(recipe, range({a.seeds}))` (a new {a.seeds * rows * cols / 1e9:.2f} GB array) | **{med(many):,.0f} caves/s** |")
    print(f"| `generate_many(recipe, range({a.seeds}), out=buf)` (buffer reused) | {med(reused):,.0f} caves/s |")
    print(f"| `{cmd_all}` | {med(cli_all):,.0f} caves/s (generate_many: {med(many) / med(cli_all):.2f}x) |")
    print(f"| `{cmd_min}` | {med(cli_min):,.0f} caves/s (generate_many: {med(many) / med(cli_min):.2f}x) |")


if __name__ == "__main__":
    main()
