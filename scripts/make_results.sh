#!/usr/bin/env bash
# Regenerate everything in results/ from a fresh clone (target: < 15 minutes on 2 cores).
#
#   scripts/make_results.sh
#
# Stages (each timed):
#   build     cargo build --release
#   chapter   cavesweep reproduce chapter               -> results/chapter/
#   variants  one 10,000-seed sweep per preset + plots   -> results/variants/
#   gallery   a typical cave per preset + the chapter's seed 42 (numpy RNG) -> results/gallery/
#   kernels   cargo bench --bench kernels --bench inplace -> results/kernels.md (SKIP_BENCH=1 skips)
#   bench     cavesweep bench --seconds 3                -> results/bench/      (SKIP_BENCH=1 skips;
#             BENCH_SECONDS=S changes the 3, e.g. for a quick smoke test)
#   search    cavesweep bench --search --repeats 3 + one search --explain -> results/bench/search.md
#             (SKIP_BENCH=1 skips)
#   peers     scripts/peers.sh, if present              -> results/peers.md    (SKIP_PEERS=1 skips)
#   index     results/README.md
#
# Bulky intermediates (per-seed seeds.csv, sweep checkpoints) go to $RESULTS_WORK
# (default target/results-work), which git ignores. matplotlib is pip-installed if missing.
set -euo pipefail
cd "$(dirname "$0")/.."

WORK="${RESULTS_WORK:-target/results-work}"
BIN="${CARGO_TARGET_DIR:-target}/release/cavesweep"
SEEDS="0..10000"
CMD="scripts/make_results.sh"
DATE="$(date -u '+%Y-%m-%d %H:%M UTC')"
MODEL="$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)"
MACHINE="${MODEL:-unknown CPU}, $(nproc) cores (nproc)"
# The provenance line every generated markdown file carries.
PROV="Made by \`$CMD\` on $DATE, machine: $MACHINE."

TIMINGS=()
T_ALL=$(date +%s.%N)
stage() { # stage NAME FUNCTION: run FUNCTION, print and record its wall time
  local name=$1 t0 t1 dt
  shift
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
  "$BIN" reproduce chapter --out results/chapter
  # report.md is the engine's byte-stable output; the provenance goes beside it.
  cat >results/chapter/README.md <<EOF
# The chapter reproduced

$PROV

Command: \`cavesweep reproduce chapter --out results/chapter\` (seeds 0..199, numpy's
\`default_rng\` replayed bit for bit). Files: [report.md](report.md) (the chapter's claims beside
our measurements), \`trajectory.csv\` (wall fraction per step), \`seeds.csv\` (per seed).
EOF
}

do_variants() {
  python3 -c 'import matplotlib' 2>/dev/null || python3 -m pip install --quiet matplotlib
  local gates=() clause p
  while IFS= read -r clause; do gates+=(--gate "$clause"); done < <(python3 scripts/plot_variants.py --print-gates)
  mkdir -p "$WORK/variants"
  for p in "${PRESETS[@]}"; do
    rm -rf "${WORK:?}/variants/$p"
    "$BIN" sweep --preset "$p" --seeds "$SEEDS" --metrics all --per-seed all "${gates[@]}" \
      --out "$WORK/variants/$p"
  done
  rm -rf results/variants
  mkdir -p results/variants
  for p in "${PRESETS[@]}"; do
    mkdir -p "results/variants/$p"
    cp "$WORK/variants/$p"/{summary.csv,trajectory.csv,components.csv,manifest.json} "results/variants/$p/"
  done
  python3 scripts/plot_variants.py --work "$WORK/variants" --out results/variants \
    --presets "${PRESETS[@]}" --date "$DATE" --machine "$MACHINE" --command "$CMD"
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
    echo "Walls dark, floor light, the spawn marked. One typical cave per preset: the seed (xoshiro RNG,"
    echo "the presets' default) whose final wall fraction is closest to the median over the 10,000 seeds"
    echo "of [results/variants](../variants/README.md) (ties: the lowest seed). Plus the chapter's own"
    echo "seed 42, replayed with numpy's RNG."
    echo
    echo "| file | preset | seed | final wall fraction (median over seeds 0..9999) | command |"
    echo "|---|---|---|---|---|"
  } >"$readme"
  while IFS=$'\t' read -r p seed wf med; do
    # Small grids (NetHack's 19x77) get bigger cells so the picture is legible.
    scale=6
    [ "$p" = nethack-mines ] && scale=10
    cmd="cavesweep run --preset $p --seed $seed --png results/gallery/$p.png --scale $scale"
    "$BIN" run --preset "$p" --seed "$seed" --png "results/gallery/$p.png" --scale "$scale" >/dev/null
    printf '| [%s.png](%s.png) | %s | %s | %.4f (%.4f) | `%s` |\n' "$p" "$p" "$p" "$seed" "$wf" "$med" "$cmd" >>"$readme"
  done <"$WORK/variants/typical_seeds.tsv"
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
  "$BIN" bench --seconds "$secs" --out results/bench | tee "$WORK/bench.txt"
  {
    echo "# Throughput per preset"
    echo
    echo "$PROV"
    echo
    echo "Command: \`cavesweep bench --seconds $secs --out results/bench\` (numbers also in \`bench.csv\`)."
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
  "$BIN" bench --search --repeats 3 --out results/bench | tee "$WORK/search.txt"
  "$BIN" search --preset classic-4-5 --set exit=5,5 --seeds 0..1000000 --where "$query" --explain \
    >"$WORK/explain.txt"
  {
    echo "# Seed search"
    echo
    echo "$PROV"
    echo
    echo "Command: \`cavesweep bench --search --repeats 3 --out results/bench\` (numbers also in"
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
  # Instruction census of the sync kernel: proof the SIMD path (ymm registers) is compiled in.
  objdump -d --no-show-raw-insn -C "$BIN" |
    awk '/<cavesweep::kernel::step_sync>:/ { p = 1; next } p && /^$/ { exit } p' |
    grep -oE '\bv[a-z0-9]+ .*%ymm' | awk '{ print $1 }' | sort | uniq -c | sort -rn | head -n 12 \
    >"$WORK/step_sync_asm.txt" || true
  python3 scripts/kernels_report.py --out results/kernels.md --provenance "$PROV" \
    --asm "$WORK/step_sync_asm.txt"
}

do_peers() {
  if [ -f scripts/peers.sh ]; then
    bash scripts/peers.sh
  else
    echo "scripts/peers.sh not found: skipping the peers comparison (results/peers.md)" >&2
  fi
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
      "variants/README.md|Every preset over 10,000 seeds: final metrics, gate pass rates, wall-fraction trajectories (plots)." \
      "gallery/README.md|A typical cave per preset and the chapter's seed 42, as PNGs." \
      "kernels.md|The step kernels against the scalar oracle, in cell updates per second." \
      "bench/README.md|Throughput per preset (1 thread, all threads, kernels, the scalar oracle)." \
      "bench/search.md|Seed search: lazy evaluation against generation alone, search --top against sweep, a query plan." \
      "peers.md|cavesweep beside the chapter's numpy code, mapgen and the oracle, same work per seed."; do
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
stage gallery do_gallery
if [ "${SKIP_BENCH:-0}" = 1 ]; then
  echo "== [kernels, bench] skipped (SKIP_BENCH=1)" >&2
else
  stage kernels do_kernels
  stage bench do_bench
  stage search do_search
fi
if [ "${SKIP_PEERS:-0}" = 1 ]; then echo "== [peers] skipped (SKIP_PEERS=1)" >&2; else stage peers do_peers; fi
stage index do_index
T_END=$(date +%s.%N)
echo "== timings" >&2
printf '%s\n' "${TIMINGS[@]}" >&2
awk -v a="$T_ALL" -v b="$T_END" 'BEGIN { printf "total     %7.1f s\n", b - a }' >&2
