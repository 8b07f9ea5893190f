#!/usr/bin/env bash
# `make bench`, shard section: N = 1, 2, 4 shard processes of `rollouts` (`tracer run rollouts
# --shard i/N`, all started at once) against the loopback OpenAI-compatible server of
# `tracer bench` answering every call after 100 ms, each process with the same concurrency:
# episodes/s against the ideal N x C / (calls per episode x 100 ms). Then the time `tracer
# merge rollouts` takes for 10,000 episodes (offline roles, 4 parts). Prints Markdown.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
TRACER=${TRACER:-$repo/target/release/tracer}
TASKS=${BENCH_TASKS:-96}
CONC=${BENCH_CONCURRENCY:-4}
# shellcheck source=bench_lib.sh
. "$repo/scripts/bench_lib.sh"
bench_setup shards
now() { date +%s.%N; }

# The loopback server: agent answers in text, the user stops on its 3rd reply, so an episode
# is 5 calls (3 user + 2 agent), 500 ms of latency end to end.
mkfifo "$work/server.in"
"$TRACER" bench --loopback-server '{"user_turns":3,"calls":[]}' <"$work/server.in" >"$work/server.out" &
server_pid=$!
exec 9>"$work/server.in"   # held open: the server exits when it closes
for _ in $(seq 100); do grep -q listening "$work/server.out" 2>/dev/null && break; sleep 0.1; done
addr=$(sed -n 's/^listening //p' "$work/server.out")
[ -n "$addr" ] || { echo "bench_shards: the loopback server did not start" >&2; exit 1; }
calls=5

project "$work/p" "$TASKS"
cat >"$work/p/stages/rollouts.toml" <<TOML
split = "train"
trials = 1
max_steps = 50
concurrency = $CONC
[roles.agent]
provider = "openai"
base_url = "http://$addr/v1"
model = "bench@100ms"
concurrency = $CONC
[roles.user]
provider = "openai"
base_url = "http://$addr/v1"
model = "bench@100ms"
concurrency = $CONC
TOML
export TRACER_ROOT=$work/p
TRACER_OUTPUT=$work/base "$TRACER" run rollouts --upstream --domain airline 2>/dev/null
echo "## Shards (rollouts, 100 ms per call, $CONC episodes in flight per process)"
echo
echo "| shards | episodes | wall s | episodes/s | ideal N x C / (calls x 0.1 s) | share of ideal |"
echo "|---|---|---|---|---|---|"
for n in 1 2 4; do
    out=$work/out-$n
    cp -r "$work/base" "$out"
    start=$(now)
    pids=()
    for i in $(seq 0 $((n - 1))); do
        TRACER_OUTPUT=$out "$TRACER" run rollouts --domain airline --shard "$i/$n" 2>"$work/shard-$n-$i.log" &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || { cat "$work"/shard-$n-*.log >&2; exit 1; }; done
    end=$(now)
    TRACER_OUTPUT=$out "$TRACER" merge rollouts --domain airline 2>/dev/null
    episodes=$(python3 -c "import pyarrow.parquet as pq; print(pq.read_table('$out/rollouts/domain=airline/part-00000.parquet').num_rows)")
    python3 - "$n" "$episodes" "$start" "$end" "$CONC" "$calls" <<'PY'
import sys
n, eps, start, end, c, calls = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
wall = end - start
rate = eps / wall
ideal = n * c / (calls * 0.1)
print(f"| {n} | {eps} | {wall:.2f} | {rate:.1f} | {ideal:.1f} | {rate / ideal:.2f} |")
PY
done
cmp -s "$work/out-1/rollouts/domain=airline/part-00000.parquet" "$work/out-4/rollouts/domain=airline/part-00000.parquet" \
    || { echo "bench_shards: 1 and 4 shards wrote different rollouts" >&2; exit 1; }
exec 9>&-

# Merge time: 10,000 offline episodes in 4 parts.
project "$work/m" 200
export TRACER_ROOT=$work/m
TRACER_OUTPUT=$work/mo "$TRACER" run rollouts --upstream --domain airline 2>/dev/null
train=$(python3 -c "import pyarrow.parquet as pq; t = pq.read_table('$work/mo/tasks/domain=airline/part-00000.parquet').to_pylist(); print(sum(r['split'] == 'train' for r in t))")
trials=$(( (10000 + train - 1) / train ))
printf 'split = "train"\ntrials = %s\nmax_steps = 50\nconcurrency = 64\n' "$trials" >"$work/m/stages/rollouts.toml"
for i in 0 1 2 3; do TRACER_OUTPUT=$work/mo "$TRACER" run rollouts --domain airline --shard "$i/4" 2>/dev/null; done
start=$(now)
TRACER_OUTPUT=$work/mo "$TRACER" merge rollouts --domain airline 2>/dev/null
end=$(now)
python3 - "$work/mo/rollouts/domain=airline/part-00000.parquet" "$start" "$end" <<'PY'
import os, sys, pyarrow.parquet as pq
path, start, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
rows = pq.read_table(path).num_rows
print()
print(f"Merge: {rows:,} rollouts from 4 parts in {end - start:.2f} s (the whole `tracer merge`: checks, "
      f"reads, writes {os.path.getsize(path) / 2**20:.1f} MiB of Parquet, manifest, swap).")
PY
