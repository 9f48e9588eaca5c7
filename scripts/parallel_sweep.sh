#!/usr/bin/env bash
# Run one sweep as N shards with GNU parallel on this machine (or, with parallel's --sshlogin,
# across several), then merge the shard folders into files byte-identical to a single run.
#
#   scripts/parallel_sweep.sh N OUT [sweep flags...]
#   e.g. scripts/parallel_sweep.sh 4 runs/fill --preset chapter-strict --seeds 0..1000000 \
#            --vary fill=0.40:0.55:0.05 --threads 1
#
# Shards land in OUT/shard-K, the merged result in OUT/merged. Each shard is resumable on its
# own: rerunning this script after an interruption continues where every shard stopped.
# Set CAVESWEEP to the binary to use (default: cavesweep on PATH).
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 N OUT [sweep flags...]" >&2
  exit 2
fi
n=$1
out=$2
shift 2
bin=${CAVESWEEP:-cavesweep}
command -v parallel >/dev/null || { echo "GNU parallel is not installed (apt-get install parallel)" >&2; exit 2; }
mkdir -p "$out"
# -q quotes every argument, so gate expressions with spaces and '&&' pass through intact.
seq 1 "$n" | parallel -q --will-cite --halt now,fail=1 \
  "$bin" sweep "$@" --shard "{}/$n" --out "$out/shard-{}"
shards=()
for k in $(seq 1 "$n"); do shards+=("$out/shard-$k"); done
"$bin" merge "${shards[@]}" --out "$out/merged"
