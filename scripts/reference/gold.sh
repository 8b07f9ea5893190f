#!/usr/bin/env bash
# Replay a domain's gold tasks through the reference's own tools, for the opt-in gold tests.
#   scripts/reference/gold.sh <domain> <reference checkout> <out dir> [split ...]
# Writes <out>/data/*.json (the reference's database), and per split (default: test train)
# <out>/tasks_<split>.json (converted task file), <out>/calls_<split>.jsonl (each task's gold
# actions as one call sequence) and <out>/expected_<split>.jsonl (the reference's outputs
# and changed rows per task). Nothing here is committed; the tests read <out>.
set -euo pipefail
domain=$1 repo=$2 out=$3
shift 3
splits=${*:-test train}
here=$(cd "$(dirname "$0")" && pwd)
data=$(ls -d "$repo"/*/envs/"$domain"/data | head -n 1)
mkdir -p "$out/data"
cp "$data"/*.json "$out/data/"
for split in $splits; do
  python3 "$here/reference.py" tasks --repo "$repo" --domain "$domain" --split "$split" \
    --out "$out/tasks_$split.json"
  python3 -c 'import json, sys
with open(sys.argv[2], "w") as f:
    for task in json.load(open(sys.argv[1])):
        f.write(json.dumps(task["actions"]) + "\n")' "$out/tasks_$split.json" "$out/calls_$split.jsonl"
  python3 "$here/reference.py" record --repo "$repo" --domain "$domain" --data "$out/data" \
    --calls "$out/calls_$split.jsonl" --out "$out/expected_$split.jsonl"
done
echo "gold replay: $out"
