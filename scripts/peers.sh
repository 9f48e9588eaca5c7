#!/usr/bin/env bash
# Peers side by side (issues 6 and 38): the same work done by the chapter's numpy code, by
# mapgen, by our scalar oracle, by Golly and by OpenCV and scipy's labelling, and by cavesweep,
# timed per core in one run, written to results/peers.md with the ratios to cavesweep and the
# issues' targets.
#
# Usage: scripts/peers.sh [--only SECTIONS] [SEEDS]
#   SEEDS: seeds for the numpy runs and caves for the labelling peers (default 2000; env SEEDS).
#   --only (or env PEERS_ONLY): a comma list of sections, the default being all of them:
#     base    the chapter's numpy pipeline, mapgen and the oracle against cavesweep's criterion
#             benches (steps 1-3 below; the slow part: the benches take several minutes)
#     golly   bgolly against `cavesweep run` on a Life torus (step 4, ~10 s)
#     labels  OpenCV and scipy labelling against cavesweep.measure (step 5, ~5 s after the
#             first build of the Python package)
#   A run of only some sections writes its report to target/peers-only.md, never over the
#   full results/peers.md; env PEERS_OUT names another file (either way).
#
# Steps: (1) `cavesweep reproduce chapter` into a temporary folder; (2) the chapter's numpy
# pipeline (scripts/chapter_reference.py) for the strict and the classic rule, and a check that
# its final wall fractions (and connected fractions) for seeds 0..199 equal cavesweep's numpy
# replay to 6 decimals; (3) `cargo bench --bench peers` (mapgen, cavesweep, oracle; criterion's
# median time per seed is read from target/criterion/peers/*/new/estimates.json); (4) Golly's
# bgolly and `cavesweep run`, B3/S23 on a 1024x1024 torus for 1,000 generations from the same
# soup, each a whole process, and a check that the final grids are identical
# (scripts/peers_golly.py); (5) `cv2.connectedComponents`, `scipy.ndimage.label` and
# `cavesweep.measure` counting the FLOOR components of the same SEEDS classic-4-5 caves, and a
# check that the counts are equal for every cave (scripts/peers_labels.py); (6) the report.
# Works from a fresh clone: cargo builds what it needs; numpy comes from PyPI into a venv under
# target/ (scripts/numpy_venv.sh), OpenCV, scipy and the cavesweep package into another
# (scripts/peers_venv.sh, versions pinned in python/requirements-peers.txt). bgolly is Debian's
# `golly` package (.ci/run installs it); the golly section stops with that advice without it.
# Exits non-zero if a cross-check fails (after writing the report, which says so).
set -euo pipefail
cd "$(dirname "$0")/.."

ALL_SECTIONS=base,golly,labels
ONLY="${PEERS_ONLY:-}"
SEEDS_ARG=""
while [ $# -gt 0 ]; do
    case "$1" in
    --only)
        [ $# -ge 2 ] || { echo "peers.sh: --only needs a list, e.g. --only golly,labels" >&2; exit 2; }
        ONLY="$2"
        shift 2
        ;;
    --only=*) ONLY="${1#--only=}"; shift ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    -*) echo "peers.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) [ -z "$SEEDS_ARG" ] || { echo "peers.sh: one SEEDS only" >&2; exit 2; }; SEEDS_ARG="$1"; shift ;;
    esac
done
SECTIONS="${ONLY:-$ALL_SECTIONS}"
IFS=, read -r -a WANTED <<<"$SECTIONS"
[ "${#WANTED[@]}" -gt 0 ] || { echo "peers.sh: --only names no section" >&2; exit 2; }
for s in "${WANTED[@]}"; do
    case ",$ALL_SECTIONS," in
    *",$s,"*) ;;
    *) echo "peers.sh: unknown section '$s' (sections: $ALL_SECTIONS)" >&2; exit 2 ;;
    esac
done
want() { case ",$SECTIONS," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

SEEDS="${SEEDS_ARG:-${SEEDS:-2000}}"
case "$SEEDS" in
'' | *[!0-9]*)
    echo "peers.sh: SEEDS must be a whole number, got '$SEEDS'" >&2
    exit 2
    ;;
esac
[ "$SEEDS" -ge 1 ] || { echo "peers.sh: SEEDS must be at least 1" >&2; exit 2; }
TARGET_DIR="$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
if want base && want golly && want labels; then
    OUT="${PEERS_OUT:-results/peers.md}"
else
    # A partial run must not replace the full report: its rows would be missing.
    OUT="${PEERS_OUT:-$TARGET_DIR/peers-only.md}"
fi
if want golly && ! command -v bgolly >/dev/null 2>&1; then
    echo "peers.sh: bgolly not found: install Debian's golly package (apt-get install golly, as" \
        ".ci/run does), or leave the golly section out (--only base,labels)" >&2
    exit 2
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# numpy runs in a venv under target/ (scripts/numpy_venv.sh makes it; never the system Python).
PY="$(scripts/numpy_venv.sh)"

NUMPY_ENV=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE)

cargo build --release --quiet
BIN="$TARGET_DIR/release/cavesweep"

if want base; then
    echo "== 1. cavesweep reproduce chapter (numpy RNG replay, seeds 0..199)" >&2
    REPRO_CMD="cargo run --release --quiet -- reproduce chapter --out $WORK/chapter"
    $REPRO_CMD >/dev/null

    echo "== 2. the chapter's numpy pipeline, $SEEDS seeds per rule" >&2
    for rule in strict classic; do
        NUMPY_CMD="$PY scripts/chapter_reference.py --rule $rule --seeds $SEEDS --csv $WORK/numpy_$rule.csv"
        "${NUMPY_ENV[@]}" $NUMPY_CMD | tee "$WORK/numpy_$rule.txt" >&2
    done

    echo "== 3. cargo bench --bench peers" >&2
    rm -rf "$TARGET_DIR/criterion/peers"
    BENCH_CMD="cargo bench --bench peers"
    $BENCH_CMD >"$WORK/bench.log" 2>&1 || { cat "$WORK/bench.log" >&2; exit 1; }
    export BENCH_CMD
fi

# Exit status 3 of the two scripts below is a failed cross-check: they have written their JSON,
# which says so, and the report (step 6) records FAIL and makes this script fail. Any other
# failure stops here.
run_checked() {
    local rc=0
    "$@" || rc=$?
    [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || exit "$rc"
}

if want golly; then
    # Whole processes, each reading the start grid from a file and writing its final grid; the
    # script also runs both for 1 generation, so the report can take start-up and I/O out.
    echo "== 4. Golly (bgolly, QuickLife) and cavesweep run: B3/S23, 1024x1024 torus, 1000 generations" >&2
    run_checked "$PY" scripts/peers_golly.py --bgolly bgolly --cavesweep "$BIN" \
        --work "$WORK/golly" --json "$WORK/golly.json"
    GOLLY_VERSION="$(dpkg-query -W -f '${Version}' golly 2>/dev/null ||
        bgolly --help 2>/dev/null | head -1)"
    export GOLLY_VERSION
fi

if want labels; then
    # OpenCV, scipy and the cavesweep package (built from this checkout) share one venv, so the
    # three label the very same numpy arrays in one process.
    echo "== 5. labelling $SEEDS classic-4-5 caves: OpenCV, scipy, cavesweep.measure" >&2
    LABELS_PY="$(scripts/peers_venv.sh)"
    run_checked "$LABELS_PY" scripts/peers_labels.py --seeds "$SEEDS" --json "$WORK/labels.json"
    LABELS_PYTHON_VERSION="$("$LABELS_PY" --version 2>&1)"
    export LABELS_PYTHON_VERSION
fi

echo "== 6. writing $OUT" >&2
mkdir -p "$(dirname "$OUT")"
export WORK SEEDS OUT TARGET_DIR SECTIONS BIN
export RUSTFLAGS_SHOWN="${RUSTFLAGS:-}"
# shellcheck disable=SC2016 # shown in the report as a command to type, not run here
export GOLLY_PY_SHOWN='"$(scripts/numpy_venv.sh)"'
export NUMPY_CMDS="env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE \"\$(scripts/numpy_venv.sh)\" scripts/chapter_reference.py --rule strict|classic --seeds $SEEDS --csv FILE"
export REPRO_CMD_SHOWN="cargo run --release -- reproduce chapter --out DIR"
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
sections = env["SECTIONS"].split(",")
check_ok = True


def fmt_rate(r):
    if r >= 100:
        return f"{r:,.0f}"
    return f"{r:,.1f}"


def fmt_sci(r):
    """Cell updates per second, as 1.10e9."""
    m, e = f"{r:.2e}".split("e")
    return f"{m}e{int(e)}"


def fmt_ratio(x):
    return f"{x:,.0f}x" if x >= 100 else f"{x:,.1f}x"


rows = []


def ratio_row(work_desc, peer_desc, peer_rate, cs_desc, cs_rate, target=None, note="", fmt=fmt_rate):
    ratio = cs_rate / peer_rate
    if target is None:
        verdict = "(context)"
    else:
        verdict = f"{'**met**' if ratio >= target else '**not met**'} (target >= {target:,}x)"
        if ratio < target:
            # What cavesweep's time per seed would have to be to meet the target.
            need_us = 1e6 / (target * peer_rate)
            verdict += f"; needs <= {need_us:,.3g} us/seed, is {1e6 / cs_rate:,.3g} us"
    rows.append(
        f"| {work_desc} | {peer_desc} | {fmt(peer_rate)} | {cs_desc} | {fmt(cs_rate)} "
        f"| **{fmt_ratio(ratio)}** | {verdict} |" + (f" {note}" if note else "")
    )


header = []      # bullets under the title
after_table = []  # sections after the table, in order
compared = []    # bullets of "What exactly is compared"
commands = []    # lines of the Commands block

# ---------------------------------------------------------------- base: numpy, mapgen, oracle
if "base" in sections:

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

    def row(work_desc, peer_desc, peer_rate, cs_name, target=None, note=""):
        ratio_row(work_desc, peer_desc, peer_rate, f"`{cs_name}`", b[cs_name]["rate"], target, note)

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

    header.append(f"numpy {env['NUMPY_VERSION']}; mapgen {env['MAPGEN_VERSION']}")
    header.append(f"numpy runs: seeds 0..{int(env['SEEDS']) - 1} per rule; criterion: median time per seed / map\n"
                  "  (one fresh seed per iteration), 20 samples of ~2 s")
    after_table.append(f"""Where cavesweep's chapter-strict time goes (medians, one thread): generation (fill + 4 steps)
{b['cavesweep_strict_gen']['ns'] / 1000:.2f} us; with the chapter's two metrics
{b['cavesweep_strict_eval']['ns'] / 1000:.2f} us; with the five {b['cavesweep_strict_five']['ns'] / 1000:.2f} us
per seed. The numpy pipeline spends {100 * (1 - np_strict_eval / np_strict_gen):.0f}% of its time
in `evaluate_cave`'s pure-Python BFS, so its generation-only rate is the harder peer.

## Cross-check: the numpy peer computes the caves cavesweep reproduces

`scripts/chapter_reference.py --csv` against `{env['REPRO_CMD_SHOWN']}`'s `seeds.csv`
(cavesweep replays `np.random.default_rng(seed)` bit for bit; the connected fraction there uses
the chapter's own `reachable_floor` semantics):

{chr(10).join(checks)}""")
    compared.append("""- **numpy** (`scripts/chapter_reference.py`): the chapter's `random_cave`, `shift_fixed` (no wrap,
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
- **mapgen** (`mapgen::filter::{NoiseGenerator, CellularAutomata}` 0.6, driven as its docs do:
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
  before timing.""")
    commands += [env["REPRO_CMD_SHOWN"], env["NUMPY_CMDS"],
                 f"{env['BENCH_CMD']}   # medians from target/criterion/peers/*/new/estimates.json"]

# ---------------------------------------------------------------- golly: bgolly vs cavesweep run
if "golly" in sections:
    g = json.load(open(f"{work}/golly.json"))
    check_ok &= g["identical"]
    side, gens = g["side"], g["gens"]
    gv = env.get("GOLLY_VERSION", "")
    golly_peer = f"Golly {gv} `bgolly`, QuickLife"
    header.append(f"Golly: `bgolly` of Debian's `golly` {gv}")
    ratio_row(f"Life B3/S23, {side}x{side} torus, {gens:,} generations from one 50% soup, whole "
              "process (read the grid, step, write it): cell updates/s",
              golly_peer, g["golly"]["updates_per_s"], "`cavesweep run` (whole process)",
              g["cavesweep"]["updates_per_s"], fmt=fmt_sci)
    if g["golly"]["net_updates_per_s"] and g["cavesweep"]["net_updates_per_s"]:
        ratio_row(f"the same, start-up and file I/O taken out: ({gens:,} - 1 generations) / "
                  f"(time of {gens:,} - time of 1)", golly_peer, g["golly"]["net_updates_per_s"],
                  "`cavesweep run`, stepping alone", g["cavesweep"]["net_updates_per_s"], fmt=fmt_sci)

    def gline(name, k):
        t, t1 = g[k], g[k + "_1"]
        net = fmt_sci(t["net_updates_per_s"]) if t["net_updates_per_s"] else "(within noise)"
        return (f"| {name} | {t['wall_s']:.4f} ({t['n']} runs, min {t['min_wall_s']:.4f}) | {t['cpu_s']:.4f} "
                f"| {fmt_sci(t['updates_per_s'])} | {t1['wall_s']:.4f} | {net} |")

    gchecks = "\n".join(
        f"- after {k} generation{'s' if k != '1' else ''}: {c['how']}: "
        f"**{'PASS, identical' if c['identical'] else 'FAIL, different'}** (live cells: Golly "
        f"{c['golly_live']:,}, cavesweep {c['cavesweep_live']:,}; Golly's RLE box "
        f"{c['golly_box'][0]}x{c['golly_box'][1]})"
        for k, c in g["checks"].items())
    golly_shown = g["golly_cmd"].replace(work + "/golly/", "")
    cs_shown = g["cavesweep_cmd"].replace(work + "/golly/", "").replace(
        env["BIN"], "cavesweep", 1)
    after_table.append(f"""## Golly: Life on a {side}x{side} torus, {gens:,} generations

Both programs as whole processes, each reading the same start grid from a file and writing its
final grid to a file, timed from spawn to exit (wall time, median of the runs, interleaved in
{g['rounds']} rounds); CPU time (user + sys) from `wait4`, which shows each runs on one thread (a
wall time well above the CPU time means the process waited for a core: the machine is shared).
The 1-generation runs are the same commands with `-m 1` / `steps=1`: start-up, parsing the start
grid, writing the result. Start grid: `np.random.default_rng({g['seed']}).random(({side}, {side})) < {g['fill']}`
({g['start_live']:,} live cells), written as `start.npy` and as RLE (`start.rle`).

| program | wall s, {gens:,} generations | CPU s | cell updates/s | wall s, 1 generation | net cell updates/s |
|---|---:|---:|---:|---:|---:|
{gline(golly_peer, 'golly')}
{gline('cavesweep', 'cavesweep')}

The commands, in the work folder (`cavesweep` is `target/release/cavesweep`):

```sh
{golly_shown}
{cs_shown}
```

Ratio cavesweep / Golly: **{fmt_ratio(g['golly']['wall_s'] / g['cavesweep']['wall_s'])}** for the whole
process{f", **{fmt_ratio(g['cavesweep']['net_updates_per_s'] / g['golly']['net_updates_per_s'])}** for the stepping alone" if g['golly']['net_updates_per_s'] and g['cavesweep']['net_updates_per_s'] else ""}.
cavesweep's whole process is mostly start-up and file I/O at this size: its {gens:,} generations
take {1000 * g['cavesweep']['net_s']:.1f} ms of its {1000 * g['cavesweep']['wall_s']:.1f} ms.

Check: Golly's final RLE, parsed by `scripts/peers_golly.py`, against cavesweep's final `.npy`:

{gchecks}""")
    compared.append(f"""- **Golly** (`bgolly` {gv}, Debian's `golly` package, its default QuickLife algorithm, `-q -q`
  so it prints no population per generation): the rule `{g['torus_rule']}` is Life on Golly's
  bounded torus {side} wide and {side} tall, read from an RLE file whose `#CXRLE Pos=-{side // 2},-{side // 2}`
  puts the pattern exactly on that grid (as tests/golly.rs writes it). cavesweep runs the same
  grid (WALL = 1 = live) with `--from start.npy`: the preset `classic-4-5` is only the base that
  the `--set`s override (size {side}x{side}, one pass of B3/S23, `outside = wrap`, i.e. the torus,
  `border = none`, so no solid ring is forced, `update = sync` as Golly's generations are; B3/S23
  has no B0, so neither program emulates it). Differences in the work: cavesweep prints its
  trajectory ({gens:,} wall fractions, a popcount per step) and measures `wall_fraction`; Golly
  writes RLE (a {side}x{side} box, as the soup leaves live cells across the whole torus), cavesweep
  a 1 MiB `.npy`. Golly's Help (Bounded Grids) says generation in a bounded grid is slower than
  in an unbounded one, its algorithms being made for unbounded grids: that extra work is part of
  doing this work (an unbounded Golly run would compute another pattern). HashLife (`bgolly -h`)
  is not timed: QuickLife, bgolly's default, is the faster of the two on this grid.""")
    commands += [f"{env['GOLLY_PY_SHOWN']} scripts/peers_golly.py --bgolly bgolly --cavesweep "
                 "target/release/cavesweep --work DIR --json FILE   # runs these two, in DIR:",
                 golly_shown, cs_shown]

# ---------------------------------------------------------------- labels: OpenCV, scipy
if "labels" in sections:
    L = json.load(open(f"{work}/labels.json"))
    check_ok &= L["identical"]
    v = L["versions"]
    n, shape = L["seeds"], f"{L['rows']}x{L['cols']}"
    header.append(f"labelling: opencv-python-headless {v['opencv']}, scipy {v['scipy']}, numpy {v['numpy']} "
                  f"({env.get('LABELS_PYTHON_VERSION', 'Python')}, target/peers-venv); caves: seeds 0..{n - 1}")
    work_desc = (f"count the FLOOR components (4-connectivity) of {n:,} classic-4-5 {shape} caves, "
                 "one call per cave from Python: caves/s")
    ratio_row(work_desc, f"OpenCV {v['opencv']} `cv2.connectedComponents`, 1 thread",
              L["opencv"]["caves_per_s"], "`cavesweep.measure(..., metrics=\"components\")`",
              L["cavesweep"]["caves_per_s"])
    ratio_row("the same", f"scipy {v['scipy']} `scipy.ndimage.label`", L["scipy"]["caves_per_s"],
              "`cavesweep.measure(..., metrics=\"components\")`", L["cavesweep"]["caves_per_s"])

    def lline(name, k, call):
        r = L[k]
        ratio = "1x" if k == "cavesweep" else fmt_ratio(r["ns_per_cell"] / L["cavesweep"]["ns_per_cell"])
        return (f"| {name} | `{call}` | {r['ns_per_cell']:.3f} (min {r['min_ns_per_cell']:.3f}) "
                f"| {r['us_per_cave']:.2f} | {fmt_rate(r['caves_per_s'])} | {ratio} |")

    lchecks = "\n".join(
        f"- {k} vs cavesweep: component counts equal for {n - m['caves']:,}/{n:,} caves: "
        f"**{'PASS' if m['caves'] == 0 else 'FAIL'}**"
        + (f" (first difference: seed {m['first']['seed']}: {k} {m['first'][k]}, cavesweep "
           f"{m['first']['cavesweep']})" if m["caves"] else "")
        for k, m in L["mismatches"].items())
    after_table.append(f"""## Labelling: OpenCV and scipy on the same caves

The FLOOR components (4-connected) of the classic-4-5 caves of seeds 0..{n - 1} ({shape}; made by
`cavesweep.generate_many`, the caves `cavesweep run --preset classic-4-5 --seed S` makes; {L['components_mean']:.2f}
components per cave on average, {L['components_min']} to {L['components_max']}), one Python call per
cave, the three in one process ({env.get('LABELS_PYTHON_VERSION', 'Python')}, numpy {v['numpy']}) on the same
numpy arrays, in {L['rounds']} interleaved rounds; medians.

| labeller | call, per cave | ns per cell | us per cave | caves/s | time / cavesweep's |
|---|---|---:|---:|---:|---:|
{lline(f"OpenCV {v['opencv']} (opencv-python-headless), `cv2.setNumThreads(1)`", 'opencv', 'cv2.connectedComponents(floor, connectivity=4)')}
{lline(f"scipy {v['scipy']}", 'scipy', 'scipy.ndimage.label(floor, structure=generate_binary_structure(2, 1))')}
{lline("cavesweep (Python package, this checkout)", 'cavesweep', 'cavesweep.measure(cave, metrics="components", connectivity=4)')}

Check (`scripts/peers_labels.py`, an untimed first pass):

{lchecks}""")
    compared.append("""- **OpenCV and scipy** (from PyPI, versions pinned in python/requirements-peers.txt, in the venv
  of scripts/peers_venv.sh with this checkout's cavesweep package): both label non-zero pixels,
  so they get `floor = (cave == 0).astype(np.uint8)`, made before the timing and not timed (it
  favours them); components = OpenCV's label count - 1 (label 0 is the background), scipy's
  count as returned. cavesweep labels the 0s of the cave itself (WALL = 1), and its time
  includes the whole Python call: argument checks, packing the uint8 array into bits, the dict
  it returns. Each OpenCV and scipy call also allocates and fills an int32 label image, which is
  their interface; cavesweep returns only the count.""")
    commands.append(f"\"$(scripts/peers_venv.sh)\" scripts/peers_labels.py --seeds {n} --json FILE")

# ---------------------------------------------------------------- the report
if "base" in sections:
    tail = f"""
## Criterion estimates (median time per seed / map)

| bench | median us | /s | 95% interval of /s |
|---|---:|---:|---|
{raw}
"""
else:
    tail = ""
only = "" if set(sections) >= {"base", "golly", "labels"} else (
    f"\n**Partial run** (`--only {','.join(sections)}`): the other sections' rows are not here.\n")
bullets = "\n".join(f"- {h}" for h in header)
# .cargo/config.toml sets no target-cpu: a plain build picks its SIMD path at run time.
rustflags = (f"`RUSTFLAGS={env['RUSTFLAGS_SHOWN']}`" if env.get("RUSTFLAGS_SHOWN")
             else "portable build (no RUSTFLAGS; the SIMD path picked at run time)")
md = f"""# Peers side by side

Generated by `scripts/peers.sh` (issues 6 and 38): the same work done by each peer and by
cavesweep, in one run on one machine, **per core** (every rate below is one thread: the numpy
script pins its thread pools to 1, criterion benches run single-threaded, bgolly and `cavesweep
run` are single-threaded processes, OpenCV is set to one thread). Ratio = cavesweep's rate / the
peer's rate on the same work. Do not edit by hand: rerun the script.
{only}
- date: {env['RUN_DATE']}; cavesweep commit {env['GIT_REV']}
- machine: {env['CPU_MODEL']}, {env['CPU_COUNT']} cores (load average at the end of the run:
  {env['LOADAVG']})
- {env['RUSTC_VERSION']}, release profile, {rustflags}; {env['PYTHON_VERSION']}
{bullets}

## Rates and ratios

| work | peer | peer /s | cavesweep | cavesweep /s | cavesweep / peer | issue target |
|---|---|---:|---|---:|---:|---|
{chr(10).join(rows)}

Rows marked "(context)" have no issue target; they show where the ratio comes from.

{(chr(10) * 2).join(after_table)}

## What exactly is compared

{chr(10).join(compared)}

The machine is shared (2 cores, other jobs running): treat single numbers as +-20%; the lead's
rerun on a quiet machine replaces this file.
{tail}
## Commands

```sh
scripts/peers.sh {'' if not only else '--only ' + ','.join(sections) + ' '}{env['SEEDS']}
# which runs:
{chr(10).join(commands)}
```
"""
open(env["OUT"], "w").write(md)
print(md)
sys.exit(0 if check_ok else 1)
PY
