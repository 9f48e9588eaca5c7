#!/usr/bin/env python3
"""OpenCV and scipy labelling beside cavesweep's (issue 38, run by scripts/peers.sh).

The work: count the FLOOR components (4-connectivity) of N classic-4-5 caves (90x140, seeds
0..N-1), made by the cavesweep Python package (`generate_many`, the caves `cavesweep run
--preset classic-4-5 --seed S` makes). Timed, one call per cave, over all N caves:

- OpenCV: `cv2.connectedComponents(floor, connectivity=4)` with `cv2.setNumThreads(1)`
  (components = its label count - 1, label 0 being the background);
- scipy: `scipy.ndimage.label(floor, structure=generate_binary_structure(2, 1))` (the cross);
- cavesweep: `cavesweep.measure(cave, metrics="components", connectivity=4)`, the Python call
  included (argument checks, bit packing of the uint8 array, the dict it returns).

OpenCV and scipy label non-zero pixels, so they get `floor = (cave == 0).astype(np.uint8)`, made
once before the timing (not timed: it favours them); cavesweep reads the cave itself (WALL = 1)
and labels its 0s. The three are timed in interleaved rounds (the order rotating), median per
method, as ns per cell = time / (N * 90 * 140).

Check: the three component counts must be equal for every cave; otherwise the JSON says so and
the script exits 3 (scripts/peers.sh then writes the report, which says FAIL, and fails).

    python scripts/peers_labels.py --seeds 2000 --json OUT.json
"""

import argparse
import json
import statistics
import sys
import time

import cv2
import numpy as np
import scipy
import scipy.ndimage as ndi

import cavesweep as cs

PRESET = "classic-4-5"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=2000, help="caves: seeds 0..SEEDS-1")
    ap.add_argument("--rounds", type=int, default=7, help="interleaved timing rounds")
    ap.add_argument("--json", required=True, help="write the timings and the check here")
    a = ap.parse_args()
    if a.seeds < 1:
        raise SystemExit("peers_labels: --seeds must be at least 1")

    cv2.setNumThreads(1)
    caves = cs.generate_many(PRESET, range(a.seeds), threads=1)
    n, rows, cols = caves.shape
    floors = [np.ascontiguousarray(c == 0, dtype=np.uint8) for c in caves]
    cave_list = list(caves)  # views, each a C-contiguous 90x140 uint8 array
    cross = ndi.generate_binary_structure(2, 1)

    def opencv():
        return [cv2.connectedComponents(f, connectivity=4)[0] - 1 for f in floors]

    def scipy_label():
        return [ndi.label(f, structure=cross)[1] for f in floors]

    def cavesweep_measure():
        return [
            cs.measure(c, metrics="components", connectivity=4)["components"] for c in cave_list
        ]

    methods = {"opencv": opencv, "scipy": scipy_label, "cavesweep": cavesweep_measure}

    # The check, on an untimed first pass (which also warms every code path up).
    counts = {k: f() for k, f in methods.items()}
    mismatches = {}
    for k in ("opencv", "scipy"):
        bad = [s for s in range(n) if counts[k][s] != counts["cavesweep"][s]]
        mismatches[k] = {"caves": len(bad)}
        if bad:
            s = bad[0]
            mismatches[k]["first"] = {
                "seed": s,
                k: int(counts[k][s]),
                "cavesweep": int(counts["cavesweep"][s]),
            }

    times = {k: [] for k in methods}
    order = list(methods)
    for r in range(a.rounds):
        for k in order[r % 3 :] + order[: r % 3]:
            t0 = time.perf_counter_ns()
            methods[k]()
            times[k].append(time.perf_counter_ns() - t0)

    cells = n * rows * cols
    comps = np.array(counts["cavesweep"])
    res = {
        "preset": PRESET,
        "seeds": n,
        "rows": rows,
        "cols": cols,
        "rounds": a.rounds,
        "components_mean": float(comps.mean()),
        "components_min": int(comps.min()),
        "components_max": int(comps.max()),
        "mismatches": mismatches,
        "identical": all(m["caves"] == 0 for m in mismatches.values()),
        "versions": {
            "opencv": cv2.__version__,
            "scipy": scipy.__version__,
            "numpy": np.__version__,
            "cv2_threads": cv2.getNumThreads(),
        },
    }
    for k, t in times.items():
        med = statistics.median(t)
        res[k] = {
            "ns_per_cell": med / cells,
            "min_ns_per_cell": min(t) / cells,
            "us_per_cave": med / n / 1000,
            "caves_per_s": n / (med / 1e9),
        }
    with open(a.json, "w") as f:
        json.dump(res, f, indent=1)
    for k in methods:
        print(
            f"labels {k}: {res[k]['ns_per_cell']:.3f} ns/cell ({res[k]['us_per_cave']:.2f} us/cave)",
            file=sys.stderr,
        )
    for k, m in mismatches.items():
        print(
            f"labels check {k} vs cavesweep: component counts equal for {n - m['caves']}/{n} caves",
            file=sys.stderr,
        )
    if not res["identical"]:
        print("peers_labels: *** MISMATCH: the component counts differ ***", file=sys.stderr)
        sys.exit(3)


if __name__ == "__main__":
    main()
