#!/usr/bin/env bash
# Sweep-engine figures on parameter grids -> results/bench/grid.md (+ grid.csv).
#
#   scripts/grid_results.sh [CAVESWEEP_BINARY]
#
# 1. `cavesweep bench --grid`: grids of 1,025, 10,000 and 100,000 points against one point doing
#    the same work, and the natural fill x steps grid against the same caves in a bare loop (interleaved
#    repeats, medians).
# 2. The sweeps of issue 9 as a user types them, each under /usr/bin/time -v for peak RSS and
#    caves/s: one point, the 1,025-point fill x steps grid, a 100,000-point grid, a 100,000-point
#    grid of the same fill x steps family, and the largest seed range (stopped after a checkpoint).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:-${CARGO_TARGET_DIR:-target}/release/cavesweep}"
WORK="${RESULTS_WORK:-target/results-work}/grid"
OUT=results/bench
mkdir -p "$WORK" "$OUT"
DATE="$(date -u '+%Y-%m-%d %H:%M UTC')"
MODEL="$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)"
MACHINE="${MODEL:-unknown CPU}, $(nproc) cores (nproc)"

"$BIN" bench --grid --repeats 3 --out "$OUT" --force | tee "$WORK/bench-grid.txt"

# name | sweep flags (all with --per-seed none and default metrics, as a user would type them)
CASES=(
  "1 point, 1,025,000 seeds|--set steps=13 --set fill=0.5 --seeds 0..1025000"
  "fill=0.30:0.70:0.01 x steps=1..=25 (1,025 points) x 1,000 seeds|--vary fill=0.30:0.70:0.01 --vary steps=1..=25 --seeds 0..1000"
  "fill=0.5:0.599999:0.000001 (100,000 points) x 10 seeds, steps=13|--set steps=13 --vary fill=0.5:0.599999:0.000001 --seeds 0..10"
  "fill=0.30:0.70:0.0001 x steps=1..=25 (100,025 points) x 10 seeds|--vary fill=0.30:0.70:0.0001 --vary steps=1..=25 --seeds 0..10"
)
rows=()
for c in "${CASES[@]}"; do
  name="${c%%|*}"
  flags="${c#*|}"
  dir="$WORK/sweep"
  rm -rf "$dir"
  # shellcheck disable=SC2086
  /usr/bin/time -v "$BIN" sweep $flags --per-seed none --out "$dir" 2>"$WORK/time.txt" >/dev/null
  line="$(grep -E '^swept' "$WORK/time.txt" | tail -n 1)"
  rate="$(sed -nE 's/.*: ([0-9]+) caves\/s.*/\1/p' <<<"$line")"
  rss="$(sed -nE 's/.*Maximum resident set size \(kbytes\): ([0-9]+)/\1/p' "$WORK/time.txt")"
  db="$(du -k "$dir/cavesweep.sqlite" | cut -f1)"
  rows+=("| $name | \`cavesweep sweep $flags --per-seed none\` | $rate | $((rss / 1024)) MB | $((db / 1024)) MB |")
done
# The largest seed range: start, checkpoint twice, stop on SIGINT (exit 130), peak RSS.
dir="$WORK/huge"
rm -rf "$dir"
( /usr/bin/time -v "$BIN" sweep --seeds 0..18446744073709551615 --per-seed none --out "$dir" \
    2>"$WORK/time-huge.txt" >/dev/null || true ) &
sleep 5
pkill -INT -f -- "--out $dir" || true
wait
rss="$(sed -nE 's/.*Maximum resident set size \(kbytes\): ([0-9]+)/\1/p' "$WORK/time-huge.txt")"
done_seeds="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["progress"]["seeds_done"])' "$dir/manifest.json")"
rows+=("| seeds 0..18446744073709551615, stopped with Ctrl-C after 5 s ($done_seeds caves) | \`cavesweep sweep --seeds 0..18446744073709551615 --per-seed none\` | | $((rss / 1024)) MB | |")

{
  echo "# Sweeps of parameter grids"
  echo
  echo "Made by \`scripts/grid_results.sh\` on $DATE, machine: $MACHINE."
  echo
  echo "## Grid against one point, same run"
  echo
  echo "Command: \`cavesweep bench --grid --repeats 3 --out results/bench --force\` (numbers also in \`grid.csv\`)."
  echo "*Matched work* compares grids of chapter-strict caves (13 steps, fill spread over"
  echo "0.50-0.60) with one point at the middle fill (0.55) and as many seeds as the grid has caves."
  echo "The match is not exact: a cave's cost rises steeply with fill, through labelling. One"
  echo "thread, 300,000 seeds, \`perf stat -e task-clock\`, 2026-12-01:"
  echo
  echo "| fill | 0.50 | 0.52 | 0.55 | 0.58 | 0.599 |"
  echo "|---|---:|---:|---:|---:|---:|"
  echo "| task-clock | 980 ms | 1,131 ms | 1,426 ms | 1,847 ms | 2,527 ms |"
  echo
  echo "So a grid's caves cost ~7% more on average than the reference's. Grids whose per-point"
  echo "cost is negligible show it (task-clock, 1 thread): 10 points x 100,000 seeds took 4.61-4.76 s and 1,000 x 1,000"
  echo "took 4.98-5.05 s, against 4.47 s for one point x 1,000,000."
  echo "The ratios of the 0.50-0.60 grids therefore understate the grids by up to that much. The"
  echo "row \"100,000 points, fill 0.545-0.555\" keeps every point's fill within 0.005 of the single"
  echo "point's, so its caves cost what the point's do (to about a percent) and its ratio is the"
  echo "per-point machinery alone. The natural grid's caves range from 1 to 25 steps, so it is"
  echo "compared with the same caves generated in a bare loop."
  echo
  echo '```text'
  cat "$WORK/bench-grid.txt"
  echo '```'
  echo
  echo "## The sweeps as typed, each under \`/usr/bin/time -v\`"
  echo
  echo "All metrics (the default), 2 threads (the default: all cores). Caves/s from the sweep's own"
  echo "report line; peak RSS from \`/usr/bin/time -v\`; the store's size when the sweep finished."
  echo
  echo "| sweep | command | caves/s | peak RSS | store |"
  echo "|---|---|---:|---:|---:|"
  printf '%s\n' "${rows[@]}"
} >"$OUT/grid.md"
echo "wrote $OUT/grid.md" >&2
