#!/usr/bin/env bash
# Compare two artifact roots file by file (Parquet, JSONL, JSON reports): prints every file
# that differs or exists on one side only, exits 1 if any. Used to check that a refactor
# leaves artifacts byte-identical:
#   TRACER_OUTPUT=/tmp/a <old tracer> run trajectories; TRACER_OUTPUT=/tmp/b <new tracer> run trajectories
#   scripts/same_artifacts.sh /tmp/a /tmp/b
set -euo pipefail
a=$1 b=$2 status=0
files=$( (cd "$a" && find . -type f \( -name '*.parquet' -o -name '*.jsonl' -o -name 'report.json' \); \
          cd "$b" && find . -type f \( -name '*.parquet' -o -name '*.jsonl' -o -name 'report.json' \)) | sort -u)
for f in $files; do
  if [ ! -f "$a/$f" ] || [ ! -f "$b/$f" ]; then echo "only one side: $f"; status=1; continue; fi
  cmp -s "$a/$f" "$b/$f" || { echo "differs: $f"; status=1; }
done
[ $status = 0 ] && echo "identical: $(echo "$files" | wc -l) files"
exit $status
