#!/usr/bin/env bash
# Submit a sharded Tracer stage to Slurm: a preparation job (what the stage reads, in one
# process), an array of SHARDS shard jobs after it, and a merge job after the array.
#
#   SHARDS=8 STAGE=rollouts deploy/slurm/submit.sh            (make release-slurm does this)
#
# Environment: SHARDS (N), STAGE (grounded|refined|feelings|tasks|rollouts|eval), TRACER
# (binary; default target/release/tracer), TRACER_ARGS (flags for every job, e.g. "--domain
# airline --seed 7"), SBATCH_ARGS (extra sbatch flags for every job: partition, account,
# time), PREPARE=0 to skip the preparation job, LOG_DIR (default slurm-logs/), WAIT=1 to
# block until the merge job ends (exit status 1 unless every job completed; WAIT_TIMEOUT
# seconds at most, then the jobs are cancelled).
# TRACER_ROOT / TRACER_OUTPUT must be on a file system every node sees; sbatch exports this
# shell's environment to the jobs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${SHARDS:?set SHARDS=N}" "${STAGE:?set STAGE=<stage>}"
case "$SHARDS" in ''|*[!0-9]*) echo "submit.sh: SHARDS must be a positive integer, not '$SHARDS'" >&2; exit 1 ;; esac
[ "$SHARDS" -ge 1 ] || { echo "submit.sh: SHARDS must be at least 1" >&2; exit 1; }
TRACER=$(cd "$(dirname "${TRACER:-target/release/tracer}")" && pwd)/$(basename "${TRACER:-target/release/tracer}")
[ -x "$TRACER" ] || { echo "submit.sh: no tracer binary at $TRACER (cargo build --release)" >&2; exit 1; }
export TRACER STAGE TRACER_ARGS="${TRACER_ARGS:-}"
export TRACER_ROOT=${TRACER_ROOT:-$PWD}
export TRACER_OUTPUT=${TRACER_OUTPUT:-$TRACER_ROOT/output}
# Stage overrides (the release recipe: configs/release); every job must see the same ones.
export TRACER_STAGE_OVERRIDES=${TRACER_STAGE_OVERRIDES:-}
LOG_DIR=${LOG_DIR:-$PWD/slurm-logs}
mkdir -p "$LOG_DIR"
# Fail before queueing anything when the stage cannot be sharded or the config is bad.
"$TRACER" validate >/dev/null
# shellcheck disable=SC2086
read -r -a extra <<<"${SBATCH_ARGS:-}"
dep=()
if [ "${PREPARE:-1}" != 0 ]; then
    prep=$(sbatch --parsable "${extra[@]}" --output="$LOG_DIR/prepare-%j.out" "$here/prepare.sbatch")
    prep=${prep%%;*}
    dep=(--dependency="afterok:$prep" --kill-on-invalid-dep=yes)
    echo "submitted preparation job $prep ($STAGE --upstream)"
fi
array=$(sbatch --parsable "${extra[@]}" "${dep[@]}" --array="0-$((SHARDS - 1))" \
    --output="$LOG_DIR/shard-%A_%a.out" "$here/shards.sbatch")
array=${array%%;*}
echo "submitted shard array $array ($STAGE, $SHARDS shards)"
merge=$(sbatch --parsable "${extra[@]}" --dependency="afterok:$array" --kill-on-invalid-dep=yes \
    --output="$LOG_DIR/merge-%j.out" "$here/merge.sbatch")
merge=${merge%%;*}
echo "submitted merge job $merge (after every shard succeeded)"
cat <<MSG
follow:   squeue -j ${prep:+$prep,}$array,$merge
logs:     $LOG_DIR/shard-${array}_<i>.out, $LOG_DIR/merge-$merge.out
progress: TRACER_ROOT=$TRACER_ROOT TRACER_OUTPUT=$TRACER_OUTPUT TRACER_STAGE_OVERRIDES=$TRACER_STAGE_OVERRIDES $TRACER status
a failed shard: rerun it alone (sbatch --array=<i> ... or tracer run $STAGE --shard <i>/$SHARDS), then tracer merge $STAGE
MSG
if [ "${WAIT:-0}" = 1 ]; then
    # Without accounting (sacct), job states are read from scontrol while the controller
    # still remembers the jobs (MinJobAge).
    state_of() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | sort -u | tr '\n' ' '; }
    deadline=$((SECONDS + ${WAIT_TIMEOUT:-86400}))
    while :; do
        s=$(state_of "$merge")
        case "$s" in
            *PENDING*|*RUNNING*|*CONFIGURING*|*COMPLETING*|"") ;;
            *) break ;;
        esac
        if [ $SECONDS -ge $deadline ]; then
            echo "submit.sh: gave up waiting for job $merge after ${WAIT_TIMEOUT:-86400}s" >&2
            scancel ${prep:-} "$array" "$merge" 2>/dev/null || true
            exit 1
        fi
        sleep 2
    done
    bad=0
    for j in ${prep:-} $array $merge; do
        s=$(state_of "$j")
        echo "job $j: $s"
        [ "$(echo "$s" | tr -d ' ')" = COMPLETED ] || bad=1
    done
    exit $bad
fi
