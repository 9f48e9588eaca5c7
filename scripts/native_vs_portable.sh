#!/usr/bin/env bash
# The portable binary (plain `cargo build --release`, run-time SIMD dispatch) against a native
# one (`-C target-cpu=native`, built into target/native), side by side in one run: `cavesweep
# bench` with both binaries, ROUNDS rounds, then the ratio portable/native end to end (1 and N
# threads) and per stage (fill, passes, post-steps, measure, total).
#
#   scripts/native_vs_portable.sh [OUT.md]      (default: print only)
#
# Env: SECONDS_PER=S (bench --seconds, default 1), ROUNDS=R (default 6), PRESETS="a b"
# (default: chapter-strict nethack-mines), PORTABLE_BIN/NATIVE_BIN (skip building that one).
# Builds both binaries first (the native one is a second full build, a few minutes on 2 cores).
#
# Method (the machines this runs on are shared and noisy, and a load that comes and goes during
# one binary's turn would otherwise show up as a gap between the builds):
# - Many short rounds rather than a few long ones, and the order alternates ABBA (portable
#   first in odd rounds, native first in even ones), so a drift in load hits both alike.
# - Each round gives a paired ratio per figure (portable/native of that round's two runs, which
#   ran next to each other). The table shows the median of those paired ratios and their
#   spread [min-max], beside the ratio of the two medians over all rounds. A real gap shows as
#   a median below 1 with a spread that stays below 1; noise shows as a wide spread around 1.
# - Every figure of one `cavesweep bench` run is itself a median of its repeats (`--repeats`,
#   default 5), wall clock. The 1-thread figures and stages run on one thread; the N-thread
#   figure needs all cores to itself, so on a busy machine it says little about the builds.
# - The header records the load average before and after, so a reader sees how busy it was.
set -euo pipefail
cd "$(dirname "$0")/.."
out_md=${1:-}
secs=${SECONDS_PER:-1}
rounds=${ROUNDS:-6}
presets=${PRESETS:-chapter-strict nethack-mines}

# PORTABLE_BIN / NATIVE_BIN: use these binaries instead of building them.
portable=${PORTABLE_BIN:-target/release/cavesweep}
native=${NATIVE_BIN:-target/native/release/cavesweep}
[[ -n ${PORTABLE_BIN:-} ]] || cargo build --release --bin cavesweep
[[ -n ${NATIVE_BIN:-} ]] ||
  RUSTFLAGS="-C target-cpu=native" cargo build --release --bin cavesweep --target-dir target/native

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pflags=()
for p in $presets; do pflags+=(--preset "$p"); done
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq "$rounds"); do
  order="portable native"
  ((r % 2 == 0)) && order="native portable"
  for kind in $order; do
    bin=$portable
    [[ $kind == native ]] && bin=$native
    echo "round $r/$rounds: $kind" >&2
    "$bin" bench "${pflags[@]}" --seconds "$secs" --out "$work/$kind-$r" >"$work/$kind-$r.txt"
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$work" "$rounds" "$secs" "$presets" "$out_md" "$load_before" "$load_after" <<'EOF'
import csv, statistics, sys, os
work, rounds, secs, presets, out_md, load0, load1 = sys.argv[1:8]
rounds = int(rounds)
def load(kind, name):
    # rows[preset] = one row per round, in round order.
    rows = {}
    for r in range(1, rounds + 1):
        for row in csv.DictReader(open(os.path.join(work, f"{kind}-{r}", name))):
            rows.setdefault(row["preset"], []).append(row)
    return rows
lines = []
p = lambda s="": lines.append(s)
b = {k: load(k, "bench.csv") for k in ("portable", "native")}
s = {k: load(k, "stages.csv") for k in ("portable", "native")}
simd = b["portable"][presets.split()[0]][0]["simd"]
import datetime, subprocess
model = next((l.split(":", 1)[1].strip() for l in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines() if l.startswith("Model name")), "unknown CPU")
p("# Portable build vs native build")
p()
p(f"Made by `SECONDS_PER={secs} ROUNDS={rounds} scripts/native_vs_portable.sh` on "
  f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, machine: {model}, {os.cpu_count()} cores; "
  f"load average {load0} before, {load1} after.")
p()
p(f"portable vs native (`-C target-cpu=native`): {rounds} rounds of `cavesweep bench --seconds {secs}` with")
p("each binary, alternating ABBA. *paired* = the median over the rounds of each round's")
p("portable/native ratio, with its [min-max]; *of medians* = median portable over median native.")
p(f"Above 1 = portable faster (for times: native time / portable time). Portable path: {simd}")
p()
p("| preset | figure | portable | native | paired portable/native [min-max] | of medians |")
p("|---|---|---:|---:|---:|---:|")
def row(pr, label, a_rows, n_rows, key, higher_better, fmt):
    a = [float(x[key]) for x in a_rows]
    n = [float(x[key]) for x in n_rows]
    if statistics.median(n) <= 0:
        return
    paired = [(x / y if higher_better else y / x) for x, y in zip(a, n)]
    am, nm = statistics.median(a), statistics.median(n)
    om = am / nm if higher_better else nm / am
    p(f"| {pr} | {label} | {fmt(am)} | {fmt(nm)} | **{statistics.median(paired):.3f}** "
      f"[{min(paired):.3f}-{max(paired):.3f}] | {om:.3f} |")
for pr in presets.split():
    bp, bn = b["portable"][pr], b["native"][pr]
    for key, label in [("caves_1_median", "caves/s, 1 thread"),
                       ("caves_n_median", f"caves/s, {bp[0]['threads']} threads"),
                       ("step_cells_median", "step cells/s")]:
        row(pr, label, bp, bn, key, True, lambda v: f"{v:,.0f}")
    sp, sn = s["portable"][pr], s["native"][pr]
    for key in ["fill_us", "passes_us", "copy_us", "post_us", "measure_us", "measure_one_us", "total_us"]:
        label = {"measure_one": "measure one cave at a time", "post": "post-steps"}.get(key[:-3], key[:-3])
        row(pr, f"{label} us per cave", sp, sn, key, False, lambda v: f"{v:.3f}")
text = "\n".join(lines) + "\n"
print(text)
if out_md:
    open(out_md, "w").write(text)
EOF
