#!/usr/bin/env bash
# The portable binary (plain `cargo build --release`, run-time SIMD dispatch) against a native
# one (`-C target-cpu=native`, built into target/native), side by side in one run: `cavesweep
# bench` with both binaries, alternating, ROUNDS times, then the ratio portable/native of the
# medians, end to end (1 and N threads) and per stage (fill, passes, measure, total).
#
#   scripts/native_vs_portable.sh [OUT.md]      (default: print only)
#
# Env: SECONDS_PER=S (bench --seconds, default 2), ROUNDS=R (default 2), PRESETS="a b"
# (default: chapter-strict nethack-mines), PORTABLE_BIN/NATIVE_BIN (skip building that one).
# Builds both binaries first (the native one is a
# second full build, a few minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
out_md=${1:-}
secs=${SECONDS_PER:-2}
rounds=${ROUNDS:-2}
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
for r in $(seq "$rounds"); do
  for kind in portable native; do
    bin=$portable
    [[ $kind == native ]] && bin=$native
    echo "round $r: $kind" >&2
    "$bin" bench "${pflags[@]}" --seconds "$secs" --out "$work/$kind-$r" >"$work/$kind-$r.txt"
  done
done

python3 - "$work" "$rounds" "$secs" "$presets" "$out_md" <<'EOF'
import csv, statistics, sys, os
work, rounds, secs, presets, out_md = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
def load(kind, name):
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
import datetime, platform, subprocess
model = next((l.split(":", 1)[1].strip() for l in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines() if l.startswith("Model name")), "unknown CPU")
p("# Portable build vs native build")
p()
p(f"Made by `SECONDS_PER={secs} ROUNDS={rounds} scripts/native_vs_portable.sh` on "
  f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, machine: {model}, {os.cpu_count()} cores.")
p()
p(f"portable vs native (`-C target-cpu=native`), medians over {rounds} alternating rounds of")
p(f"`cavesweep bench --seconds {secs}`; portable path: {simd}")
p()
p("| preset | figure | portable | native | portable/native |")
p("|---|---|---:|---:|---:|")
med = lambda rows, key: statistics.median(float(x[key]) for x in rows)
for pr in presets.split():
    for key, label, unit in [("caves_1_median", "caves/s, 1 thread", ""),
                             ("caves_n_median", f"caves/s, {b['portable'][pr][0]['threads']} threads", ""),
                             ("step_cells_median", "step cells/s", "")]:
        a, n = med(b["portable"][pr], key), med(b["native"][pr], key)
        p(f"| {pr} | {label} | {a:,.0f} | {n:,.0f} | {a / n:.3f} |")
    for key in ["fill_us", "passes_us", "copy_us", "measure_us", "measure_one_us", "total_us"]:
        a, n = med(s["portable"][pr], key), med(s["native"][pr], key)
        if n > 0:
            # Times: the ratio is native/portable so that, as above, > 1 means portable is faster.
            label = {"measure_one": "measure one cave at a time"}.get(key[:-3], key[:-3])
            p(f"| {pr} | {label} us per cave | {a:.3f} | {n:.3f} | {n / a:.3f} |")
text = "\n".join(lines) + "\n"
print(text)
if out_md:
    open(out_md, "w").write(text)
EOF
