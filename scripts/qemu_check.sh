#!/usr/bin/env bash
# One portable binary, checked on other CPUs: runs the release binary natively and under
# `qemu-x86_64 -cpu Nehalem` (SSE4.2, no AVX: the sse2 path) and `-cpu max` (AVX2 + BMI2, no
# AVX-512 on qemu 7.x: an avx2 path; qemu 7.2 gets avx2-slow-pdep), and requires
#   - that each run picks the path its CPU should get (`run --json` reports it), and
#   - byte-identical sweep output (summary.csv, trajectory.csv, seeds.csv, components.csv,
#     manifest.json) for every preset and for the numpy replay.
# Called by .ci/run after the tests (which build target/ci/cavesweep). Installs Debian's
# qemu-user if qemu-x86_64 is missing. Takes about a minute on 2 cores.
#
# Usage: scripts/qemu_check.sh [BINARY]   (default: target/release/cavesweep)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-target/release/cavesweep}")
[[ -x $bin ]] || { echo "qemu_check: no binary at $bin (cargo build --release first)" >&2; exit 1; }

if ! command -v qemu-x86_64 >/dev/null 2>&1; then
  sudo=""
  if [[ $(id -u) != 0 ]]; then
    command -v sudo >/dev/null 2>&1 || { echo "qemu_check: need root or sudo to install qemu-user" >&2; exit 1; }
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq qemu-user >/dev/null
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The sweeps every CPU must agree on: each preset with a two-point grid and a gate (seeds.csv
# holds every cave's metrics), and the chapter under numpy's RNG.
sweeps=(
  "--preset chapter-strict --seeds 0..600 --vary fill=0.40,0.45 --gate connected_fraction>=0.999"
  "--preset classic-4-5 --seeds 0..600 --vary steps=3,4"
  "--preset roguebasin --seeds 0..300"
  "--preset nethack-mines --seeds 0..600"
  "--preset chapter-strict --rng numpy --seeds 0..300"
)

# run_all NAME [qemu args...]: every sweep into $work/NAME/<k>, run from $work/NAME so the
# recorded command line (--out sweep<k>) is the same everywhere.
run_all() {
  local name=$1
  shift
  mkdir -p "$work/$name"
  (
    cd "$work/$name"
    local k=0
    for s in "${sweeps[@]}"; do
      # shellcheck disable=SC2086 # the sweep flags are meant to split
      "$@" "$bin" sweep $s --per-seed all --threads 2 --out "sweep$k" >/dev/null 2>"$work/err" ||
        { echo "qemu_check: $name: sweep $s failed:" >&2; cat "$work/err" >&2; exit 1; }
      rm -f "sweep$k"/cavesweep.* # the store and lock: private state, bytes depend on timing
      k=$((k + 1))
    done
  )
}

# path_of [qemu args...]: the SIMD path `run --json` reports.
path_of() {
  "$@" "$bin" run --preset classic-4-5 --seed 7 --json |
    sed -n 's/.*"simd":"\([^"]*\)".*/\1/p'
}

start=$SECONDS
run_all native
native_path=$(path_of)
echo "qemu_check: native: path $native_path"
fail=0
for cpu in Nehalem max; do
  case $cpu in
    Nehalem) want=sse2 ;;
    max) want=avx2 ;; # or avx2-slow-pdep: qemu's vendor/family may not be one with fast pdep
  esac
  got=$(path_of qemu-x86_64 -cpu "$cpu")
  if [[ $got != "$want" && $got != "$want-"* ]]; then
    echo "qemu_check: -cpu $cpu ran path $got, expected $want" >&2
    fail=1
  fi
  run_all "$cpu" qemu-x86_64 -cpu "$cpu"
  if diff -r "$work/native" "$work/$cpu" >/dev/null; then
    echo "qemu_check: -cpu $cpu: path $got, ${#sweeps[@]} sweeps byte-identical to native"
  else
    echo "qemu_check: -cpu $cpu: output differs from native:" >&2
    diff -r "$work/native" "$work/$cpu" | head -20 >&2 || true
    fail=1
  fi
done
echo "qemu_check: $((SECONDS - start)) s"
exit $fail
