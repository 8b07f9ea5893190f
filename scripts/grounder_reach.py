#!/usr/bin/env python3
"""How many grounded tasks the LLM grounder could not have grounded as it is built: it is shown
only the customer's id and may call only the trace's planned tools, so a task whose first call
needs any other value (a reservation number, an email address, a card) is out of its reach.

Usage: python3 scripts/grounder_reach.py [OUTPUT_DIR]   (default: output/, after `make tasks`)
Prints one Markdown row per domain: grounded tasks, tasks whose first call needs a value other
than the customer id, and the share.
"""
import json
import pathlib
import sys

import pyarrow.parquet as pq

out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "output")
print("| domain | grounded tasks | first call needs a value other than the customer id | share |")
print("|---|---|---|---|")
for part in sorted(out.glob("grounded/domain=*/part-00000.parquet")):
    domain = part.parent.name.split("=", 1)[1]
    rows = pq.read_table(part, columns=["user_id", "actions"]).to_pylist()
    need = 0
    for r in rows:
        first = json.loads(r["actions"])[0]["kwargs"]
        if any(isinstance(v, str) and v != r["user_id"] for v in first.values()):
            need += 1
    share = f"{100 * need / len(rows):.0f}%" if rows else "-"
    print(f"| {domain} | {len(rows)} | {need} | {share} |")
