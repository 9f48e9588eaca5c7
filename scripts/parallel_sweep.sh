#!/usr/bin/env bash
# Run one sweep as N shards with GNU parallel on this machine (or, with parallel's --sshlogin,
# across several), then merge the shard folders into files byte-identical to a single run.
#
#   scripts/parallel_sweep.sh N OUT [sweep flags...]
#   e.g. scripts/parallel_sweep.sh 4 runs/fill --preset chapter-strict --seeds 0..1000000 \
#            --vary fill=0.40:0.55:0.05 --threads 1
#
# Shards land in OUT/shard-K, the merged result in OUT/merged. Every shard runs even if another
# fails; parallel records each in OUT/parallel.joblog. If any failed (or the script was
# interrupted), the script stops before merging; run the same command again: parallel's
# --resume-failed reruns only the shards that failed or never ran, each resuming from its own
# checkpoint, then the merge runs. Rerunning with other flags or another N into the same OUT is
# refused (the joblog numbers jobs, so it only fits the command that wrote it).
# Set CAVESWEEP to the binary to use (default: cavesweep on PATH), PARALLEL_JOBS to the number
# of shards run at once (default: one per core).
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
# The joblog only fits the command that wrote it: record the command and refuse another.
args=$(printf '%q ' "$n" "$@")
if [ -f "$out/parallel.args" ] && [ "$(cat "$out/parallel.args")" != "$args" ]; then
  echo "$out holds shards of another command ($(cat "$out/parallel.args")); use another OUT" >&2
  exit 2
fi
printf '%s' "$args" > "$out/parallel.args"
# -q quotes every argument, so gate expressions with spaces and '&&' pass through intact.
failed=0
seq 1 "$n" | parallel -q --will-cite --jobs "${PARALLEL_JOBS:-100%}" \
  --joblog "$out/parallel.joblog" --resume-failed \
  "$bin" sweep "$@" --shard "{}/$n" --out "$out/shard-{}" || failed=$?
if [ "$failed" -ne 0 ]; then
  echo "$failed shard(s) failed (see $out/parallel.joblog); rerun the same command to retry them (each resumes from its checkpoint)" >&2
  exit 1
fi
"$bin" merge --from "$out" --out "$out/merged"
