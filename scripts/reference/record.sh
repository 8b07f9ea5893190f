#!/usr/bin/env bash
# Record a differential-test fixture for one domain against its reference environment.
#   scripts/reference/record.sh <domain> <reference checkout> [family] [count]
# Writes tests/fixtures/reference/<domain>/{meta.json,calls.jsonl,expected.jsonl}; the
# exported database goes to a temporary directory (the test regenerates it from the seed).
# Needs a built tracer (target/debug/tracer or $TRACER) and python3. TRACER_REFERENCE_TODAY
# (YYYY-MM-DD) freezes the reference tools' wall clock to the domain's simulation date.
set -euo pipefail
domain=$1 repo=$2 family=${3:-tau} count=${4:-150}
root=$(cd "$(dirname "$0")/../.." && pwd)
tracer=${TRACER:-$root/target/debug/tracer}
fixture=$root/tests/fixtures/reference/$domain
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
"$tracer" reference calls --domain "$domain" --seed 20261130 --count "$count" --out "$work"
python3 "$root/scripts/reference/reference.py" record --family "$family" --repo "$repo" \
  --domain "$domain" --data "$work/data" --calls "$work/calls.jsonl" --out "$work/expected.jsonl" \
  ${TRACER_REFERENCE_TODAY:+--today "$TRACER_REFERENCE_TODAY"}
mkdir -p "$fixture"
cp "$work/meta.json" "$work/calls.jsonl" "$work/expected.jsonl" "$fixture/"
echo "fixture: $fixture"
