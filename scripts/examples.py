#!/usr/bin/env python3
"""Print docs/examples.md from a run's output: for each emotion family, one task of a domain
(instruction, condition, emotion instruction) and the start of its kept trajectory.

    python3 scripts/examples.py OUTPUT_DIR > docs/examples.md

OUTPUT_DIR is what `make trajectories` wrote (`output/` by default). The choice is fixed
(a domain per family, the first kept trajectory of that family by task id), so the page
changes only when the data does.
"""
import json
import sys
import textwrap
from pathlib import Path

import pyarrow.parquet as pq

# One domain per emotion family, so the page shows five of the ten.
FAMILIES = [
    ("anger", "airline"),
    ("fear", "bank"),
    ("disgust", "retail"),
    ("sadness", "telehealth"),
    ("enjoyment", "travel"),
]
EXCERPT_MESSAGES = 10
WIDTH = 92


def wrap(label, text):
    lines = textwrap.wrap(" ".join(str(text).split()), WIDTH - 13) or [""]
    out = [f"{label:<12} {lines[0]}"]
    out += [" " * 13 + line for line in lines[1:]]
    return "\n".join(out)


def message_text(m):
    if m.get("tool_calls"):
        calls = []
        for c in m["tool_calls"]:
            f = c["function"]
            calls.append(f"{f['name']}({f['arguments']})")
        return "; ".join(calls)
    text = m.get("content") or ""
    if m["role"] == "tool" and len(text) > 160:
        text = text[:160] + " ..."
    return text


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: scripts/examples.py OUTPUT_DIR")
    out = Path(sys.argv[1])
    print("# Examples\n")
    print(
        "Written by `python3 scripts/examples.py output > docs/examples.md` after `make\n"
        "trajectories` (all ten domains, the offline scripted roles: the instruction is the\n"
        "scripted refiner's, the emotion instruction an anchor the mapper chose for the\n"
        "scripted feeler's description, the conversation the oracle agent's with the scripted\n"
        "user). One task per emotion family, each from another domain, and the first\n"
        f"{EXCERPT_MESSAGES} messages of its kept trajectory after the policy (tool outputs\n"
        "shortened).\n"
    )
    print(
        "**Before** (the offline roles when issue 23 was filed, as measured then): tasks were\n"
        "chains of \"Then you want ...\" sentences, \"Then you also want the same again\" in 13%\n"
        "of them; a food order's emotion instruction said \"This trip was meant for someone\n"
        "who's no longer with us\"; a quarter of emotion instructions were first-person\n"
        "lines (\"I have had it. Enough is enough. Yes. Next.\"); the simulated user showed its\n"
        "emotion by one of seven prefixes (\"Look,\", \"Honestly,\") and 97.5% of\n"
        "conversations ended \"That's everything I needed, thank you. ###STOP###\", cold and\n"
        "skeptical users included. **Now**, from the run this page was written from:\n"
    )
    for family, domain in FAMILIES:
        tasks_path = out / "tasks" / f"domain={domain}" / "part-00000.parquet"
        rows_path = out / "trajectories" / f"domain={domain}" / "part-00000.parquet"
        for p in (tasks_path, rows_path):
            if not p.exists():
                sys.exit(f"error: {p}: missing; run `make trajectories` first")
        tasks = {t["task_id"]: t for t in pq.read_table(tasks_path).to_pylist()}
        rows = [
            r
            for r in pq.read_table(rows_path).to_pylist()
            if r["emotion_family"] == family and r["reward"] == 1
        ]
        if not rows:
            print(f"## {family} ({domain})\n\nno kept trajectory of this family\n")
            continue
        row = min(rows, key=lambda r: (r["task_id"], r["trial"]))
        task = tasks[row["task_id"]]
        print(f"## {family.capitalize()}: {domain}, task `{row['task_id']}`\n")
        print("```")
        print(wrap("instruction", task["instruction"]))
        print(
            wrap(
                "condition",
                f"{task['emotion_family']} / {task['emotion']}, politeness "
                f"{task['politeness']}, urgency {task['urgency']}, trust {task['trust']}",
            )
        )
        print(wrap("emotion", task["emotion_instruction"]))
        print()
        messages = row["messages"]
        if isinstance(messages, str):
            messages = json.loads(messages)
        shown = [m for m in messages if m["role"] != "system"][:EXCERPT_MESSAGES]
        for m in shown:
            print(wrap(m["role"], message_text(m)))
        print("...")
        print("```\n")


if __name__ == "__main__":
    main()
