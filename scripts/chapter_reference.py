#!/usr/bin/env python3
"""The book chapter's own numpy cave pipeline, transcribed, timed per core.

'Generate Caves from Noise' (chapter 15 of 'Cellular Automata From First Principles', see
docs/sources.md) builds a cave with numpy: random_cave
(default_rng(seed), 90x140, 45% walls), 4 x cave_step (wall_count over the 8 neighbours via
shift_fixed, which pads missing neighbours with 0 instead of wrapping; WALL iff count >= 5; then
solid_border) and evaluates it with evaluate_cave (floor fraction, fraction of floor reachable
4-connected from spawn (45, 70) by reachable_floor's BFS). The functions below are that code,
kept as the chapter wrote it, so the timings are the chapter's pipeline and not a tuned rewrite;
only `rule` is added so the classic 4-5 rule (3x3 including the centre >= 5, i.e.
count8 + centre >= 5) can run through the same code.

This is the "numpy peer" of benches/peers.rs (scripts/peers.sh runs both). It prints seeds/s for
(a) generation only (build_cave) and (b) build_cave + evaluate_cave, each over seeds 0..N-1, on
one thread: the BLAS/OpenMP thread pools are pinned to 1 before numpy is imported (none of
these operations use BLAS, but the pin makes "per core" explicit). With --csv it writes one row
per seed (seed, final wall fraction, connected fraction) so the caves can be checked against
`cavesweep reproduce chapter`, which replays numpy's generator bit for bit.

Needs numpy: run it with the venv Python that `scripts/numpy_venv.sh` prints (it creates a venv
under target/ with numpy from PyPI; the system Python is never touched).
"""

import os

# Pin every thread pool numpy might use to one thread before numpy is imported.
for _var in (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import deque  # noqa: E402


try:
    import numpy as np  # noqa: E402
except ImportError:
    sys.exit(
        "numpy is missing: run this script with the Python that scripts/numpy_venv.sh prints "
        "(a venv under target/ with numpy from PyPI)"
    )

FLOOR = 0
WALL = 1


# --- the chapter's code ----------------------------------------------------------------------


def random_cave(
    rows=90,
    cols=140,
    wall_probability=0.45,
    seed=42,
):
    rng = np.random.default_rng(seed)
    grid = (rng.random((rows, cols)) < wall_probability).astype(np.uint8)
    return grid


def shift_fixed(a, dy, dx):
    """Chapter 10's helper as chapter 15 describes it: `a` shifted by (dy, dx) with fixed
    boundaries, no wraparound; neighbours that fall outside the grid are padded with empty (0)
    cells. out[y, x] = a[y - dy, x - dx] (np.roll's direction) where that index exists."""
    rows, cols = a.shape
    out = np.zeros_like(a)
    dst_y = slice(max(dy, 0), rows + min(dy, 0))
    src_y = slice(max(-dy, 0), rows + min(-dy, 0))
    dst_x = slice(max(dx, 0), cols + min(dx, 0))
    src_x = slice(max(-dx, 0), cols + min(-dx, 0))
    out[dst_y, dst_x] = a[src_y, src_x]
    return out


def wall_count(grid):
    count = np.zeros_like(
        grid,
        dtype=np.uint8,
    )
    walls = grid == WALL
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            if dy == 0 and dx == 0:
                continue
            count += shift_fixed(
                walls,
                dy,
                dx,
            )
    return count


def solid_border(grid):
    bordered = grid.copy()
    bordered[0, :] = bordered[-1, :] = WALL
    bordered[:, 0] = bordered[:, -1] = WALL
    return bordered


def cave_step(
    grid,
    threshold=5,
    rule="strict",
):
    nearby = wall_count(grid)
    if rule == "classic":
        # Not in the chapter's code: the classic 4-5 rule counts the centre too.
        nearby = nearby + grid
    next_grid = (nearby >= threshold).astype(np.uint8)
    return solid_border(next_grid)


def build_cave(seed, steps=4, threshold=5, rule="strict"):
    grid = random_cave(seed=seed)
    for _ in range(steps):
        grid = cave_step(grid, threshold=threshold, rule=rule)
    return grid


def reachable_floor(
    grid,
    start,
):
    rows, cols = grid.shape
    seen = np.zeros_like(
        grid,
        dtype=bool,
    )
    queue = deque([start])
    seen[start] = True
    while queue:
        y, x = queue.popleft()
        for dy, dx in [
            (-1, 0),
            (1, 0),
            (0, -1),
            (0, 1),
        ]:
            ny = y + dy
            nx = x + dx
            if not (0 <= ny < rows and 0 <= nx < cols):
                continue
            if seen[ny, nx] or grid[ny, nx] == WALL:
                continue
            seen[ny, nx] = True
            queue.append((ny, nx))
    return seen


def evaluate_cave(cave, spawn):
    floor_cells = cave == FLOOR
    floor_fraction = float(floor_cells.mean())
    reachable = reachable_floor(cave, spawn)
    connected_fraction = float(reachable.sum() / max(1, floor_cells.sum()))
    return floor_fraction, connected_fraction


# --- timing harness ----------------------------------------------------------------------------

SPAWN = (45, 70)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--rule",
        choices=["strict", "classic"],
        default="strict",
        help="strict: >= 5 of the 8 neighbours (the chapter's); classic: 3x3 incl. centre >= 5",
    )
    ap.add_argument("--seeds", type=int, default=2000, help="seeds 0..N-1 (default 2000)")
    ap.add_argument("--steps", type=int, default=4, help="smoothing steps (default 4)")
    ap.add_argument(
        "--csv", type=str, default=None, help="write seed,final_wall_fraction,connected_fraction"
    )
    a = ap.parse_args()
    if a.seeds < 1:
        ap.error("--seeds must be at least 1")

    seeds = range(a.seeds)
    # Warm up numpy's allocator and code paths so the first seed does not count import costs.
    evaluate_cave(build_cave(0, steps=a.steps, rule=a.rule), spawn=SPAWN)

    t0 = time.perf_counter()
    for seed in seeds:
        build_cave(seed, steps=a.steps, rule=a.rule)
    gen_s = time.perf_counter() - t0

    rows = []
    t0 = time.perf_counter()
    for seed in seeds:
        cave = build_cave(seed, steps=a.steps, rule=a.rule)
        _floor_fraction, connected = evaluate_cave(cave, spawn=SPAWN)
        rows.append((seed, cave, connected))
    eval_s = time.perf_counter() - t0

    if a.csv:
        with open(a.csv, "w") as f:
            f.write("seed,final_wall_fraction,connected_fraction\n")
            for seed, cave, connected in rows:
                # Exact count / cells, like cavesweep's trajectory.
                wall = int(cave.sum()) / cave.size
                f.write(f"{seed},{wall:.6f},{connected:.6f}\n")

    n = len(seeds)
    print(f"rule: {a.rule}  seeds: {n}  steps: {a.steps}  numpy {np.__version__}")
    print(f"generate seeds_per_s: {n / gen_s:.2f}")
    print(f"generate+evaluate seeds_per_s: {n / eval_s:.2f}")


if __name__ == "__main__":
    main()
