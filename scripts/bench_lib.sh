# Shared set-up of the `make bench` scripts (sourced): `bench_setup LABEL` makes $work (a temp
# directory removed on exit, with the process in $server_pid killed), points the encoder and
# the emotion cache at the repository's; `project DIR MAX_TRAIN` copies the project files a
# run needs into DIR with a small airline grounding of MAX_TRAIN training traces.
bench_setup() {
    work=$(mktemp -d "${TMPDIR:-/tmp}/tracer-bench-$1.XXXXXX")
    server_pid=""
    trap 'if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi; rm -rf "$work"' EXIT
    export TRACER_EMBED_MODEL=${TRACER_EMBED_MODEL:-$repo/.cache/models/all-MiniLM-L6-v2}
    export TRACER_EMOTION_CACHE=${TRACER_EMOTION_CACHE:-$repo/.cache/emotion}
}

project() { # project DIR MAX_TRAIN
    mkdir -p "$1"
    for d in stages graphs policies emotion_anchors; do cp -r "$repo/$d" "$1/"; done
    printf 'max_train = %s\nmax_eval = 0\nmax_customers = 24\nmax_proposals = 6\nmax_expansions = 400\n' "$2" \
        >"$1/stages/grounded.toml"
}
