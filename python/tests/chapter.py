"""The book chapter's numpy cave pipeline, transcribed for the tests.

Chapter 15 of 'Cellular Automata From First Principles', "Generate Caves from Noise", builds a
cave with numpy: ``random_cave`` (``np.random.default_rng(seed)``, 90x140, WALL iff
``u < 0.45``), ``cave_step`` four times (``wall_count`` over the 8 neighbours through
``shift_fixed``, WALL iff the count is >= 5, then ``solid_border``), and scores it with
``evaluate_cave`` (floor fraction; fraction of the floor that ``reachable_floor``'s
4-connected BFS reaches from the spawn (45, 70)). These functions follow the chapter's code
line by line. ``shift_fixed`` is the one helper the chapter reuses from its chapter 10 without
printing it; it is written here from the chapter's description ("pads missing neighbors with
empty cells instead of wrapping").
"""

from collections import deque

import numpy as np

FLOOR = 0
WALL = 1


def random_cave(rows=90, cols=140, wall_probability=0.45, seed=42):
    rng = np.random.default_rng(seed)
    grid = (rng.random((rows, cols)) < wall_probability).astype(np.uint8)
    return grid


def shift_fixed(a, dy, dx):
    """``a`` moved by (dy, dx): out[y, x] = a[y - dy, x - dx] where that cell exists, else 0."""
    out = np.zeros_like(a)
    rows, cols = a.shape
    ys, yd = (slice(0, rows - dy), slice(dy, rows)) if dy >= 0 else (slice(-dy, rows), slice(0, rows + dy))
    xs, xd = (slice(0, cols - dx), slice(dx, cols)) if dx >= 0 else (slice(-dx, cols), slice(0, cols + dx))
    out[yd, xd] = a[ys, xs]
    return out


def wall_count(grid):
    count = np.zeros_like(grid, dtype=np.uint8)
    walls = grid == WALL
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            if dy == 0 and dx == 0:
                continue
            count += shift_fixed(walls, dy, dx)
    return count


def solid_border(grid):
    bordered = grid.copy()
    bordered[0, :] = bordered[-1, :] = WALL
    bordered[:, 0] = bordered[:, -1] = WALL
    return bordered


def cave_step(grid, threshold=5):
    nearby = wall_count(grid)
    next_grid = (nearby >= threshold).astype(np.uint8)
    return solid_border(next_grid)


def build_cave(seed, steps=4, threshold=5):
    grid = random_cave(seed=seed)
    for _ in range(steps):
        grid = cave_step(grid, threshold=threshold)
    return grid


def build_cave_trajectory(seed, steps=4, threshold=5):
    """``build_cave`` recording the wall fraction after the fill and after every step."""
    grid = random_cave(seed=seed)
    fractions = [float(grid.mean())]
    for _ in range(steps):
        grid = cave_step(grid, threshold=threshold)
        fractions.append(float(grid.mean()))
    return grid, fractions


def reachable_floor(grid, start):
    rows, cols = grid.shape
    seen = np.zeros_like(grid, dtype=bool)
    queue = deque([start])
    seen[start] = True
    while queue:
        y, x = queue.popleft()
        for dy, dx in [(-1, 0), (1, 0), (0, -1), (0, 1)]:
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
