#!/usr/bin/env bash
# Regenerate everything in results/ from a fresh clone (target: < 15 minutes on 2 cores).
#
#   scripts/make_results.sh
#
# Stages (each timed):
#   build     cargo build --release
#   chapter   cavesweep reproduce chapter               -> results/chapter/
#   variants  one 10,000-seed sweep per preset + cavesweep report -> results/variants/
#   report    a 1,025-point fill x steps sweep + cavesweep report (timed) -> results/grid/
#   gallery   a typical cave per preset + the chapter's seed 42 (numpy RNG) -> results/gallery/
#   export    a cave saved as a Tiled map, drawn by Tiled's tmxrasterizer -> results/export/
#   kernels   cargo bench --bench kernels --bench inplace -> results/kernels.md (SKIP_BENCH=1 skips;
#             KERNELS_OUT=FILE writes FILE instead, e.g. results/kernels-avx2.md from a machine
#             without AVX-512, which cannot run the AVX-512 rows of results/kernels.md)
#   bench     cavesweep bench --seconds 3                -> results/bench/      (SKIP_BENCH=1 skips;
#             BENCH_SECONDS=S changes the 3, e.g. for a quick smoke test)
#   gridbench scripts/grid_results.sh (sweeps of 1,025 and 100,000-point grids) -> results/bench/grid.md
#   search    cavesweep bench --search --repeats 3 + one search --explain -> results/bench/search.md
#             (SKIP_BENCH=1 skips)
#   native    NATIVE=1 only (a second full build, -C target-cpu=native): the portable binary
#             against a native one, side by side   -> results/bench/native_vs_portable.md
#   peers     scripts/peers.sh, if present              -> results/peers.md    (SKIP_PEERS=1 skips)
#   python    pip install ./python into $RESULTS_WORK/python-venv, then
#             python/benches/bench_generate.py          -> results/python.md   (SKIP_PYTHON=1 skips)
#             python/examples/walkthrough.py            -> python/images/
#   index     results/README.md
#
# ONLY="bench gridbench index" runs just those stages (the others' files stay as they were, each
# with its own provenance line).
#
# Bulky intermediates (per-seed seeds.csv, sweep checkpoints) go to $RESULTS_WORK
# (default target/results-work), which git ignores.
set -euo pipefail
cd "$(dirname "$0")/.."

WORK="${RESULTS_WORK:-target/results-work}"
BIN="${CARGO_TARGET_DIR:-target}/release/cavesweep"
SEEDS="0..10000"
CMD="${ONLY:+ONLY=\"$ONLY\" }${KERNELS_OUT:+KERNELS_OUT=$KERNELS_OUT }scripts/make_results.sh"
DATE="$(date -u '+%Y-%m-%d %H:%M UTC')"
MODEL="$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)"
MACHINE="${MODEL:-unknown CPU}, $(nproc) cores (nproc)"
# KERNELS_OUT is checked before minutes of benches, not when the report is written at the end.
if [ -n "${KERNELS_OUT:-}" ] && ! { [ -d "$(dirname -- "$KERNELS_OUT")" ] && [ -w "$(dirname -- "$KERNELS_OUT")" ]; }; then
  echo "make_results: KERNELS_OUT=$KERNELS_OUT: its folder does not exist or is not writable" >&2
  exit 2
fi
# The provenance line every generated markdown file carries.
PROV="Made by \`$CMD\` on $DATE, machine: $MACHINE."

TIMINGS=()
T_ALL=$(date +%s.%N)
stage() { # stage NAME FUNCTION: run FUNCTION, print and record its wall time
  local name=$1 t0 t1 dt
  shift
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then
    echo "== [$name] skipped (ONLY=$ONLY)" >&2
    return
  fi
  echo "== [$name] start" >&2
  t0=$(date +%s.%N)
  "$@"
  t1=$(date +%s.%N)
  dt=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  echo "== [$name] done in ${dt} s" >&2
  TIMINGS+=("$(printf '%-9s %7s s' "$name" "$dt")")
}

do_build() {
  cargo build --release
}

do_chapter() {
  mkdir -p results/chapter
  "$BIN" reproduce chapter --out results/chapter --force
  # report.md is the engine's byte-stable output; the provenance goes beside it.
  cat >results/chapter/README.md <<EOF
# The chapter reproduced

$PROV

Command: \`cavesweep reproduce chapter --out results/chapter --force\` (seeds 0..199, numpy's
\`default_rng\` replayed bit for bit). Files: [report.md](report.md) (the chapter's claims beside
our measurements), \`trajectory.csv\` (wall fraction per step), \`seeds.csv\` (per seed), and
[audit.md](audit.md) / \`audit.html\` (every checkable claim of the excerpt audited: evidence
measured by this run, the command that measures it, a verdict, a proposed response; pictures
\`audit-*.png\` beside it).
EOF
}

# The gates of results/variants: name|expression|meaning. Each preset's sweep is gated by the
# first ("playable"); the others are named gates of the same sweep (`--gate NAME=EXPR`, the name
# with spaces as dashes), so its summary.csv has every `pass_rate[NAME]` and its report shows them.
GATES=(
  "playable|connected_fraction>=0.99 && floor_fraction>=0.4|the spawn reaches >= 99% of the floor and the floor is >= 40% of the map"
  "open|floor_fraction>=0.6|the floor is >= 60% of the map"
  "one piece|components<=1|all floor is one connected component (the recipe's connectivity)"
  "spawn on floor|min_width>=1|the spawn cell is FLOOR (min_width is 0 for a WALL spawn)"
  "no bottleneck|min_width>=2|every cell of the spawn's component lies in an all-floor 2x2 square (no 1-wide passage)"
)

# csv_col FILE NAME: column NAME of FILE's first data row (the one-point sweeps' summary.csv).
csv_col() {
  awk -F, -v name="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i; next }
    NR == 2 { print $c; exit }' "$1"
}

do_variants() {
  local p k name expr meaning dir rate seeds row main col
  local -a gate_args=()
  IFS='|' read -r name main meaning <<<"${GATES[0]}"
  gate_args+=(--gate "$main")
  for k in "${!GATES[@]}"; do
    [ "$k" = 0 ] && continue
    IFS='|' read -r name expr meaning <<<"${GATES[$k]}"
    gate_args+=(--gate "${name// /-}=$expr")
  done
  rm -rf results/variants
  mkdir -p "$WORK/variants" results/variants
  for p in "${PRESETS[@]}"; do
    rm -rf "${WORK:?}/variants/$p"
    "$BIN" sweep --preset "$p" --seeds "$SEEDS" --metrics all --per-seed all "${gate_args[@]}" \
      --out "$WORK/variants/$p"
    # The preset's folder is its report (README.md, index.html, img/), plus the sweep's files.
    "$BIN" report "$WORK/variants/$p" --out "results/variants/$p"
    cp "$WORK/variants/$p"/{summary.csv,trajectory.csv,components.csv,manifest.json} "results/variants/$p/"
  done
  {
    echo "# Variants: every preset over 10,000 seeds"
    echo
    echo "$PROV"
    echo
    echo "Each preset ran as \`cavesweep sweep --preset NAME --seeds $SEEDS --metrics all --per-seed all"
    echo "--gate '$main'\` plus every other gate below as a named gate (\`--gate 'open=floor_fraction>=0.6'\`"
    echo "...; the full command is in \`NAME/manifest.json\`), and \`cavesweep report\` made \`NAME/README.md\`"
    echo "(also \`NAME/index.html\`): its metrics, wall fraction per step, component counts and typical,"
    echo "passing and failing caves. The RNG is xoshiro (the presets' default), so these are not the"
    echo "chapter's numpy seeds (see \`results/chapter/\`)."
    echo
    printf '| gate | expression | meaning |'
    for p in "${PRESETS[@]}"; do printf ' [%s](%s/README.md) |' "$p" "$p"; done
    echo
    printf '|---|---|---|'
    for p in "${PRESETS[@]}"; do printf -- '---:|'; done
    echo
    for k in "${!GATES[@]}"; do
      IFS='|' read -r name expr meaning <<<"${GATES[$k]}"
      row="| $name | \`$expr\` | $meaning |"
      col=pass_rate
      [ "$k" = 0 ] || col="pass_rate[${name// /-}]"
      for p in "${PRESETS[@]}"; do
        dir="$WORK/variants/$p"
        rate=$(csv_col "$dir/summary.csv" "$col")
        seeds=$(csv_col "$dir/summary.csv" seeds)
        row+=$(awk -v r="$rate" -v n="$seeds" 'BEGIN { printf " %.2f%% (%d) |", 100 * r, r * n + 0.5 }')
      done
      echo "$row"
    done
    echo
    echo "Rates in percent with the number of caves that passed, from each sweep's \`summary.csv\`."
    echo "\`no bottleneck\` is strict by construction: a single floor cell of the spawn's component that"
    echo "no all-floor 2x2 square covers (a 1-wide nook or passage) fails it."
  } >results/variants/README.md
}

do_report_grid() {
  local t0 t1
  rm -rf "${WORK:?}/grid" results/grid
  "$BIN" sweep --preset chapter-strict --vary fill=0.30:0.70:0.01 --vary steps=1..=25 --seeds 0..500 \
    --gate 'connected_fraction>=0.99 && floor_fraction>=0.4' --out "$WORK/grid"
  t0=$(date +%s.%N)
  "$BIN" report "$WORK/grid" --out results/grid
  t1=$(date +%s.%N)
  GRID_SECONDS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
  echo "report of the 1,025-point grid rendered in ${GRID_SECONDS} s" >&2
}

do_export() {
  # A cave exported as a Tiled map and drawn by Tiled's own renderer (Debian's `tiled`), beside
  # cavesweep's picture of it: what README's "Your own grids" shows.
  rm -rf results/export
  mkdir -p results/export
  local tmx="$WORK/export/classic-4-5-31575.tmx"
  rm -rf "$WORK/export"
  mkdir -p "$WORK/export"
  "$BIN" run --preset classic-4-5 --seed 31575 --save "$tmx" --save results/export/classic-4-5-31575.npy \
    --png results/export/cavesweep-classic-4-5.png --scale 4 >/dev/null
  QT_QPA_PLATFORM=offscreen tmxrasterizer --tilesize 4 "$tmx" results/export/tiled-classic-4-5.png 2>/dev/null
  "$BIN" run --preset classic-4-5 --set rule=B456/S3456H --set connectivity=6 --seed 7 \
    --png results/export/hex-classic-4-5.png --scale 5 >/dev/null
  {
    echo "# Export"
    echo
    echo "$PROV"
    echo
    echo "| file | what | command |"
    echo "|---|---|---|"
    echo "| [tiled-classic-4-5.png](tiled-classic-4-5.png) | the cave saved as a Tiled map, drawn by Tiled's \`tmxrasterizer\` (the spawn object is the small grey square) | \`cavesweep run --preset classic-4-5 --seed 31575 --save cave.tmx; tmxrasterizer --tilesize 4 cave.tmx tiled-classic-4-5.png\` |"
    echo "| [cavesweep-classic-4-5.png](cavesweep-classic-4-5.png) | cavesweep's own picture of the same cave | \`cavesweep run --preset classic-4-5 --seed 31575 --png cavesweep-classic-4-5.png --scale 4\` |"
    echo "| [classic-4-5-31575.npy](classic-4-5-31575.npy) | the same cave for numpy (\`np.load\`) | \`cavesweep run --preset classic-4-5 --seed 31575 --save classic-4-5-31575.npy\` |"
    echo "| [hex-classic-4-5.png](hex-classic-4-5.png) | a hex cave (hexagonal rule, 6-connected), each row drawn half a cell right of the row below | \`cavesweep run --preset classic-4-5 --set rule=B456/S3456H --set connectivity=6 --seed 7 --png hex-classic-4-5.png --scale 5\` |"
    echo
    echo "![Tiled's rendering](tiled-classic-4-5.png)"
    echo
    echo "![cavesweep's picture](cavesweep-classic-4-5.png)"
    echo
    echo "![A hex cave](hex-classic-4-5.png)"
  } >results/export/README.md
}

do_gallery() {
  rm -rf results/gallery
  mkdir -p results/gallery
  local readme=results/gallery/README.md p seed wf med scale cmd
  {
    echo "# Gallery"
    echo
    echo "$PROV"
    echo
    echo "Walls dark, floor the spawn reaches light, floor it cannot reach blue; green ring: the spawn."
    echo "One typical cave per preset: the seed (xoshiro RNG, the presets' default) whose final wall"
    echo "fraction is closest to the median over the 10,000 seeds of [results/variants](../variants/README.md)"
    echo "(ties: the lowest seed; from each preset's \`caves.csv\`). Plus the chapter's own seed 42,"
    echo "replayed with numpy's RNG."
    echo
    echo "| file | preset | seed | final wall fraction (median over seeds 0..9999) | command |"
    echo "|---|---|---|---|---|"
  } >"$readme"
  for p in "${PRESETS[@]}"; do
    # The typical cave `cavesweep report` chose (exact: every seed has a row in seeds.csv).
    IFS=, read -r seed wf med < <(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next }
      $h["role"] == "typical" { print $h["seed"] "," $h["wall_fraction"] "," $h["median"]; exit }' \
      "results/variants/$p/caves.csv")
    # Small grids (NetHack's 19x77) get bigger cells so the picture is legible.
    scale=6
    [ "$p" = nethack-mines ] && scale=10
    cmd="cavesweep run --preset $p --seed $seed --png results/gallery/$p.png --scale $scale"
    "$BIN" run --preset "$p" --seed "$seed" --png "results/gallery/$p.png" --scale "$scale" >/dev/null
    printf '| [%s.png](%s.png) | %s | %s | %.4f (%.4f) | `%s` |\n' "$p" "$p" "$p" "$seed" "$wf" "$med" "$cmd" >>"$readme"
  done
  cmd="cavesweep run --preset chapter-strict --rng numpy --seed 42 --png results/gallery/chapter-strict-seed42-numpy.png --scale 6"
  "$BIN" run --preset chapter-strict --rng numpy --seed 42 --png results/gallery/chapter-strict-seed42-numpy.png \
    --scale 6 >"$WORK/seed42.txt"
  wf=$("$BIN" run --preset chapter-strict --rng numpy --seed 42 --json |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["wall_fraction"])')
  printf '| [%s](%s) | chapter-strict, numpy RNG (the chapter'"'"'s seed 42) | 42 | %.4f | `%s` |\n' \
    chapter-strict-seed42-numpy.png chapter-strict-seed42-numpy.png "$wf" "$cmd" >>"$readme"
  {
    echo
    for f in results/gallery/*.png; do
      echo "![$(basename "$f")]($(basename "$f"))"
      echo
    done
  } >>"$readme"
}

do_bench() {
  mkdir -p results/bench
  local secs="${BENCH_SECONDS:-3}"
  "$BIN" bench --seconds "$secs" --out results/bench --force | tee "$WORK/bench.txt"
  {
    echo "# Throughput per preset"
    echo
    echo "$PROV"
    echo
    echo "Command: \`cavesweep bench --seconds $secs --out results/bench --force\` (numbers also in \`bench.csv\`)."
    echo "The machine is shared, so other work may have slowed some figures; the table gives the"
    echo "median and [min-max] of the repeats."
    echo
    echo '```text'
    cat "$WORK/bench.txt"
    echo '```'
  } >results/bench/README.md
}

do_search() {
  mkdir -p results/bench
  local query='components<=2 && (path_length<=110 || min_width>=2) && floor_fraction>=0.62'
  "$BIN" bench --search --repeats 3 --out results/bench --force | tee "$WORK/search.txt"
  "$BIN" search --preset classic-4-5 --set exit=5,5 --seeds 0..1000000 --where "$query" --explain \
    >"$WORK/explain.txt"
  {
    echo "# Seed search"
    echo
    echo "$PROV"
    echo
    echo "Command: \`cavesweep bench --search --repeats 3 --out results/bench --force\` (numbers also in"
    echo "\`search.csv\`, with the command of every figure). Each search figure is measured"
    echo "alternately with its comparison in the same run; median and [min-max] of the repeats."
    echo
    echo '```text'
    cat "$WORK/search.txt"
    echo '```'
    echo
    echo "The plan of one query: \`cavesweep search --preset classic-4-5 --set exit=5,5 --seeds 0..1000000"
    echo "--where '$query' --explain\`"
    echo
    echo '```text'
    cat "$WORK/explain.txt"
    echo '```'
  } >results/bench/search.md
}

do_kernels() {
  cargo bench --bench kernels
  cargo bench --bench inplace
  cargo bench --bench fill
  # Instruction census of the dispatched AVX-512 clone richest in vpternlog (scripts/asm_census.py).
  objdump -d --no-show-raw-insn -C "$BIN" | python3 scripts/asm_census.py >"$WORK/step_sync_asm.txt" || true
  python3 scripts/kernels_report.py --out "${KERNELS_OUT:-results/kernels.md}" --provenance "$PROV" \
    --asm "$WORK/step_sync_asm.txt"
}

do_peers() {
  if [ -f scripts/peers.sh ]; then
    bash scripts/peers.sh
  else
    echo "scripts/peers.sh not found: skipping the peers comparison (results/peers.md)" >&2
  fi
}

do_python() {
  local venv="$WORK/python-venv"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check maturin numpy pandas matplotlib
  PATH="$PWD/$venv/bin:$PATH" "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    --no-build-isolation --no-deps --force-reinstall ./python
  {
    echo "# The Python package: generate() overhead, generate_many() throughput"
    echo
    echo "$PROV"
    echo
    echo "Command: \`python python/benches/bench_generate.py --cli $BIN\` (see python/README.md)."
    echo
    "$venv/bin/python" python/benches/bench_generate.py --cli "$BIN"
  } >results/python.md
  "$venv/bin/python" python/examples/walkthrough.py >"$WORK/walkthrough.txt"
}

do_index() {
  local line
  {
    echo "# results/"
    echo
    echo "$PROV"
    echo
    echo "Evidence for the README's claims, all regenerated by \`scripts/make_results.sh\`."
    echo
    for line in \
      "chapter/report.md|The book chapter's experiment replayed bit for bit (numpy RNG, seeds 0..199): its claims beside our measurements." \
      "variants/README.md|Every preset over 10,000 seeds: gate pass rates, and per preset a \`cavesweep report\` (metrics, trajectories, component counts, caves)." \
      "grid/README.md|\`cavesweep report\` of a 1,025-point grid (fill x steps, 500 seeds each)${GRID_SECONDS:+, rendered in $GRID_SECONDS s}: heatmaps of pass rate and every metric." \
      "gallery/README.md|A typical cave per preset and the chapter's seed 42, as PNGs." \
      "export/README.md|A cave saved as a Tiled map and drawn by Tiled's own renderer, beside cavesweep's picture; a hex cave." \
      "kernels-golly.md|Golly's other neighbourhoods (von Neumann, hexagonal, Larger than Life) on 1024x1024 against the oracle (written from the run of \`cargo bench --bench kernels -- \"vonneumann|hex_|ltl_r5\"\` it names)." \
      "bench/ab-36.md|The workspace split (#36) before and after, alternated: throughput within noise (written from the runs it names)." \
      "bench/issue38/README.md|Issue 38's figures in one run: every preset's caves/s (1 and 2 threads) and stages, and every SIMD path's caves/s, with the ratios against the issue's targets (written from the \`cavesweep bench --paths\` run it names)." \
      "bench/ab-38.md|Issue 38, first step (pockets labelled by union-find over runs; two-radius passes in lanes) before and after, alternated: roguebasin 3.4x, classic-4-5 1.10x, the others within noise (written from the runs it names)." \
      "bench/ab-38b.md|Issue 38, second step (pockets counted by \`count4\` and in the lanes) before and after, alternated whole-process sweeps: classic-4-5 1.17x, roguebasin 1.05x, chapter-strict 1.00x, CSVs byte-identical (written from the runs it names)." \
      "bench/ab-38c.md|Issue 38, third step (the lane fill decides two words at a time without \`vpternlogq\`) before and after, alternated whole-process sweeps with the path forced: avx2 1.085x, sse2 1.063x, avx512-vbmi2 unchanged (0.993x), CSVs byte-identical (written from the runs it names)." \
      "bench/ab-38d.md|Issue 38, fourth step (pockets labelled in the SIMD clone, further lane floods where the spawn's began in a pocket, the forest test with splits, a cave on its own labelling its pockets by runs) before and after, alternated whole-process sweeps: classic-4-5 and 1024x1024 classic-4-5 faster, the others within noise, CSVs byte-identical (written from the runs it names)." \
      "bench/ab-38e.md|Issue 38, fifth step (the per-cave flood's row step for rows over 256 columns in AVX-512 registers) before and after, alternated whole-process sweeps: 1024x1024 classic-4-5 1.96x faster, 90x140 within noise, CSVs byte-identical; the large-map per-cell target met (1.27x)." \
      "kernels.md|The step kernels against the scalar oracle, in cell updates per second." \
      "kernels-avx2.md|The same on a machine without AVX-512 (\`KERNELS_OUT\`): the paths it has, and the one it dispatches to." \
      "bench/README.md|Throughput per preset (1 thread, all threads, kernels, the scalar oracle)." \
      "bench/search.md|Seed search: lazy evaluation against generation alone, search --top against sweep, a query plan." \
      "bench/grid.md|Sweeps of 1,025- and 100,000-point grids against one point: caves/s and peak memory." \
      "bench/native_vs_portable.md|The portable build (run-time SIMD dispatch) against a -C target-cpu=native build, per stage and end to end." \
      "peers.md|cavesweep beside the chapter's numpy code, mapgen, the oracle, Golly's bgolly (Life on a 1024x1024 torus, final grids identical) and OpenCV's and scipy's labelling (component counts equal), same work, one run (written by \`scripts/peers.sh\`)." \
      "probe.md|cavesweep's stages beside the performance issue's standalone probe, run back to back on two machines, an AVX-512 Xeon and an AVX2-only Zen 3 (written by hand from those runs; the probe is not in this repository)." \
      "parquet.md|Issue 41: a 10-million-row \`--per-seed all\` table as CSV and as Parquet in the same run: size, sweep rate, peak RSS, pandas and DuckDB load times, DuckDB's exact count (written by \`scripts/parquet_bench.sh\`, which it names)." \
      "explore.md|Issue 39: \`cavesweep explore\`'s server time per cave, the page's round trip and key press to picture, in headless Chromium (written by hand from \`scripts/explore_timing.mjs\`, which it names)." \
      "python.md|The Python package's overhead over the Rust pipeline, and generate_many against the command line." \
      "python-grids.md|Your own arrays from Python: converting to bits and back beside one step of the kernel (written from the run of \`python python/benches/bench_step.py\` it names)."; do
      if [ -f "results/${line%%|*}" ]; then
        echo "- [${line%%|*}](${line%%|*}): ${line#*|}"
      else
        echo "- ${line%%|*}: not generated in this run (${line#*|})"
      fi
    done
  } >results/README.md
}

mkdir -p "$WORK" results
stage build do_build
mapfile -t PRESETS < <("$BIN" presets | awk 'NF { print $1 }')
echo "presets: ${PRESETS[*]}" >&2
stage chapter do_chapter
stage variants do_variants
stage report do_report_grid
stage gallery do_gallery
stage export do_export
if [ "${SKIP_BENCH:-0}" = 1 ]; then
  echo "== [kernels, bench] skipped (SKIP_BENCH=1)" >&2
else
  stage kernels do_kernels
  stage bench do_bench
  stage gridbench bash scripts/grid_results.sh "$BIN"
  stage search do_search
fi
if [ "${NATIVE:-0}" = 1 ]; then
  stage native bash scripts/native_vs_portable.sh results/bench/native_vs_portable.md
fi
if [ "${SKIP_PEERS:-0}" = 1 ]; then echo "== [peers] skipped (SKIP_PEERS=1)" >&2; else stage peers do_peers; fi
if [ "${SKIP_PYTHON:-0}" = 1 ]; then echo "== [python] skipped (SKIP_PYTHON=1)" >&2; else stage python do_python; fi
stage index do_index
T_END=$(date +%s.%N)
echo "== timings" >&2
printf '%s\n' "${TIMINGS[@]}" >&2
awk -v a="$T_ALL" -v b="$T_END" 'BEGIN { printf "total     %7.1f s\n", b - a }' >&2
