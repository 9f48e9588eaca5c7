#!/usr/bin/env python3
"""What the Python shell costs: generate()'s overhead and generate_many()'s throughput.

1. Overhead of one ``generate`` call over the Rust pipeline: the per-cave time of
   ``cavesweep.generate(recipe, seed)`` in a Python loop (fill, steps, a new numpy array, the
   cells unpacked into it, the call itself) against the same pipeline run by the library in a
   Rust loop on one thread with no array (``cavesweep._native._time_pipeline``), both in this
   process, interleaved, medians of ``--repeats`` runs.
2. ``generate_many(recipe, range(N))`` caves/s on all cores, into a new array and into a
   reused ``out=`` buffer, against the command line making the same caves on the same cores:
   ``cavesweep sweep --metrics wall_fraction --per-seed none``, the cheapest sweep there is (the
   wall fraction comes with the generation; no other metric, no per-seed file): the fastest
   the command line makes caves, so the strongest baseline. Also its default sweep (every
   metric), for scale.
   Each new-array row (``generate_many`` and numpy's below) first allocates, touches and
   frees an array of the same size, so both start from the same memory state (see
   ``recycle``).
3. What writing the array costs by itself, in the same run: ``generate_many``'s own copy-out
   with no generation (``cavesweep._native._time_copy_out``: one all-wall cave pushed into the
   reused buffer N times through the same streaming stores, in the same blocks, on 1 thread and
   on all), which bounds any ``generate_many`` figure; and numpy filling a new array of the
   same shape (``np.empty(...)`` then ``a.fill(1)``: the operating system's zeroing of fresh
   pages plus one write) and refilling an existing one (``buf.fill(1)``). ``generate_many``
   writes 12.6 kB per 90x140 cave (1.26 GB per 100,000) which the command line never writes;
   on a machine whose memory bandwidth is low for its cores, those bytes are the floor.

All rows interleaved, medians of ``--repeats`` runs.

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


def recycle(shape, n):
    """Allocate, touch and free an array like the one measured next, so that every new-array
    row starts from the same state: pages the process has just freed. (On a virtual machine
    whose balloon reports free memory to the host, such as the one these figures come from,
    pages left free for a couple of seconds go back to the host and cost a host fault each
    when touched again: a new array then costs several times more, numpy's own included.)"""
    a = np.empty((n, *shape), dtype=np.uint8)
    a.fill(0)
    del a


def numpy_rates(shape, n, buf):
    """(caves/s of a new array filled, caves/s of refilling `buf`): the memory floor."""
    recycle(shape, n)
    t = time.perf_counter()
    a = np.empty((n, *shape), dtype=np.uint8)
    a.fill(1)
    new = n / (time.perf_counter() - t)
    del a
    t = time.perf_counter()
    buf.fill(1)
    return new, n / (time.perf_counter() - t)


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

    many, reused, cli_all, cli_min, np_new, np_refill = [], [], [], [], [], []
    copy1, copyn = [], []
    cmd_all = cmd_min = ""
    generate_many_rate(r, min(a.seeds, 10_000), a.threads)  # warm up
    buf = np.ones((a.seeds, *r.shape), dtype=np.uint8)  # touched: its pages are mapped
    for _ in range(a.repeats):
        recycle(r.shape, a.seeds)
        many.append(generate_many_rate(r, a.seeds, a.threads))
        reused.append(generate_many_rate(r, a.seeds, a.threads, out=buf))
        new, refill = numpy_rates(r.shape, a.seeds, buf)
        np_new.append(new)
        np_refill.append(refill)
        copy1.append(a.seeds / cs._native._time_copy_out(buf, 1))
        copyn.append(a.seeds / cs._native._time_copy_out(buf, a.threads))
        rate, cmd_all = cli_rate(a.cli, a.preset, a.seeds, a.threads, [])
        cli_all.append(rate)
        rate, cmd_min = cli_rate(a.cli, a.preset, a.seeds, a.threads, ["--metrics", "wall_fraction", "--per-seed", "none"])
        cli_min.append(rate)

    med = statistics.median
    rows, cols = r.shape
    gb = a.seeds * rows * cols / 1e9
    simd = os.environ.get("CAVESWEEP_SIMD") or "best for this CPU"
    print(f"{a.preset} ({rows}x{cols}), {a.repeats} interleaved runs, medians; {a.threads} threads for the throughput rows; SIMD path: {simd}\n")
    print("| what | figure |")
    print("|---|---|")
    print(f"| Rust pipeline, one thread (`_time_pipeline`) | {med(rust_us):.2f} us/cave |")
    print(f"| `generate(recipe, seed)` in a Python loop | {med(py_us):.2f} us/call |")
    print(f"| overhead of `generate` over the pipeline | **{med(overhead):.2f} us/call** |")
    print(f"| `generate(\"{a.preset}\", seed)` (preset name each call) | {med(py_str_us):.2f} us/call (+{med(overhead_str):.2f}) |")
    print(f"| `{cmd_min}` (baseline) | **{med(cli_min):,.0f} caves/s** |")
    print(f"| `generate_many(recipe, range({a.seeds}), out=buf)` (buffer reused) | **{med(reused):,.0f} caves/s ({med(reused) / med(cli_min):.2f}x the baseline)** |")
    print(f"| `generate_many(recipe, range({a.seeds}))` (a new {gb:.2f} GB array) | **{med(many):,.0f} caves/s ({med(many) / med(cli_min):.2f}x the baseline)** |")
    print(f"| `{cmd_all}` (every metric) | {med(cli_all):,.0f} caves/s |")
    print(f"| numpy alone: `buf.fill(1)` (refill the {gb:.2f} GB buffer) | {med(np_refill):,.0f} caves/s ({gb / (a.seeds / med(np_refill)):.1f} GB/s) |")
    print(f"| numpy alone: `np.empty(...)` + `.fill(1)` (a new {gb:.2f} GB array) | {med(np_new):,.0f} caves/s ({gb / (a.seeds / med(np_new)):.1f} GB/s) |")
    print(f"| copy-out alone, 1 thread (`_time_copy_out(buf, 1)`: the streaming stores, no generation) | {med(copy1):,.0f} caves/s ({gb / (a.seeds / med(copy1)):.1f} GB/s) |")
    print(f"| copy-out alone, {a.threads} threads (`_time_copy_out(buf, {a.threads})`) | {med(copyn):,.0f} caves/s ({gb / (a.seeds / med(copyn)):.1f} GB/s) |")
    # The bound, from this run's medians: generation at the baseline's rate G and writing at
    # the copy-out's rate W. Overlapped perfectly, caves/s <= min(G, W); taking turns (each
    # core generates, then writes), 1 / (1/G + 1/W).
    g, w = med(cli_min), med(copyn)
    need = 0.8 * g
    turns = 1 / (1 / g + 1 / w)
    print(
        f"\n**The bound in this run.** 0.8x the baseline is {need:,.0f} caves/s: "
        f"{need * rows * cols / 1e9:.1f} GB/s of cave bytes written while the same cores generate. "
        f"Writing alone (no generation) reached {w:,.0f} caves/s ({w * rows * cols / 1e9:.1f} GB/s) on {a.threads} threads "
        f"and {med(copy1):,.0f} ({med(copy1) * rows * cols / 1e9:.1f} GB/s) on one. "
        f"If each core generates and writes in turn, the most `generate_many` can reach is "
        f"1 / (1/{g:,.0f} + 1/{w:,.0f}) = {turns:,.0f} caves/s ({turns / g:.2f}x); only writes that fully overlap "
        f"the generation reach min(G, W) = {min(g, w):,.0f} ({min(g, w) / g:.2f}x). "
        f"`generate_many` into the reused buffer reached {med(reused):,.0f} ({med(reused) / g:.2f}x)."
    )

if __name__ == "__main__":
    main()
