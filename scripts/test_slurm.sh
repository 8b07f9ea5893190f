#!/usr/bin/env bash
# `make test-slurm`: the cluster recipe on a real (single-node) Slurm cluster. Starts one from
# Debian's packages (deploy/slurm/local-cluster.sh, daemons stopped by pid on every exit),
# submits the preparation job, an array of 3 `rollouts` shards and the merge job exactly as
# `make release-slurm` does, waits, and compares the merged output byte for byte with a
# single-process run of the same small config. Also checks that a shard refuses stale
# inputs, that the parts are gone after the merge and that `tracer status` says fresh.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
TRACER=${TRACER:-$repo/target/debug/tracer}
[ -x "$TRACER" ] || { echo "test-slurm: build first (cargo build --bin tracer)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/tracer-test-slurm.XXXXXX")
trap 'rm -rf "$work"' EXIT

# A small project: one domain, a few grounded traces per split.
root=$work/project
mkdir -p "$root"
for d in stages graphs policies emotion_anchors; do cp -r "$repo/$d" "$root/"; done
printf 'max_train = 24\nmax_eval = 6\nmax_customers = 24\nmax_proposals = 6\nmax_expansions = 400\n' \
    >"$root/stages/grounded.toml"
export TRACER_ROOT=$root
export TRACER_EMBED_MODEL=${TRACER_EMBED_MODEL:-$repo/.cache/models/all-MiniLM-L6-v2}
export TRACER_EMOTION_CACHE=${TRACER_EMOTION_CACHE:-$repo/.cache/emotion}
args="--domain airline"

echo "test-slurm: single-process reference run" >&2
# shellcheck disable=SC2086
TRACER_OUTPUT=$work/single "$TRACER" run rollouts $args 2>"$work/single.log" \
    || { cat "$work/single.log" >&2; exit 1; }

# A shard refuses stale inputs with one line naming the stage to run.
# shellcheck disable=SC2086
if TRACER_OUTPUT=$work/refused "$TRACER" run rollouts --shard 0/3 $args 2>"$work/refused.log"; then
    echo "test-slurm: a shard ran on missing inputs" >&2; exit 1
fi
grep -q "run \`tracer run tasks\`" "$work/refused.log" \
    || { echo "test-slurm: unexpected refusal: $(cat "$work/refused.log")" >&2; exit 1; }

cluster_check() {
    set -euo pipefail
    export TRACER_OUTPUT=$work/cluster
    SHARDS=3 STAGE=rollouts TRACER="$TRACER" TRACER_ARGS="$args" LOG_DIR="$work/logs" \
        WAIT=1 WAIT_TIMEOUT=900 "$repo/deploy/slurm/submit.sh" \
        || { tail -n 20 "$work"/logs/*.out >&2; return 1; }
    # Every shard ran in its own Slurm array task.
    for i in 0 1 2; do
        grep -q "tracer shard $i/3 of 'rollouts'" "$work"/logs/shard-*_"$i".out \
            || { echo "test-slurm: no log of shard $i" >&2; return 1; }
    done
}
echo "test-slurm: starting a single-node Slurm cluster" >&2
"$repo/deploy/slurm/local-cluster.sh" run -- bash -c "$(declare -f cluster_check); work='$work' repo='$repo' TRACER='$TRACER' args='$args' cluster_check"

for stage in db traces grounded refined feelings emotions tasks rollouts; do
    diff -r "$work/single/$stage" "$work/cluster/$stage" >/dev/null \
        || { echo "test-slurm: '$stage' differs between the cluster and one process" >&2; diff -r "$work/single/$stage" "$work/cluster/$stage" | head >&2; exit 1; }
done
[ ! -e "$work/cluster/.shards/rollouts/domain=airline" ] \
    || { echo "test-slurm: shard parts left after the merge" >&2; exit 1; }
# (Captured first: `grep -q` closing the pipe early would fail the writer under pipefail.)
# shellcheck disable=SC2086
status=$(TRACER_OUTPUT=$work/cluster "$TRACER" status $args)
grep -q "| rollouts | airline | fresh |" <<<"$status" \
    || { echo "test-slurm: rollouts not fresh after the merge: $status" >&2; exit 1; }
episodes=$(python3 -c "import pyarrow.parquet as pq; print(pq.read_table('$work/cluster/rollouts/domain=airline/part-00000.parquet').num_rows)")
echo "test-slurm: ok: 3 Slurm shards + merge == one process, byte for byte ($episodes episodes)"
