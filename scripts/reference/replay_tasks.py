#!/usr/bin/env python3
"""Replay a task file's gold actions through a reference environment's own Python tools.

Our code, written for Tracer (it reuses reference.py's loader; no reference code is copied).
Each task starts from a fresh copy of the database directory; the output is a JSON list with
one entry per task: {"split", "index", "actions", "outputs", "changed"} where `changed` is
table -> id -> row for every row the task changed (list tables under "*"). Tracer's opt-in
gold-replay tests compare their own replay of the same tasks with this file.

  python3 scripts/reference/replay_tasks.py --repo /tmp/ref-teb --domain telehealth \\
      --data /tmp/ref-teb/tau_emotion_bench/envs/telehealth/data \\
      --tasks test=/tmp/telehealth_test.json --tasks train=/tmp/telehealth_train.json \\
      --today 2025-12-01 --out /tmp/telehealth_replay.json

--today freezes the tools' wall clock (see reference.py), so a cancellation is stamped with
the same day as Tracer's simulation clock.
"""
import argparse
import copy
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference  # noqa: E402  (our helper module next to this file)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repo", required=True, help="checkout of the reference repository")
    p.add_argument("--domain", required=True)
    p.add_argument("--data", required=True, help="the reference's data directory")
    p.add_argument("--tasks", action="append", required=True, help="split=FILE.json (repeatable)")
    p.add_argument("--today", help="freeze the tools' wall clock to this date (YYYY-MM-DD)")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    tools = reference.tau_tools(args.repo, args.domain)
    if args.today:
        reference.freeze_today(tools, args.today)
    base = reference.load_data(args.data)
    out = []
    for spec in args.tasks:
        split, path = spec.split("=", 1)
        with open(path) as f:
            tasks = json.load(f)
        for index, task in enumerate(tasks):
            data = copy.deepcopy(base)
            outputs = []
            for action in task["actions"]:
                tool = tools.get(action["name"])
                if tool is None:
                    outputs.append(f"Unknown action {action['name']}")
                    continue
                try:
                    result = tool.invoke(data=data, **action["kwargs"])
                except Exception as e:  # the reference environment's own wrapping
                    result = f"Error: {e}"
                outputs.append(result if isinstance(result, str) else str(result))
            out.append({
                "split": split,
                "index": index,
                "actions": task["actions"],
                "outputs": outputs,
                "changed": reference.changed(base, data),
            })
    with open(args.out, "w") as f:
        json.dump(out, f)
    print(f"replayed {len(out)} tasks -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
