#!/bin/sh
# A chapter list as a Slurm job array: task N runs `quire batch` on line N
# of the list (quire reads SLURM_ARRAY_TASK_ID less SLURM_ARRAY_TASK_MIN),
# and each writes only its own folder under OUT. Submit with one task per
# input, e.g. for 12 inputs:
#
#   sbatch --array=0-11 deploy/slurm/batch-array.sh
#
# A task that fails can be submitted again (sbatch --array=N …): it goes
# on where it stopped. The exit code says how it went (0 done, 3 partial,
# 1 failed, 2 usage); report.json in OUT/NAME/ says what happened.
#SBATCH --job-name=quire-chapters
#SBATCH --cpus-per-task=2
#SBATCH --mem=4G
#SBATCH --time=01:00:00
#SBATCH --output=quire-%A_%a.log
set -eu

QUIRE=${QUIRE:-quire}
LIST=${LIST:-chapters.txt}
OUT=${OUT:-out}
PRESET=${PRESET:-chapter}

# Each task keeps its own data directory (the memory, the projects list):
# tasks share nothing but OUT.
exec "$QUIRE" --data-dir "${TMPDIR:-/tmp}/quire-$SLURM_ARRAY_JOB_ID-$SLURM_ARRAY_TASK_ID" \
  batch --preset "$PRESET" --inputs "$LIST" --out "$OUT"
