#!/usr/bin/env bash
# A Slurm job array: task K of N runs shard K/N of one sweep into OUT/shard-K.
#
#   jid=$(sbatch --parsable --array=1-16 scripts/slurm_sweep.sh OUT --preset chapter-strict \
#           --seeds 0..100000000 --vary fill=0.40:0.55:0.01 --per-seed none)
#   sbatch --dependency=afterok:$jid --wrap "cavesweep merge OUT/shard-* --out OUT/merged"
#
# The array must start at 1. A task that is preempted or times out resumes from its checkpoint
# when resubmitted with the same arguments (`scontrol requeue` or a new sbatch of that index).
#SBATCH --job-name=cavesweep
#SBATCH --cpus-per-task=8
#SBATCH --time=04:00:00
#SBATCH --output=cavesweep-%A_%a.log
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: sbatch --array=1-N $0 OUT [sweep flags...]" >&2
  exit 2
fi
out=$1
shift
k=${SLURM_ARRAY_TASK_ID:?run this as a Slurm array job}
n=${SLURM_ARRAY_TASK_COUNT:?run this as a Slurm array job}
mkdir -p "$out"
# SIGTERM before the time limit lets cavesweep checkpoint (Slurm sends it first).
exec "${CAVESWEEP:-cavesweep}" sweep "$@" --shard "$k/$n" \
  --threads "${SLURM_CPUS_PER_TASK:-1}" --out "$out/shard-$k"
