#!/usr/bin/env bash
# How much slower a remote domain runs than a built-in one: `tracer run STAGE` for each
# domain named, each into a fresh output root, one after the other on the same machine, with
# the wall time, the stage's own summary lines and each domain's ratio to the first one.
# Report only: timings depend on the machine and its load; compare ratios from one run.
#
#   scripts/bench_remote.sh [--tracer BIN] [--stage grounded] [--quick] [--keep DIR] [DOMAIN...]
#
# Defaults: target/debug/tracer, stage `grounded`, domains `school pharmacy` (pharmacy is
# examples/domains/pharmacy, served by its Python server over stdio). `--quick` grounds 60
# training and 30 eval traces per domain instead of the default caps (300 and 150); `--keep
# DIR` leaves each domain's output in DIR/<domain> (to compare two runs' artifacts).
# The repository the script lives in is the project root (stages/, graphs/, policies/).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tracer=$repo/target/debug/tracer
stage=grounded
quick=0
keep=""
domains=()
while [ $# -gt 0 ]; do
    case $1 in
        --tracer) tracer=$2; shift 2 ;;
        --stage) stage=$2; shift 2 ;;
        --quick) quick=1; shift ;;
        --keep) keep=$2; shift 2 ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        *) domains+=("$1"); shift ;;
    esac
done
[ ${#domains[@]} -gt 0 ] || domains=(school pharmacy)
work=$(mktemp -d "${TMPDIR:-/tmp}/tracer-bench-remote.XXXXXX")
trap 'rm -rf "$work"' EXIT
export TRACER_ROOT=$repo
export TRACER_DOMAINS=$repo/examples/domains
export TRACER_EMBED_MODEL=${TRACER_EMBED_MODEL:-$repo/.cache/models/all-MiniLM-L6-v2}
export TRACER_EMOTION_CACHE=${TRACER_EMOTION_CACHE:-$repo/.cache/emotion}
if [ $quick = 1 ]; then
    mkdir -p "$work/overrides"
    grep -v '^max_train\|^max_eval' "$repo/stages/grounded.toml" | sed '/^\[caps/,$d' >"$work/overrides/grounded.toml"
    printf 'max_train = 60\nmax_eval = 30\n' >>"$work/overrides/grounded.toml"
    export TRACER_STAGE_OVERRIDES=$work/overrides
fi
echo "tracer: $tracer; stage: $stage; caps: $([ $quick = 1 ] && echo 'quick (60/30)' || echo default)"
first=""
for d in "${domains[@]}"; do
    out=$work/out-$d
    if [ -n "$keep" ]; then
        out=$keep/$d
        rm -rf "$out"
    fi
    start=$(date +%s.%N)
    TRACER_OUTPUT=$out "$tracer" run "$stage" --domain "$d" >"$work/$d.log" 2>&1 || {
        cat "$work/$d.log"
        exit 1
    }
    secs=$(echo "$(date +%s.%N) - $start" | bc)
    grep '^  ran' "$work/$d.log" | sed "s/^/  /"
    [ -n "$first" ] || first=$secs
    printf '%-10s %8.1f s   %5.2fx %s\n' "$d" "$secs" "$(echo "$secs / $first" | bc -l)" "${domains[0]}"
done
