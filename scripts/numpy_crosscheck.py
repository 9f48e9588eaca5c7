#!/usr/bin/env python3
"""The chapter's numpy pipeline as a test fixture, for tests/numpy_crosscheck.rs.

Runs the book chapter's own code (the functions of scripts/chapter_reference.py: random_cave,
cave_step, evaluate_cave) with real numpy and writes what it computes, compactly, into a folder:

  fills.csv     seed,walls,crc32: the noise `default_rng(seed).random((90, 140)) < 0.45` for
                seeds 0..199 and the multi-word seeds 12345, 2^40+7, 2^64-1.
  chapter.csv   rule,seed,walls,crc32,floor_fraction,connected_fraction for rule strict (the
                chapter's B5678/S5678 cave_step) and classic (the centre counted too), seeds 0..199:
                `walls` and `crc32` are space-separated lists over steps 0..4 (0 = the noise);
                the two fractions are evaluate_cave's on the step-4 cave with spawn (45, 70),
                printed with repr() so they read back as the exact doubles.
  seed42_fill.txt, seed42_strict.txt, seed42_classic.txt
                three whole grids (`#` wall, `.` floor), so a mismatch can be looked at.
  README.md     the command that made the folder and the numpy/Python versions.

crc32 is zlib's CRC-32 of the grid packed as cavesweep packs its rows: each row padded with zero
bits to a multiple of 64 columns, column x stored as bit x % 64 of little-endian u64 word x // 64,
rows concatenated top to bottom.

  PY="$(scripts/numpy_venv.sh)"
  "$PY" scripts/numpy_crosscheck.py --out tests/fixtures/numpy_chapter     # (re)write the fixture
  "$PY" scripts/numpy_crosscheck.py --check tests/fixtures/numpy_chapter   # recompute, compare

--check recomputes every data file and exits non-zero unless each equals the committed one byte
for byte (README.md, which names versions, is not compared). `.ci/run` runs it.
"""

import argparse
import os
import platform
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chapter_reference import SPAWN, cave_step, evaluate_cave, np, random_cave  # noqa: E402

ROWS, COLS, P, STEPS, SEEDS = 90, 140, 0.45, 4, 200
EXTRA_SEEDS = [12345, (1 << 40) + 7, (1 << 64) - 1]
COMMAND = "scripts/numpy_crosscheck.py --out tests/fixtures/numpy_chapter"


def crc(grid):
    padded = np.zeros((grid.shape[0], (grid.shape[1] + 63) // 64 * 64), dtype=bool)
    padded[:, : grid.shape[1]] = grid != 0
    # Little-endian bit order within bytes + little-endian bytes = bit x%64 of u64 word x//64.
    return f"{zlib.crc32(np.packbits(padded, axis=1, bitorder='little').tobytes()):08x}"


def text(grid):
    return "".join("".join("#" if c else "." for c in row) + "\n" for row in grid)


def fixture():
    """The data files, name -> contents."""
    files = {}
    lines = ["seed,walls,crc32"]
    for seed in list(range(SEEDS)) + EXTRA_SEEDS:
        g = random_cave(rows=ROWS, cols=COLS, wall_probability=P, seed=seed)
        lines.append(f"{seed},{int(g.sum())},{crc(g)}")
    files["fills.csv"] = "\n".join(lines) + "\n"

    lines = ["rule,seed,walls,crc32,floor_fraction,connected_fraction"]
    for rule in ["strict", "classic"]:
        for seed in range(SEEDS):
            g = random_cave(rows=ROWS, cols=COLS, wall_probability=P, seed=seed)
            walls, crcs = [int(g.sum())], [crc(g)]
            if seed == 42 and rule == "strict":
                files["seed42_fill.txt"] = text(g)
            for _ in range(STEPS):
                g = cave_step(g, rule=rule)
                walls.append(int(g.sum()))
                crcs.append(crc(g))
            if seed == 42:
                files[f"seed42_{rule}.txt"] = text(g)
            floor_fraction, connected = evaluate_cave(g, spawn=SPAWN)
            lines.append(
                f"{rule},{seed},{' '.join(map(str, walls))},{' '.join(crcs)},"
                f"{floor_fraction!r},{connected!r}"
            )
    files["chapter.csv"] = "\n".join(lines) + "\n"
    return files


README = """# numpy fixture: the chapter's pipeline computed by real numpy

Made by

```sh
PY="$(scripts/numpy_venv.sh)"   # a venv under target/ with {spec} from PyPI
"$PY" {command}
```

with numpy {numpy} on Python {python}. Read by `tests/numpy_crosscheck.rs`, which recomputes
every row with cavesweep (fills, each of the 4 smoothing steps of both rules, the final
`evaluate_cave` fractions, `cavesweep reproduce chapter`'s numbers) and requires equality; a
missing or short file fails that test. `.ci/run` reruns the script with `--check`, so the files
are checked against live numpy too. What each file holds: see the docstring of
`scripts/numpy_crosscheck.py`. Do not edit by hand.
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--out", help="write the fixture into this folder")
    mode.add_argument("--check", help="recompute and compare with the fixture in this folder")
    a = ap.parse_args()
    files = fixture()
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        files["README.md"] = README.format(
            spec=os.environ.get("NUMPY_SPEC", f"numpy=={np.__version__}"),
            command=COMMAND,
            numpy=np.__version__,
            python=platform.python_version(),
        )
        for name, contents in files.items():
            with open(os.path.join(a.out, name), "w", newline="\n") as f:
                f.write(contents)
        print(f"wrote {len(files)} files to {a.out}")
        return 0
    bad = []
    for name, contents in files.items():
        path = os.path.join(a.check, name)
        try:
            with open(path, newline="") as f:
                committed = f.read()
        except FileNotFoundError:
            bad.append(f"{path}: missing")
            continue
        if committed != contents:
            old, new = committed.splitlines(), contents.splitlines()
            first = next(
                (i for i, (x, y) in enumerate(zip(old, new)) if x != y), min(len(old), len(new))
            )
            bad.append(f"{path}: differs from numpy {np.__version__} first at line {first + 1}")
    for b in bad:
        print(b, file=sys.stderr)
    if bad:
        return 1
    print(f"{a.check}: {len(files)} files equal to what numpy {np.__version__} computes now")
    return 0


if __name__ == "__main__":
    sys.exit(main())
