#!/usr/bin/env bash
# The WebSocket protocol (/ws, OpenEnv's) next to the HTTP routes, on one server: an
# offline airline run through `tasks`, `tracer serve`, then `tracer bench --serve-load`
# (HTTP, gold replays) and scripts/bench_serve_ws.py (/ws episodes) at 1, 64 and 1,024
# concurrent sessions, each followed by sessions held open. Needs .venv-serve
# (`make test-deps`). Prints Markdown; figures are never asserted.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
TRACER=${TRACER:-$repo/target/release/tracer}
TASKS=${BENCH_TASKS:-60}
CONCURRENCY=${BENCH_SERVE_CONCURRENCY:-1,64,1024}
EPISODES=${BENCH_SERVE_EPISODES:-2048}
# shellcheck source=bench_lib.sh
. "$repo/scripts/bench_lib.sh"
bench_setup serve-ws
project "$work/p" "$TASKS"
export TRACER_ROOT=$work/p TRACER_OUTPUT=$work/out
"$TRACER" run tasks --domain airline 2>/dev/null
"$TRACER" serve --domain airline --port 0 --max-sessions 8192 >"$work/serve.out" 2>"$work/serve.err" &
server_pid=$!
for _ in $(seq 200); do grep -q '^tracer serve: http://' "$work/serve.out" 2>/dev/null && break; sleep 0.1; done
addr=$(sed -n 's|^tracer serve: http://\([^ ]*\).*|\1|p' "$work/serve.out")
[ -n "$addr" ] || { echo "bench_serve_ws: the server did not start: $(cat "$work/serve.err")" >&2; exit 1; }
ulimit -n 65536 2>/dev/null || true
echo "### HTTP routes (tracer bench --serve-load)"
"$TRACER" bench --serve-load "$addr" --server-pid "$server_pid" \
    --concurrency "$CONCURRENCY" --episodes "$EPISODES" --held 1024
echo
echo "### WebSocket /ws (OpenEnv protocol)"
"$repo/.venv-serve/bin/python" "$repo/scripts/bench_serve_ws.py" "$addr" "$server_pid" "$CONCURRENCY" "$EPISODES"
