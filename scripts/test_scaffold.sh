#!/usr/bin/env bash
# `tracer scaffold domain` end to end, on a copy of the repository: scaffold a domain, build
# the copy, fill its reference page, check it (`tracer validate`, its graph verified by
# execution), run its own tests, the conformance suite and the tests that count domains,
# and ground it into verified tasks. The copy's build starts from this checkout's compiled dependencies (copied, not
# shared, so this checkout's binaries are untouched), so only the crate itself is rebuilt.
#
#   TRACER=target/debug/tracer bash scripts/test_scaffold.sh
set -euo pipefail
main="$(cd "$(dirname "$0")/.." && pwd)"
tracer="$(cd "$main" && realpath "${TRACER:-target/debug/tracer}")"
work="$(mktemp -d)"
# KEEP=1 keeps the copy (and its output) to look at.
if [ "${KEEP:-0}" != 1 ]; then trap 'rm -rf "$work"' EXIT; fi
name=garden

echo "copying the repository to $work" >&2
(cd "$main" && git ls-files -z | xargs -0 cp --parents -t "$work")
# The sentence encoder the emotions stage reads (make model fetched it).
mkdir -p "$work/.cache"
ln -s "$main/.cache/models" "$work/.cache/models"
if [ -d "$main/.cache/emotion" ]; then cp -r "$main/.cache/emotion" "$work/.cache/emotion"; fi
mkdir -p "$work/target/debug"
for d in deps build .fingerprint; do
  if [ -d "$main/target/debug/$d" ]; then cp -a "$main/target/debug/$d" "$work/target/debug/"; fi
done

cd "$work"
TRACER_ROOT="$work" "$tracer" scaffold domain "$name"
# A second scaffold of the same name is refused and changes nothing.
before="$(sha256sum src/domain/mod.rs)"
if TRACER_ROOT="$work" "$tracer" scaffold domain "$name" 2>/dev/null; then
  echo "FAIL: a second scaffold of '$name' was not refused" >&2
  exit 1
fi
[ "$(sha256sum src/domain/mod.rs)" = "$before" ] || { echo "FAIL: refused scaffold edited the registry" >&2; exit 1; }

echo "building the copy with '$name' registered" >&2
cargo build --quiet
new=./target/debug/tracer
# Listed to a file first: `grep -q` stops reading early, and under pipefail the lister's
# broken pipe would fail the check.
$new list > "$work/list.txt"
grep -qw "$name" "$work/list.txt" || { echo "FAIL: '$name' not listed" >&2; exit 1; }
$new docs
$new docs --check
$new validate
$new graphs verify --domain "$name"
cargo test --quiet --lib -- conformance "domain::$name::" stage::registry
# The tests that read the list of domains take the registry's (an eleventh passes as the ten
# do): the one layout of a domain folder, the import layers, and the code fingerprints (an
# edit of the new domain re-runs only its own stages). FULL=1 runs the whole suite (about
# as long as `make test`; CI runs the tests above).
cargo test --quiet --test integration -- layers::
if [ "${FULL:-0}" = 1 ]; then cargo test --quiet; fi

echo "grounding '$name' into verified tasks" >&2
TRACER_OUTPUT="$work/output" $new run tasks --domain "$name" 2>&1 | tee "$work/run.log"
verified="$(grep -E "ran +tasks +$name" "$work/run.log" | sed -E 's/.* ([0-9]+) verified.*/\1/')"
if [ -z "$verified" ] || [ "$verified" -lt 10 ]; then
  echo "FAIL: '$name' verified ${verified:-no} tasks (expected at least 10)" >&2
  exit 1
fi
echo "ok: scaffolded '$name' builds, passes its tests and the conformance suite, and verifies $verified tasks"
