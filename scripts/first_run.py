#!/usr/bin/env python3
"""A newcomer's first run, measured: a fresh clone of this checkout's HEAD, a clean
`cargo build --timings`, then the whole offline pipeline (`tracer run trajectories`) with a
cold emotion cache. Prints Markdown: the build's longest crates and its total, and the
pipeline's wall time per stage (summed over domains).

    python3 scripts/first_run.py [--keep DIR]

The encoder model is taken from this checkout's `.cache/models` (`make model` fetches it;
fetching is network time, not measured here). Needs about 30 minutes on 2 cores; run it on
an otherwise idle machine, since the figures are wall times.
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd, cwd, env=None, log=None):
    started = time.time()
    with open(log, "w") if log else open(os.devnull, "w") as out:
        subprocess.run(cmd, cwd=cwd, env=env, check=True, stdout=out, stderr=subprocess.STDOUT)
    return time.time() - started


def build_units(target):
    """(crate, seconds) of every compiled unit, from cargo's timing report."""
    reports = sorted(
        os.path.join(target, "cargo-timings", f)
        for f in os.listdir(os.path.join(target, "cargo-timings"))
        if f.startswith("cargo-timing-") and f.endswith(".html")
    )
    text = open(reports[-1]).read()
    units = json.loads(re.search(r"const UNIT_DATA = (\[.*?\]);\n", text, re.S).group(1))
    totals = collections.Counter()
    for u in units:
        totals[u["name"]] += u["duration"]
    return totals


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keep", help="clone into this directory and keep it")
    args = ap.parse_args()
    work = args.keep or tempfile.mkdtemp(prefix="tracer-first-run-")
    clone = os.path.join(work, "tracer")
    if os.path.exists(clone):
        shutil.rmtree(clone)
    subprocess.run(["git", "clone", "--quiet", ROOT, clone], check=True)
    env = dict(os.environ)
    env.pop("CARGO_TARGET_DIR", None)
    env["TRACER_EMBED_MODEL"] = os.path.join(ROOT, ".cache/models/all-MiniLM-L6-v2")
    env["TRACER_EMOTION_CACHE"] = os.path.join(work, "emotion-cache")
    env["TRACER_OUTPUT"] = os.path.join(work, "output")
    build_s = run(["cargo", "build", "--timings", "--bin", "tracer"], clone, env, os.path.join(work, "build.log"))
    units = build_units(os.path.join(clone, "target"))
    log = os.path.join(work, "run.log")
    run_s = run(["/usr/bin/time", "-v", os.path.join(clone, "target/debug/tracer"), "run", "trajectories"], clone, env, log)
    stages = collections.OrderedDict()
    peak = None
    for line in open(log):
        m = re.match(r"\s*ran\s+(\S+)\s+(\S+)\s.*\(([\d.]+)s\)\s*$", line)
        if m:
            stages[m.group(1)] = stages.get(m.group(1), 0.0) + float(m.group(3))
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", line)
        if m:
            peak = int(m.group(1)) / 1024
    cpu = sum(units.values())
    print(f"Fresh clone of {subprocess.check_output(['git', 'rev-parse', '--short', 'HEAD'], cwd=ROOT, text=True).strip()}, {os.cpu_count()} cores.\n")
    print(f"**Build** (`cargo build`, dev profile): {build_s / 60:.1f} min wall, {cpu / 60:.1f} CPU-min over {len(units)} crates; the longest:\n")
    print("| crate | seconds |\n|---|---|")
    for name, s in units.most_common(12):
        print(f"| {name} | {s:.0f} |")
    print(f"\n**Pipeline** (`tracer run trajectories`, cold emotion cache): {run_s / 60:.1f} min wall"
          + (f", peak memory {peak:.0f} MB" if peak else "") + ":\n")
    print("| stage | seconds (all domains) |\n|---|---|")
    for name, s in stages.items():
        print(f"| {name} | {s:.1f} |")
    print(f"\n**First run** (build + pipeline): {(build_s + run_s) / 60:.1f} min.")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
