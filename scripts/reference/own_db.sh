#!/usr/bin/env bash
# The reference's tools on the reference's own database, for a tau2 domain's opt-in test.
#   scripts/reference/own_db.sh <domain> <ToolOrchestra checkout> <out dir> [count]
# Draws call sequences with our proposals on the checkout's data/tau2/domains/<domain>/db.json
# (imported as `tracer import tau2` reads it; some arguments corrupted, as record.sh does),
# runs them through the reference's Python tools on that same file, and writes
# <out>/{db.json,calls.jsonl,expected.jsonl,meta.json}. Nothing here is committed; the
# ignored test reads <out>: TRACER_OWN_DB_DIR=<out> cargo test --test integration own_database -- --ignored
set -euo pipefail
domain=$1 repo=$2 out=$3 count=${4:-300}
root=$(cd "$(dirname "$0")/../.." && pwd)
tracer=${TRACER:-$root/target/debug/tracer}
db=$repo/data/tau2/domains/$domain/db.json
mkdir -p "$out/data"
cp "$db" "$out/db.json"
cp "$db" "$out/data/db.json"
"$tracer" reference calls --domain "$domain" --seed 20261130 --count "$count" --db "$db" --out "$out/drawn"
cp "$out/drawn/calls.jsonl" "$out/drawn/meta.json" "$out/"
# reference.py reads a directory of <table>.json files; db.json's top-level keys are the tables.
python3 -c 'import json, sys, os
d = json.load(open(sys.argv[1]))
os.remove(sys.argv[1])
for k, v in d.items():
    json.dump(v, open(os.path.join(os.path.dirname(sys.argv[1]), k + ".json"), "w"))' "$out/data/db.json"
python3 "$root/scripts/reference/reference.py" record --family tau2 --repo "$repo" \
  --domain "$domain" --data "$out/data" --calls "$out/calls.jsonl" --out "$out/expected.jsonl" \
  ${TRACER_REFERENCE_TODAY:+--today "$TRACER_REFERENCE_TODAY"}
echo "own-database replay: $out"
