#!/usr/bin/env bash
# Prepare the gold-task replay check of a domain: the authors' task files (train + test)
# replayed through the reference tools on the authors' data.
#   scripts/reference/gold.sh <domain> <tau-emotion-bench checkout> <out>
#   scripts/reference/gold.sh <domain> <tau-emotion-bench checkout> <tau-bench checkout> <out>
# The second form is for a domain with rulesets (retail), whose tau-bench ruleset is
# checked against tau-bench's own tools as well.
# Writes <out>/data/*.json (the authors' database), <out>/tasks.json (every task, test then
# train), <out>/calls.jsonl (their gold actions, one task a line), and per reference
# <out>/expected-<ruleset>.jsonl: the outputs and changed rows of the reference tools
# (expected-tau-emotion-bench.jsonl always; expected-tau-bench.jsonl with a tau-bench
# checkout). Then:
#   TRACER_GOLD_DIR=<out> cargo test --lib <domain>::tests::gold -- --ignored --nocapture
# Nothing here is committed: the test reads <out> only when TRACER_GOLD_DIR is set.
set -euo pipefail
case $# in
  3) domain=$1 teb=$2 tb= out=$3 ;;
  4) domain=$1 teb=$2 tb=$3 out=$4 ;;
  *) echo "usage: $0 <domain> <tau-emotion-bench checkout> [<tau-bench checkout>] <out>" >&2; exit 2 ;;
esac
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
if [ -n "$tb" ]; then
  python3 "$ref" record --repo "$tb" --domain "$domain" --data "$out/data" \
    --calls "$out/calls.jsonl" --out "$out/expected-tau-bench.jsonl"
fi
echo "gold replay inputs: $out"
