#!/usr/bin/env bash
# The merge step of scripts/slurm_sweep.sh: every OUT/shard-K folder into OUT/merged, files
# byte-identical to a one-machine run. Submit it as a job that waits for the array:
#
#   sbatch --dependency=afterany:$jid scripts/slurm_merge.sh OUT
#
# It fails (exit 1, one line in cavesweep-merge-JOB.log) naming the shards that are missing or
# unfinished, e.g. "missing shard 3/16 of 16: ..."; rerun those tasks (or the whole array) and
# then this script. Rerunning it after a kill finishes the merge; after success it only verifies.
# Set CAVESWEEP to the binary to use (default: cavesweep on PATH).
#SBATCH --job-name=cavesweep-merge
#SBATCH --cpus-per-task=2
#SBATCH --time=01:00:00
#SBATCH --output=cavesweep-merge-%j.log
#SBATCH --open-mode=append
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: sbatch --dependency=afterany:JOBID $0 OUT" >&2
  exit 2
fi
exec "${CAVESWEEP:-cavesweep}" merge --from "$1" --out "$1/merged"
