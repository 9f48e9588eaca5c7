#!/usr/bin/env python3
"""Reference fills from real numpy, for tests/numpy_crosscheck.rs.

For each seed, computes `np.random.default_rng(seed).random((rows, cols)) < p` and prints one CSV
row `seed,walls,crc32`, where crc32 is zlib's CRC-32 of the grid packed exactly like cavesweep's
bit-packed rows: each row padded with zero bits to a multiple of 64 columns, column x stored as
bit x % 64 of little-endian u64 word x // 64, rows concatenated top to bottom.

Installs numpy with `python3 -m pip install --quiet numpy` if it is missing.
"""

import argparse
import subprocess
import sys
import zlib


def ensure_numpy():
    try:
        import numpy  # noqa: F401
    except ImportError:
        subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", "numpy"])
    import numpy

    return numpy


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=200, help="seeds 0..COUNT-1 (default 200)")
    ap.add_argument(
        "--extra",
        type=str,
        default="12345,1099511627783,18446744073709551615",
        help="comma-separated extra seeds (default: 12345, 2^40+7, 2^64-1: multi-word seeds)",
    )
    ap.add_argument("--rows", type=int, default=90)
    ap.add_argument("--cols", type=int, default=140)
    ap.add_argument("--p", type=float, default=0.45)
    a = ap.parse_args()
    np = ensure_numpy()

    seeds = list(range(a.count)) + [int(s) for s in a.extra.split(",") if s.strip()]
    padded = (a.cols + 63) // 64 * 64
    out = sys.stdout
    out.write("seed,walls,crc32\n")
    for seed in seeds:
        walls = np.random.default_rng(seed).random((a.rows, a.cols)) < a.p
        grid = np.zeros((a.rows, padded), dtype=bool)
        grid[:, : a.cols] = walls
        # Little-endian bit order within bytes + little-endian bytes = bit x%64 of u64 word x//64.
        packed = np.packbits(grid, axis=1, bitorder="little")
        out.write(f"{seed},{int(walls.sum())},{zlib.crc32(packed.tobytes()):08x}\n")


if __name__ == "__main__":
    main()
