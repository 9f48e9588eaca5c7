#!/usr/bin/env bash
# Peers side by side (issue 6): the same cave work done by the chapter's numpy code, by mapgen,
# by our scalar oracle and by cavesweep, timed per core in one run, written to results/peers.md
# with the ratios to cavesweep and the issue's targets.
#
# Usage: scripts/peers.sh [SEEDS]     (SEEDS for the numpy runs, default 2000; env SEEDS too)
#
# Steps: (1) `cavesweep reproduce chapter` into a temporary folder; (2) the chapter's numpy
# pipeline (scripts/chapter_reference.py) for the strict and the classic rule, and a check that
# its final wall fractions (and connected fractions) for seeds 0..199 equal cavesweep's numpy
# replay to 6 decimals; (3) `cargo bench --bench peers` (mapgen, cavesweep, oracle; criterion's
# median time per seed is read from target/criterion/peers/*/new/estimates.json); (4) the report.
# Works from a fresh clone: cargo builds what it needs; numpy comes from PyPI into a venv under
# target/ (scripts/numpy_venv.sh).
# Exits non-zero if the cross-check fails (after writing the report, which says so).
set -euo pipefail
cd "$(dirname "$0")/.."

SEEDS="${1:-${SEEDS:-2000}}"
case "$SEEDS" in
'' | *[!0-9]*)
    echo "peers.sh: SEEDS must be a whole number, got '$SEEDS'" >&2
    exit 2
    ;;
esac
[ "$SEEDS" -ge 1 ] || { echo "peers.sh: SEEDS must be at least 1" >&2; exit 2; }
OUT=results/peers.md
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# numpy runs in a venv under target/ (scripts/numpy_venv.sh makes it; never the system Python).
PY="$(scripts/numpy_venv.sh)"

# numpy is timed without the machine's OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE overrides (they can
# slow numpy down); only these commands drop them. The script pins its thread pools to 1.
NUMPY_ENV=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE)

echo "== 1. cavesweep reproduce chapter (numpy RNG replay, seeds 0..199)" >&2
cargo build --release --quiet
REPRO_CMD="cargo run --release --quiet -- reproduce chapter --out $WORK/chapter"
$REPRO_CMD >/dev/null

echo "== 2. the chapter's numpy pipeline, $SEEDS seeds per rule" >&2
for rule in strict classic; do
    NUMPY_CMD="$PY scripts/chapter_reference.py --rule $rule --seeds $SEEDS --csv $WORK/numpy_$rule.csv"
    "${NUMPY_ENV[@]}" $NUMPY_CMD | tee "$WORK/numpy_$rule.txt" >&2
done

echo "== 3. cargo bench --bench peers" >&2
TARGET_DIR="$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
rm -rf "$TARGET_DIR/criterion/peers"
BENCH_CMD="cargo bench --bench peers"
$BENCH_CMD >"$WORK/bench.log" 2>&1 || { cat "$WORK/bench.log" >&2; exit 1; }

echo "== 4. writing $OUT" >&2
mkdir -p results
export WORK SEEDS OUT TARGET_DIR
export NUMPY_CMDS="env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE \"\$(scripts/numpy_venv.sh)\" scripts/chapter_reference.py --rule strict|classic --seeds $SEEDS --csv FILE"
export REPRO_CMD_SHOWN="cargo run --release -- reproduce chapter --out DIR"
export BENCH_CMD
export CPU_MODEL="$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -1)"
export CPU_COUNT="$(nproc)"
export RUSTC_VERSION="$(rustc --version)"
export NUMPY_VERSION="$("${NUMPY_ENV[@]}" "$PY" -c 'import numpy; print(numpy.__version__)')"
export PYTHON_VERSION="$("$PY" --version 2>&1)"
export GIT_REV="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo '+dirty')"
export RUN_DATE="$(date -u '+%Y-%m-%d %H:%M UTC')"
export LOADAVG="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
export MAPGEN_VERSION="$(sed -n '/^name = "mapgen"$/{n;s/^version = "\(.*\)"$/\1/p}' Cargo.lock)"

python3 - <<'PY'
import csv
import json
import os
import re
import sys

env = os.environ
work, target = env["WORK"], env["TARGET_DIR"]


def numpy_rates(rule):
    text = open(f"{work}/numpy_{rule}.txt").read()
    gen = float(re.search(r"^generate seeds_per_s: ([0-9.]+)", text, re.M).group(1))
    ev = float(re.search(r"^generate\+evaluate seeds_per_s: ([0-9.]+)", text, re.M).group(1))
    return gen, ev


def bench(name):
    """Median seconds per iteration (one seed / map) and its 95% interval, as rates/s."""
    path = f"{target}/criterion/peers/{name}/new/estimates.json"
    m = json.load(open(path))["median"]
    ns = m["point_estimate"]
    lo, hi = m["confidence_interval"]["lower_bound"], m["confidence_interval"]["upper_bound"]
    return {"rate": 1e9 / ns, "ns": ns, "lo": 1e9 / hi, "hi": 1e9 / lo}


# Cross-check: numpy's final wall fractions (and connected fractions) for seeds 0..199 vs
# cavesweep's bit-exact numpy replay, as 6-decimal strings.
ref = {}
with open(f"{work}/chapter/seeds.csv") as f:
    for r in csv.DictReader(f):
        ref[(r["preset"], int(r["seed"]))] = (r["final_wall_fraction"], r["chapter_connected_fraction"])
check = {}
check_ok = True
for rule, preset in [("strict", "chapter-strict"), ("classic", "classic-4-5")]:
    n = walls_eq = conn_eq = 0
    first_bad = None
    with open(f"{work}/numpy_{rule}.csv") as f:
        for r in csv.DictReader(f):
            seed = int(r["seed"])
            if seed >= 200:
                break
            w, c = ref[(preset, seed)]
            n += 1
            walls_eq += r["final_wall_fraction"] == w
            conn_eq += r["connected_fraction"] == c
            if first_bad is None and (r["final_wall_fraction"] != w or r["connected_fraction"] != c):
                first_bad = (seed, r["final_wall_fraction"], w, r["connected_fraction"], c)
    ok = n > 0 and walls_eq == n and conn_eq == n
    check_ok &= ok
    check[rule] = (preset, n, walls_eq, conn_eq, first_bad, ok)

np_strict_gen, np_strict_eval = numpy_rates("strict")
np_classic_gen, np_classic_eval = numpy_rates("classic")
names = [
    "mapgen_noise_ca_80x50",
    "mapgen_ca_only_80x50",
    "cavesweep_mapgen_rule_80x50",
    "cavesweep_strict_gen",
    "cavesweep_strict_eval",
    "cavesweep_strict_five",
    "cavesweep_strict_numpy_rng_eval",
    "cavesweep_classic_gen",
    "cavesweep_classic_eval",
    "oracle_strict_gen",
    "oracle_strict_five",
]
b = {n: bench(n) for n in names}


def fmt_rate(r):
    if r >= 100:
        return f"{r:,.0f}"
    return f"{r:,.1f}"


rows = []


def row(work_desc, peer_desc, peer_rate, cs_name, target=None, note=""):
    cs = b[cs_name]["rate"]
    ratio = cs / peer_rate
    if target is None:
        verdict = "(context)"
    else:
        verdict = f"{'**met**' if ratio >= target else '**not met**'} (target >= {target:,}x)"
        if ratio < target:
            # What cavesweep's time per seed would have to be to meet the target.
            need_us = 1e6 / (target * peer_rate)
            verdict += f"; needs <= {need_us:,.3g} us/seed, is {1e6 / cs:,.3g} us"
    rows.append(
        f"| {work_desc} | {peer_desc} | {fmt_rate(peer_rate)} | `{cs_name}` | {fmt_rate(cs)} "
        f"| **{ratio:,.0f}x** | {verdict} |" + (f" {note}" if note else "")
    )


row("chapter-strict 90x140: fill + 4 steps + `evaluate_cave` (floor, connected)",
    "numpy, the chapter's code", np_strict_eval, "cavesweep_strict_eval", 3000)
row("chapter-strict 90x140: fill + 4 steps (generation only)",
    "numpy, the chapter's code", np_strict_gen, "cavesweep_strict_gen", 3000)
row("chapter-strict: same, cavesweep with the five issue-6 metrics (more work than the chapter's two)",
    "numpy, the chapter's code (gen + evaluate)", np_strict_eval, "cavesweep_strict_five", 3000)
row("chapter-strict: fill + 4 steps + evaluate, bit-identical caves (cavesweep replays numpy's RNG)",
    "numpy, the chapter's code", np_strict_eval, "cavesweep_strict_numpy_rng_eval")
row("classic-4-5 90x140: fill + 4 steps + `evaluate_cave`",
    "numpy, chapter's code (`--rule classic`)", np_classic_eval, "cavesweep_classic_eval")
row("classic-4-5 90x140: fill + 4 steps (generation only)",
    "numpy, chapter's code (`--rule classic`)", np_classic_gen, "cavesweep_classic_gen")
row("mapgen's CA 80x50: noise (51% walls) + 15 x B05678/S05678 interior + wall count",
    f"mapgen {env['MAPGEN_VERSION']} `NoiseGenerator::uniform` + `CellularAutomata::new`",
    b["mapgen_noise_ca_80x50"]["rate"], "cavesweep_mapgen_rule_80x50", 100)
row("mapgen's CA alone (no noise) vs cavesweep's whole map (fill included)",
    f"mapgen {env['MAPGEN_VERSION']} `CellularAutomata` only",
    b["mapgen_ca_only_80x50"]["rate"], "cavesweep_mapgen_rule_80x50")
row("chapter-strict 90x140: fill + 4 steps", "scalar oracle (`ByteGrid`)",
    b["oracle_strict_gen"]["rate"], "cavesweep_strict_gen", 20)
row("chapter-strict 90x140: fill + 4 steps + five metrics", "scalar oracle + `oracle::metrics`",
    b["oracle_strict_five"]["rate"], "cavesweep_strict_five", 20)

raw = "\n".join(
    f"| `peers/{n}` | {b[n]['ns'] / 1000:,.2f} | {fmt_rate(b[n]['rate'])} | "
    f"{fmt_rate(b[n]['lo'])} - {fmt_rate(b[n]['hi'])} |"
    for n in names
)

checks = []
for rule, (preset, n, weq, ceq, bad, ok) in check.items():
    line = (f"- `--rule {rule}` vs `{preset}`: seeds 0..{n - 1}: final wall fraction equal to 6 "
            f"decimals for {weq}/{n} seeds, connected fraction for {ceq}/{n}: "
            f"**{'PASS' if ok else 'FAIL'}**")
    if bad:
        line += f" (first difference: seed {bad[0]}: numpy {bad[1]}/{bad[3]}, cavesweep {bad[2]}/{bad[4]})"
    checks.append(line)

md = f"""# Peers side by side

Generated by `scripts/peers.sh` (issue 6): the same cave work done by each peer and by cavesweep,
in one run on one machine, **per core** (every rate below is one thread: the numpy script pins its
thread pools to 1, criterion benches run single-threaded). Ratio = cavesweep's rate / the peer's
rate on the same work. Do not edit by hand: rerun the script.

- date: {env['RUN_DATE']}; cavesweep commit {env['GIT_REV']}
- machine: {env['CPU_MODEL']}, {env['CPU_COUNT']} cores (load average at the end of the run:
  {env['LOADAVG']})
- {env['RUSTC_VERSION']} (`-C target-cpu=native`, release profile); {env['PYTHON_VERSION']}, numpy
  {env['NUMPY_VERSION']}; mapgen {env['MAPGEN_VERSION']}
- numpy runs: seeds 0..{int(env['SEEDS']) - 1} per rule; criterion: median time per seed / map
  (one fresh seed per iteration), 20 samples of ~2 s

## Rates and ratios

| work | peer | peer /s | cavesweep bench | cavesweep /s | cavesweep / peer | issue target |
|---|---|---:|---|---:|---:|---|
{chr(10).join(rows)}

Rows marked "(context)" have no issue target; they show where the ratio comes from.
Where cavesweep's chapter-strict time goes (medians, one thread): generation (fill + 4 steps)
{b['cavesweep_strict_gen']['ns'] / 1000:.2f} us; with the chapter's two metrics
{b['cavesweep_strict_eval']['ns'] / 1000:.2f} us; with the five {b['cavesweep_strict_five']['ns'] / 1000:.2f} us
per seed. The numpy pipeline spends {100 * (1 - np_strict_eval / np_strict_gen):.0f}% of its time
in `evaluate_cave`'s pure-Python BFS, so its generation-only rate is the harder peer.

## Cross-check: the numpy peer computes the caves cavesweep reproduces

`scripts/chapter_reference.py --csv` against `{env['REPRO_CMD_SHOWN']}`'s `seeds.csv`
(cavesweep replays `np.random.default_rng(seed)` bit for bit; the connected fraction there uses
the chapter's own `reachable_floor` semantics):

{chr(10).join(checks)}

## What exactly is compared

- **numpy** (`scripts/chapter_reference.py`): the chapter's `random_cave`, `shift_fixed` (no wrap,
  missing neighbours 0), `wall_count`, `cave_step` (count >= 5, then `solid_border`),
  `build_cave(seed, steps=4)`, `reachable_floor` (Python BFS over a `deque`) and `evaluate_cave`
  with spawn (45, 70), transcribed as written. "generation only" times `build_cave`; the other
  rate times `build_cave` + `evaluate_cave`. `--rule classic` adds the centre to the count
  (3x3 incl. centre >= 5). cavesweep's `cavesweep_strict_*` rows use the preset `chapter-strict`
  (90x140, p = 0.45, 4 x B5678/S5678, outside FLOOR, solid border) with its default xoshiro fill:
  statistically the same caves, not the same random numbers. The `numpy_rng` row replays numpy's
  generator and so builds exactly the caves the Python code builds (checked above); its fill is a
  sequential 128-bit PCG per cell, which is why it is slower than the default.
  `cavesweep_*_eval` measures `floor_fraction,connected_fraction` (the chapter's two) and `_five`
  adds `components,largest_fraction,boundary`; `_gen` measures nothing (the per-step wall
  fractions of the trajectory are still counted). One semantic difference: the chapter's
  `reachable_floor` floods from the spawn even when the spawn is WALL; cavesweep reports 0 for a
  WALL spawn (the work done is at most one flood fill either way).
- **mapgen** (`mapgen::filter::{{NoiseGenerator, CellularAutomata}}` 0.6, driven as its docs do:
  an 80 x 50 `MapBuffer`, `NoiseGenerator::uniform()`, `CellularAutomata::new()`, rand 0.8's
  `StdRng::seed_from_u64(seed)`), plus counting the blocked cells so it ends with what cavesweep
  ends with (map + wall fraction). cavesweep's `cavesweep_mapgen_rule_80x50` is the recipe
  rows = 50, cols = 80, fill 0.51, one pass `B05678/S05678` x 15, sync, `border = solid`,
  measuring `wall_fraction`, run through `Generator`. Semantic differences:
  - *Rule*: mapgen makes a cell walkable iff 1..4 of its 8 neighbours are blocked, whatever the
    cell was: WALL iff n = 0 or n >= 5, i.e. B05678/S05678. Identical.
  - *Outer ring*: mapgen never fills or updates the outer ring (it stays blocked from
    `MapBuffer::new`), and interior cells read it as blocked from the first iteration on.
    cavesweep fills the whole grid, ring included, steps every cell and then forces the ring to
    WALL (`border = solid`). So from step 2 on both see a walled ring; in step 1 the cells next to
    the ring see a random ring in cavesweep and a walled one in mapgen. The bench asserts, before
    timing, that on the same solid-bordered input cavesweep's 15 steps equal mapgen's
    `CellularAutomata` cell for cell (4 seeds).
  - *Fill*: mapgen draws `next_u32() % 100` per interior cell and blocks it iff the roll is
    `<= 50`: probability 51/100 (modulo bias < 1e-8); cavesweep fills with p = 0.51 exactly, 64
    cells per random word. Different generators (ChaCha12 vs xoshiro256++), same distribution.
  - *Cost model*: mapgen clones the whole `MapBuffer` (walkable `Vec<bool>` and a `Vec<usize>` of
    tile types) every iteration and tests 8 neighbours per cell with bounds checks; that is its
    design, not a misuse.
- **scalar oracle**: the same bit-grid fill as cavesweep (`fill_bernoulli` from `cave_rng(seed)`),
  copied into `cavesweep::oracle::ByteGrid`, 4 `ByteGrid::step`s (wall count after each, like the
  trajectory) and, for `_five`, `cavesweep::oracle::metrics::measure` (plain BFS labelling and
  brute-force loops). The bench asserts the oracle's grid and metric values equal `Generator`'s
  before timing.

The machine is shared (2 cores, other jobs running): treat single numbers as +-20%; the lead's
rerun on a quiet machine replaces this file.

## Criterion estimates (median time per seed / map)

| bench | median us | /s | 95% interval of /s |
|---|---:|---:|---|
{raw}

## Commands

```sh
scripts/peers.sh {env['SEEDS']}
# which runs:
{env['REPRO_CMD_SHOWN']}
{env['NUMPY_CMDS']}
{env['BENCH_CMD']}   # medians from target/criterion/peers/*/new/estimates.json
```
"""
open(env["OUT"], "w").write(md)
print(md)
sys.exit(0 if check_ok else 1)
PY
