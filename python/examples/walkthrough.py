#!/usr/bin/env python3
"""The walk-through of python/README.md, run for real: prints every cell's output and writes
the figures to python/images/. Needs matplotlib and pandas besides cavesweep:

    pip install ./python matplotlib pandas
    python python/examples/walkthrough.py
"""

import os

import matplotlib

matplotlib.use("Agg")  # files, not windows

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import cavesweep as cs  # noqa: E402

IMAGES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "images")
os.makedirs(IMAGES, exist_ok=True)


def save(fig, name):
    path = os.path.join(IMAGES, name)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    print(f"[figure: images/{name}]")


print("## 1. The chapter's cave for seed 42")
cave, walls = cs.generate("chapter-strict", seed=42, rng="numpy", trajectory=True)
print(cave.shape, cave.dtype, walls.round(4))
print(cs.measure(cave, spawn=(45, 70)))

fig, ax = plt.subplots(figsize=(7, 4.6))
ax.imshow(cave, cmap="gray_r", interpolation="nearest")
ax.plot(70, 45, "r*", markersize=12, label="spawn (45, 70)")
ax.set_title(f"chapter-strict, seed 42, numpy RNG: {walls[-1]:.1%} wall after 4 steps")
ax.legend(loc="lower right")
save(fig, "chapter-seed-42.png")

print("\n## 2. A sweep over fill")
fills = np.round(np.arange(0.40, 0.601, 0.02), 2)
tables = {}
for preset in ["chapter-strict", "classic-4-5"]:
    tables[preset] = cs.sweep(
        preset,
        vary={"fill": fills},
        seeds=range(5000),
        gate="connected_fraction>=0.99 && floor_fraction>=0.5",
        metrics=["wall_fraction", "components", "connected_fraction"],
    )
df = tables["classic-4-5"]
print(df[["fill", "wall_fraction_mean", "wall_fraction_sd", "components_mean", "pass_rate"]].to_string(index=False))

fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
for preset, t in tables.items():
    a1.errorbar(t["fill"], t["wall_fraction_mean"], yerr=t["wall_fraction_sd"], marker="o", ms=3, capsize=2, label=preset)
    a2.plot(t["fill"], t["pass_rate"], marker="o", ms=3, label=preset)
a1.plot(fills, fills, ":", color="gray", label="no smoothing")
a1.set(xlabel="initial wall probability (fill)", ylabel="wall fraction after 4 steps", title="mean +- sd over 5,000 seeds")
a2.set(xlabel="initial wall probability (fill)", ylabel="pass rate", title="connected >= 99% and floor >= 50%")
a1.legend()
a2.legend()
save(fig, "sweep-fill.png")

print("\n## 3. Measuring your own numpy cave")
rng = np.random.default_rng(7)
mine = (rng.random((60, 100)) < 0.48).astype(np.uint8)
for _ in range(5):
    # Your own rule: WALL iff >= 5 walls in the 3x3 block (out of bounds counts as wall).
    p = np.pad(mine, 1, constant_values=1)
    block = sum(p[dy : dy + 60, dx : dx + 100] for dy in range(3) for dx in range(3))
    mine = (block >= 5).astype(np.uint8)
print(cs.measure(mine, spawn=(30, 50)))
kept = cs.keep_largest(mine)
ys, xs = np.nonzero(kept == cs.FLOOR)
spawn = (int(ys[0]), int(xs[0]))  # the first floor cell left
print(spawn, cs.measure(kept, metrics=["floor_fraction", "components", "connected_fraction"], spawn=spawn))

fig, axes = plt.subplots(1, 2, figsize=(10, 3.4))
for ax, (title, g) in zip(axes, [("your cave", mine), ("keep_largest(your cave)", kept)]):
    m = cs.measure(g, metrics=["components", "floor_fraction"])
    ax.imshow(g, cmap="gray_r", interpolation="nearest")
    n = m["components"]
    ax.set_title(f"{title}: {n} component{'s' * (n != 1)}, {m['floor_fraction']:.0%} floor")
    ax.axis("off")
save(fig, "own-cave.png")

print("\n## 4. Many caves at once")
many = cs.generate_many("classic-4-5", range(10_000))
print(many.shape, many.dtype, f"{many.nbytes / 1e6:.0f} MB")
fig, ax = plt.subplots(figsize=(7, 4.6))
im = ax.imshow(many.mean(axis=0), cmap="magma", vmin=0, vmax=1)
fig.colorbar(im, ax=ax, fraction=0.03, label="P(wall)")
ax.set_title("classic-4-5: how often each cell is wall, over 10,000 seeds")
save(fig, "wall-probability.png")

print("\n## 5. Searching for seeds")
best = cs.search(
    "classic-4-5",
    where="components==1 && floor_fraction>=0.62",
    seeds=range(200_000),
    top=4,
    by="reach_depth",
)
print(best.to_string(index=False))
print(best.attrs["cavesweep"]["command"])
fig, axes = plt.subplots(1, 4, figsize=(13, 2.6))
for ax, (seed, depth) in zip(axes, zip(best.seed, best.reach_depth)):
    ax.imshow(cs.generate("classic-4-5", seed), cmap="gray_r", interpolation="nearest")
    ax.plot(70, 45, "r*", markersize=8)
    ax.set_title(f"seed {seed}: reach depth {depth}")
    ax.axis("off")
save(fig, "search-top.png")
