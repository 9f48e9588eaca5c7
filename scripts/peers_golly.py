#!/usr/bin/env python3
"""Golly beside cavesweep on Golly's own ground (issue 38, run by scripts/peers.sh).

The work: Conway's Life (B3/S23) on a SIDE x SIDE torus from a random soup (each cell live with
probability FILL, numpy's default_rng(SEED)), GENS generations. Golly's headless `bgolly`
(QuickLife, its default algorithm, on the bounded torus `B3/S23:TSIDE,SIDE`) and `cavesweep run`
(the start grid from an .npy file, one pass of B3/S23, `outside = wrap`, `border = none`,
`update = sync`) each run as a whole process, reading the start grid from a file and writing the
final grid to a file; the wall time of the process is timed (perf_counter around spawn + wait)
and its CPU time read from wait4's rusage. WALL = 1 is cavesweep's live cell, as in
tests/golly.rs.

Each command also runs for 1 generation: the difference GENS - 1 takes out the start-up, the
file reading and writing, and isolates the stepping. The rounds are interleaved so both programs
see the same machine load; medians are reported.

Check: Golly's final RLE, parsed here, must equal cavesweep's final .npy cell for cell (also
after 1 generation). On a mismatch the JSON says so and the script exits 3 (scripts/peers.sh
then writes the report, which says FAIL, and fails). Other errors exit 1 or 2.

    python scripts/peers_golly.py --bgolly bgolly --cavesweep target/release/cavesweep \
        --work DIR --json OUT.json
"""

import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import time

import numpy as np

RULE = "B3/S23"


def soup(side, fill, seed):
    """The start grid, 1 = live (WALL). The same draw as cavesweep's `rng = "numpy"` fill."""
    return (np.random.default_rng(seed).random((side, side)) < fill).astype(np.uint8)


def to_rle(g, rule):
    """The grid as RLE, placed (as tests/golly.rs does) so Golly's bounded grid holds it."""
    rows, cols = g.shape
    out = [f"#CXRLE Pos={-(cols // 2)},{-(rows // 2)}", f"x = {cols}, y = {rows}, rule = {rule}"]
    lines = []
    for r in g:
        # Run boundaries of the row, then one `<n>b` / `<n>o` token per run.
        edges = np.flatnonzero(np.diff(r)) + 1
        starts = np.concatenate(([0], edges))
        ends = np.concatenate((edges, [cols]))
        lines.append(
            "".join(
                (str(e - s) if e - s > 1 else "") + ("o" if r[s] else "b")
                for s, e in zip(starts, ends)
            )
        )
    body = "$".join(lines) + "!"
    out += [body[i : i + 70] for i in range(0, len(body), 70)]
    return "\n".join(out) + "\n"


def from_rle(text):
    """Golly's RLE as a 0/1 array of its live cells' bounding box (what bgolly writes)."""
    width = height = None
    body = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if width is None and line.startswith("x"):
            m = re.match(r"x\s*=\s*(\d+)\s*,\s*y\s*=\s*(\d+)", line)
            if not m:
                raise SystemExit(f"peers_golly: unexpected RLE header {line!r}")
            width, height = int(m.group(1)), int(m.group(2))
            continue
        body.append(line)
    if width is None:
        raise SystemExit("peers_golly: no RLE header in Golly's output")
    g = np.zeros((height, width), dtype=np.uint8)
    y = x = 0
    for m in re.finditer(r"(\d*)([bo.A-Z$!])", "".join(body)):
        n = int(m.group(1) or 1)
        c = m.group(2)
        if c == "!":
            break
        if c == "$":
            y += n
            x = 0
            continue
        if c not in "b.":
            g[y, x : x + n] = 1
        x += n
    return g


def crop(g):
    """The bounding box of the live cells (empty when there are none)."""
    ys, xs = np.nonzero(g)
    if len(ys) == 0:
        return g[:0, :0]
    return g[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]


def compare(golly, ours):
    """(identical, how): Golly writes its live cells' bounding box. When it is the whole grid
    the placement is fixed and the grids are compared as they are; otherwise (a grid with empty
    rows or columns at its edges, which a soup this size does not leave) both are cropped to
    their live cells, as tests/golly.rs compares them."""
    if golly.shape == ours.shape:
        return bool(np.array_equal(golly, ours)), "whole grid, cell for cell"
    a, b = crop(golly), crop(ours)
    return (
        bool(a.shape == b.shape and np.array_equal(a, b)),
        "cropped to the live cells, cell for cell",
    )


def run(cmd, out_file, log):
    """Wall seconds and CPU seconds (user + sys, from wait4) of one process; the output file is
    removed first so every run writes it."""
    if os.path.exists(out_file):
        os.remove(out_file)
    with open(log, "wb") as f:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0 or not os.path.isfile(out_file):
        with open(log, errors="replace") as f:
            sys.stderr.write(f.read())
        raise SystemExit(f"peers_golly: {shlex.join(cmd)} failed (exit {p.returncode})")
    return wall, ru.ru_utime + ru.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bgolly", default="bgolly")
    ap.add_argument("--cavesweep", default="target/release/cavesweep")
    ap.add_argument("--work", required=True, help="folder for the grids and logs")
    ap.add_argument("--json", required=True, help="write the timings and the check here")
    ap.add_argument("--side", type=int, default=1024)
    ap.add_argument("--gens", type=int, default=1000)
    ap.add_argument("--fill", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=38)
    ap.add_argument(
        "--rounds", type=int, default=5, help="interleaved rounds (bgolly runs once per round)"
    )
    ap.add_argument(
        "--cavesweep-runs", type=int, default=5, help="cavesweep runs per round (its runs are far shorter)"
    )
    a = ap.parse_args()
    if a.gens < 2:
        raise SystemExit("peers_golly: --gens must be at least 2 (1 generation is the baseline)")
    os.makedirs(a.work, exist_ok=True)

    def w(name):
        return os.path.join(a.work, name)

    start = soup(a.side, a.fill, a.seed)
    np.save(w("start.npy"), start)
    torus = f"{RULE}:T{a.side},{a.side}"
    with open(w("start.rle"), "w") as f:
        f.write(to_rle(start, torus))

    def golly_cmd(gens):
        return [
            a.bgolly,
            "-a",
            "QuickLife",
            "-q",
            "-q",
            "-m",
            str(gens),
            "-r",
            torus,
            "-o",
            w(f"golly-{gens}.rle"),
            w("start.rle"),
        ]

    def cavesweep_cmd(gens):
        return [
            a.cavesweep,
            "run",
            "--preset",
            "classic-4-5",
            "--from",
            w("start.npy"),
            "--set",
            f"rows={a.side}",
            "--set",
            f"cols={a.side}",
            "--set",
            f"rule={RULE}",
            "--set",
            f"steps={gens}",
            "--set",
            "outside=wrap",
            "--set",
            "border=none",
            "--set",
            "update=sync",
            "--metrics",
            "wall_fraction",
            "--save",
            w(f"cavesweep-{gens}.npy"),
        ]

    times = {k: [] for k in ("golly", "golly_1", "cavesweep", "cavesweep_1")}
    for r in range(a.rounds):
        times["golly"].append(run(golly_cmd(a.gens), w(f"golly-{a.gens}.rle"), w("golly.log")))
        times["golly_1"].append(run(golly_cmd(1), w("golly-1.rle"), w("golly.log")))
        for _ in range(a.cavesweep_runs):
            times["cavesweep"].append(
                run(cavesweep_cmd(a.gens), w(f"cavesweep-{a.gens}.npy"), w("cavesweep.log"))
            )
            times["cavesweep_1"].append(
                run(cavesweep_cmd(1), w("cavesweep-1.npy"), w("cavesweep.log"))
            )
        print(
            f"golly round {r + 1}/{a.rounds}: bgolly {times['golly'][-1][0]:.3f} s, "
            f"cavesweep {times['cavesweep'][-1][0]:.4f} s",
            file=sys.stderr,
        )

    checks = {}
    for gens in (1, a.gens):
        with open(w(f"golly-{gens}.rle")) as f:
            golly = from_rle(f.read())
        ours = np.load(w(f"cavesweep-{gens}.npy"))
        same, how = compare(golly, ours)
        checks[gens] = {
            "identical": same,
            "how": how,
            "golly_live": int(golly.sum()),
            "cavesweep_live": int(ours.sum()),
            "golly_box": list(golly.shape),
        }

    def med(k, i):
        return statistics.median(t[i] for t in times[k])

    cells = a.side * a.side
    res = {
        "side": a.side,
        "gens": a.gens,
        "fill": a.fill,
        "seed": a.seed,
        "rule": RULE,
        "torus_rule": torus,
        "rounds": a.rounds,
        "cavesweep_runs": a.cavesweep_runs,
        "start_live": int(start.sum()),
        "golly_cmd": shlex.join(golly_cmd(a.gens)),
        "cavesweep_cmd": shlex.join(cavesweep_cmd(a.gens)),
        "checks": {str(k): v for k, v in checks.items()},
        "identical": all(c["identical"] for c in checks.values()),
    }
    for k, t in times.items():
        res[k] = {
            "wall_s": med(k, 0),
            "cpu_s": med(k, 1),
            "min_wall_s": min(x[0] for x in t),
            "n": len(t),
        }
    for p in ("golly", "cavesweep"):
        whole = res[p]["wall_s"]
        net = whole - res[p + "_1"]["wall_s"]
        res[p]["updates_per_s"] = cells * a.gens / whole
        res[p]["net_s"] = net
        # Steps GENS - 1 beyond the baseline; None when the difference drowns in the noise.
        res[p]["net_updates_per_s"] = cells * (a.gens - 1) / net if net > 0 else None
    with open(a.json, "w") as f:
        json.dump(res, f, indent=1)
    for gens, c in checks.items():
        print(
            f"golly check after {gens} generation(s): {'identical' if c['identical'] else 'DIFFERENT'} "
            f"({c['how']}; live cells: Golly {c['golly_live']}, cavesweep {c['cavesweep_live']})",
            file=sys.stderr,
        )
    print(
        f"bgolly {res['golly']['wall_s']:.3f} s ({res['golly']['updates_per_s']:.3g} updates/s); "
        f"cavesweep {res['cavesweep']['wall_s']:.4f} s ({res['cavesweep']['updates_per_s']:.3g} updates/s)",
        file=sys.stderr,
    )
    if not res["identical"]:
        print(
            "peers_golly: *** MISMATCH: Golly's and cavesweep's final grids differ ***",
            file=sys.stderr,
        )
        sys.exit(3)


if __name__ == "__main__":
    main()
