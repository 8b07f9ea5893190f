#!/usr/bin/env bash
# `make bench`, serve section: an offline airline run through `tasks`, `tracer serve` on it
# (scripted user, its own process), and `tracer bench --serve-load` playing gold-replaying
# episodes at 1, 64 and 1,024 concurrent sessions (sessions/s, step latency p50 / p99, the
# server's CPU per step), then 1,024 sessions held open (server memory per session).
# Prints Markdown.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
TRACER=${TRACER:-$repo/target/release/tracer}
TASKS=${BENCH_TASKS:-60}
CONCURRENCY=${BENCH_SERVE_CONCURRENCY:-1,64,1024}
EPISODES=${BENCH_SERVE_EPISODES:-2048}
# shellcheck source=bench_lib.sh
. "$repo/scripts/bench_lib.sh"
bench_setup serve
project "$work/p" "$TASKS"
export TRACER_ROOT=$work/p TRACER_OUTPUT=$work/out
"$TRACER" run tasks --domain airline 2>/dev/null
"$TRACER" serve --domain airline --port 0 --max-sessions 8192 >"$work/serve.out" 2>"${BENCH_SERVE_LOG:-$work/serve.err}" &
server_pid=$!
for _ in $(seq 200); do grep -q '^tracer serve: http://' "$work/serve.out" 2>/dev/null && break; sleep 0.1; done
addr=$(sed -n 's|^tracer serve: http://\([^ ]*\).*|\1|p' "$work/serve.out")
[ -n "$addr" ] || { echo "bench_serve: the server did not start: $(cat "$work/serve.err")" >&2; exit 1; }
"$TRACER" bench --serve-load "$addr" --server-pid "$server_pid" \
    --concurrency "$CONCURRENCY" --episodes "$EPISODES" --held 1024
