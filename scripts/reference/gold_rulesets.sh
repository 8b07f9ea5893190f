#!/usr/bin/env bash
# Prepare the gold-task replay check of a domain with rulesets (retail): the authors' task
# files (train + test) replayed through each reference implementation on the authors' data.
#   scripts/reference/gold_rulesets.sh <domain> <tau-emotion-bench checkout> <tau-bench checkout> <out>
# Writes <out>/data/*.json (the authors' database), <out>/tasks.json (every task, test then
# train), <out>/calls.jsonl (their gold actions, one task a line), and per ruleset
# <out>/expected-<ruleset>.jsonl: the outputs and changed rows of the reference tools that
# implement it (tau-emotion-bench's own tools; tau-bench's). Then:
#   TRACER_GOLD_DIR=<out> cargo test --lib <domain>::tests::gold -- --ignored --nocapture
# Nothing here is committed: the test reads <out> only when TRACER_GOLD_DIR is set.
set -euo pipefail
domain=$1 teb=$2 tb=$3 out=$4
root=$(cd "$(dirname "$0")/../.." && pwd)
ref=$root/scripts/reference/reference.py
mkdir -p "$out/data"
cp "$teb"/tau_emotion_bench/envs/"$domain"/data/*.json "$out/data/"
python3 "$ref" tasks --repo "$teb" --domain "$domain" --split test --out "$out/test.json"
python3 "$ref" tasks --repo "$teb" --domain "$domain" --split train --out "$out/train.json"
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
tasks = json.load(open(f"{out}/test.json")) + json.load(open(f"{out}/train.json"))
json.dump(tasks, open(f"{out}/tasks.json", "w"), indent=1)
with open(f"{out}/calls.jsonl", "w") as f:
    for t in tasks:
        f.write(json.dumps([{"name": a["name"], "kwargs": a["kwargs"]} for a in t["actions"]]) + "\n")
PY
python3 "$ref" record --repo "$teb" --domain "$domain" --data "$out/data" \
  --calls "$out/calls.jsonl" --out "$out/expected-tau-emotion-bench.jsonl"
python3 "$ref" record --repo "$tb" --domain "$domain" --data "$out/data" \
  --calls "$out/calls.jsonl" --out "$out/expected-tau-bench.jsonl"
echo "gold replay inputs: $out"
