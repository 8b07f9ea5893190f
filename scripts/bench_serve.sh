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
work=$(mktemp -d "${TMPDIR:-/tmp}/tracer-bench-serve.XXXXXX")
server_pid=""
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
export TRACER_EMBED_MODEL=${TRACER_EMBED_MODEL:-$repo/.cache/models/all-MiniLM-L6-v2}
export TRACER_EMOTION_CACHE=${TRACER_EMOTION_CACHE:-$repo/.cache/emotion}
mkdir -p "$work/p"
for d in stages graphs policies emotion_anchors; do cp -r "$repo/$d" "$work/p/"; done
printf 'max_train = %s\nmax_eval = 0\nmax_customers = 24\nmax_proposals = 6\nmax_expansions = 400\n' "$TASKS" \
    >"$work/p/stages/grounded.toml"
export TRACER_ROOT=$work/p TRACER_OUTPUT=$work/out
"$TRACER" run tasks --domain airline 2>/dev/null
"$TRACER" serve --domain airline --port 0 --max-sessions 8192 >"$work/serve.out" 2>"${BENCH_SERVE_LOG:-$work/serve.err}" &
server_pid=$!
for _ in $(seq 200); do grep -q '^tracer serve: http://' "$work/serve.out" 2>/dev/null && break; sleep 0.1; done
addr=$(sed -n 's|^tracer serve: http://\([^ ]*\).*|\1|p' "$work/serve.out")
[ -n "$addr" ] || { echo "bench_serve: the server did not start: $(cat "$work/serve.err")" >&2; exit 1; }
"$TRACER" bench --serve-load "$addr" --server-pid "$server_pid" \
    --concurrency "$CONCURRENCY" --episodes "$EPISODES" --held 1024
