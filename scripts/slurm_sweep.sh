#!/usr/bin/env bash
# One sweep as a Slurm job array: every task runs its shard(s) of the sweep into OUT/shard-K.
#
#   jid=$(sbatch --parsable --array=0-15 scripts/slurm_sweep.sh OUT --preset chapter-strict \
#           --seeds 0..100000000 --vary fill=0.40:0.55:0.01 --per-seed none)
#   sbatch --dependency=afterany:$jid scripts/slurm_merge.sh OUT
#
# Shards: `cavesweep sweep --shard auto` numbers the tasks 1..N from Slurm's SLURM_ARRAY_TASK_*
# variables, so any range and step works (--array=0-15, 1-16, 1-61:4, 0-999%50). More shards
# than tasks (a 10,000-way split under a MaxArraySize of 1,000): add `--shard auto/10000` to the
# sweep flags; each task then runs its ten shards one after another. An array given as a list
# (--array=1,5,6) cannot be numbered and is refused with a one-line error.
#
# Preemption and requeue: Slurm sends SIGTERM first; cavesweep finishes the chunks in flight,
# checkpoints into OUT/shard-K and exits 130. The requeued task (`#SBATCH --requeue`, or
# `scontrol requeue JOBID_IDX`) reruns this script with the same array variables and resumes
# from the checkpoint. A task that hit its time limit or failed: resubmit the same array
# (finished shards only verify their files, in seconds; unfinished ones resume).
#
# The merge (scripts/slurm_merge.sh) fails with a one-line error naming the shards that are
# missing or unfinished. afterany (not afterok) lets it run, and say so, when a task failed;
# with `--dependency=afterok:$jid --kill-on-invalid-dep=yes` Slurm cancels the merge instead.
# Two splits into one OUT (other flags or another shard count) would mix their shard folders:
# the first task of a split records it in OUT/slurm-split and tasks of any other are refused.
# One shard alone (a rerun): add `--shard K/N` to the flags (any --array, or none).
# Threads: SLURM_CPUS_PER_TASK (--cpus-per-task) unless the sweep flags give --threads.
# Set CAVESWEEP to the binary to use (default: cavesweep on PATH); the log (cavesweep-JOB_TASK.log)
# is appended to, so a requeued task's log keeps the interrupted run's lines.
#SBATCH --job-name=cavesweep
#SBATCH --cpus-per-task=8
#SBATCH --time=04:00:00
#SBATCH --output=cavesweep-%A_%a.log
#SBATCH --open-mode=append
#SBATCH --requeue
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: sbatch --array=A-B[:STEP] $0 OUT [sweep flags...] (a Slurm job array)" >&2
  exit 2
fi
out=$1
shift
# The sweep flags apart from --shard (default: auto) and --threads (default: the CPUs Slurm
# gave the task).
flags=()
shard=(--shard auto)
threads=(--threads "${SLURM_CPUS_PER_TASK:-1}")
prev=
for a in "$@"; do
  case $prev in
    --shard) shard=(--shard "$a") prev= && continue ;;
    --threads) threads=(--threads "$a") prev= && continue ;;
  esac
  case $a in
    --shard | --threads) prev=$a ;;
    --shard=*) shard=("$a") ;;
    --threads=*) threads=("$a") ;;
    *) flags+=("$a") ;;
  esac
done
if [ -n "$prev" ]; then
  echo "cavesweep: error: $prev needs a value" >&2
  exit 2
fi
which=${shard[-1]#--shard=}
if [ "${which%%/*}" = auto ] && [ -z "${SLURM_ARRAY_TASK_ID:-}" ]; then
  echo "usage: sbatch --array=A-B[:STEP] $0 OUT [sweep flags...] (a Slurm job array, or give --shard K/N)" >&2
  exit 2
fi
# One split per OUT: a split is the sweep flags and N, the shard count (from --shard .../N, else
# the array's task count). The first task records it in OUT/slurm-split; a task of another
# split is refused before it writes anything, instead of mixing its shard folders into this
# one's. Resubmitting the array (any range with as many tasks), or one shard as --shard K/N, is
# the same split.
case $which in
  */*) n=${which##*/} ;;
  *) n=${SLURM_ARRAY_TASK_COUNT:-?} ;;
esac
mkdir -p "$out"
split="$(printf '%q ' "${flags[@]}")N=$n"
# Written whole, then linked into place: ln fails if another task got there first.
tmp="$out/.slurm-split.${SLURM_JOB_ID:-0}.$$"
printf '%s\n' "$split" >"$tmp"
ln "$tmp" "$out/slurm-split" 2>/dev/null || true
rm -f "$tmp"
if [ "$(cat "$out/slurm-split")" != "$split" ]; then
  echo "cavesweep: error: $out holds another split ($(cat "$out/slurm-split")); this task's: $split; use another OUT" >&2
  exit 2
fi
echo "cavesweep: task ${SLURM_ARRAY_TASK_ID:-} of array ${SLURM_ARRAY_JOB_ID:-?}, run ${SLURM_RESTART_COUNT:-0} on $(hostname), $(date -u +%FT%TZ)" >&2
# exec: the SIGTERM Slurm sends on preemption, requeue or time limit reaches cavesweep itself.
exec "${CAVESWEEP:-cavesweep}" sweep "${flags[@]}" "${shard[@]}" "${threads[@]}" \
  --out "$out/shard-{shard}"
