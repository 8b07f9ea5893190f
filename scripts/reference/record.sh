#!/usr/bin/env bash
# Record a differential-test fixture for one domain against its reference environment.
#   scripts/reference/record.sh <domain> <reference checkout> [family] [count] [ruleset]
# Writes tests/fixtures/reference/<domain>/{meta.json,calls.jsonl,expected.jsonl} (sampled
# sequences, then scripts/reference/<domain>_edges.py's hand-written ones if present; with a
# ruleset: tests/fixtures/reference/<domain>-<ruleset>/, the database under that rule
# variant, e.g. retail's tau-bench lifecycle against tau-bench's own tools); the
# exported database goes to a temporary directory (the test regenerates it from the seed).
# Needs a built tracer (target/debug/tracer or $TRACER) and python3.
set -euo pipefail
domain=$1 repo=$2 family=${3:-tau} count=${4:-150} ruleset=${5:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
tracer=${TRACER:-$root/target/debug/tracer}
fixture=$root/tests/fixtures/reference/$domain${ruleset:+-$ruleset}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
"$tracer" reference calls --domain "$domain" --seed 20261130 --count "$count" --out "$work" \
  ${ruleset:+--ruleset "$ruleset"}
# Hand-written sequences for edge cases sampled proposals never reach, when the domain has
# them (scripts/reference/<domain>_edges.py <data dir> <out>), go after the sampled ones.
edges=$root/scripts/reference/${domain}_edges.py
if [ -f "$edges" ]; then
  python3 "$edges" "$work/data" "$work/edges.jsonl"
  cat "$work/edges.jsonl" >> "$work/calls.jsonl"
  python3 -c 'import json, sys
meta = json.load(open(sys.argv[1]))
meta["sequences"] = sum(1 for _ in open(sys.argv[2]))
json.dump(meta, open(sys.argv[1], "w"), indent=2)' "$work/meta.json" "$work/calls.jsonl"
fi
python3 "$root/scripts/reference/reference.py" record --family "$family" --repo "$repo" \
  --domain "$domain" --data "$work/data" --calls "$work/calls.jsonl" --out "$work/expected.jsonl"
mkdir -p "$fixture"
cp "$work/meta.json" "$work/calls.jsonl" "$work/expected.jsonl" "$fixture/"
echo "fixture: $fixture"
