#!/usr/bin/env python3
"""Precision and recall of `tracer analyze` against the oracle agent's injected mistakes.

The scripted oracle agent records, in each rollout row's `injected_mistakes` column, the
mistakes it made on purpose; the analysis never reads that column. This script joins the
two: per domain and injected kind, over the episodes the analysis covers (scored episodes
with reward below 1, or every scored one with `scope = "all"`), how many episodes carry the
fault label the mistake should produce (precision: of the labelled episodes, how many had
the mistake; recall: of the episodes with the mistake, how many were labelled).

Usage: scripts/analysis_precision.py [OUTPUT_DIR] [--all] [--json]
  --all: the analysis ran with `scope = "all"` (stages/analysis.toml): measure over every
         scored episode, successes included, instead of the failed ones.
"""
import json
import sys
from collections import defaultdict

import pyarrow.dataset as ds

# injected mistake -> (the fault labels that explain it, the detectors that should say so).
# A perturbed argument either runs or is refused by the tool (wrong_arguments) or breaks
# the tool's schema (schema_error, e.g. an enum value with a character appended): both are
# the taxonomy's "wrong tool call".
EXPECTED = {
    "skip_confirmation": ({"policy_breach"}, {"confirmation"}),
    "redundant_question": ({"friction"}, {"reverification"}),
    "wrong_argument": ({"wrong_arguments", "schema_error"}, {"alignment", "schema"}),
    "premature_transfer": ({"wrong_transfer"}, {"transfer"}),
}


def table(path):
    # Only the part files: side files (report.json, _manifest.json) are not data.
    return ds.dataset(path, format="parquet", partitioning="hive",
                      exclude_invalid_files=True).to_table().to_pylist()


def measure(out, all_scored=False):
    faults = defaultdict(set)  # (source, domain, task, trial) -> {(fault, detector)}
    analysed = set()
    for r in table(out + "/analysis"):
        key = (r["source"], r["domain"], r["task_id"], r["trial"])
        analysed.add(key)
        faults[key].add((r["fault"], r["detector"]))
    injected = {}
    population = set()
    for source in ("rollouts", "eval"):
        for r in table(f"{out}/{source}"):
            key = (source, r["domain"], r["task_id"], r["trial"])
            injected[key] = set(json.loads(r["injected_mistakes"] or "[]"))
            scored = r["termination"] != "endpoint_error"
            if scored and (all_scored or r["reward"] < 1):
                population.add(key)
    stray = analysed - population
    assert not stray, f"{len(stray)} analysed episodes outside the population (wrong --all?)"
    result = {}
    domains = sorted({k[1] for k in population})
    for domain in domains + ["all"]:
        keys = [k for k in population if domain in ("all", k[1])]
        for kind, (labels, detectors) in EXPECTED.items():
            # By label: any decider; by detector: only the detector meant for the mistake.
            def hit(k):
                return any(f in labels for f, _ in faults[k])

            def hit_by_detector(k):
                return any(f in labels and d in detectors for f, d in faults[k])

            tp = sum(1 for k in keys if kind in injected[k] and hit(k))
            fp = sum(1 for k in keys if kind not in injected[k] and hit(k))
            fn = sum(1 for k in keys if kind in injected[k] and not hit(k))
            dfp = sum(1 for k in keys if kind not in injected[k] and hit_by_detector(k))
            dtp = sum(1 for k in keys if kind in injected[k] and hit_by_detector(k))
            result[(domain, kind)] = {
                "label": "/".join(sorted(labels)),
                "detector_precision": dtp / (dtp + dfp) if dtp + dfp else None,
                "episodes": len(keys),
                "injected": tp + fn,
                "labelled": tp + fp,
                "tp": tp,
                "precision": tp / (tp + fp) if tp + fp else None,
                "recall": tp / (tp + fn) if tp + fn else None,
            }
    return result


def pct(x):
    return "-" if x is None else f"{100 * x:.1f}%"


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    out = args[0] if args else "output"
    result = measure(out, "--all" in sys.argv)
    if "--json" in sys.argv:
        print(json.dumps({f"{d}/{k}": v for (d, k), v in result.items()}, indent=1))
        return
    print("| domain | injected mistake | expected label | episodes | with the mistake | labelled | precision | recall | precision (its detector only) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (domain, kind), v in result.items():
        n = v["episodes"]
        print(f"| {domain} | {kind} | {v['label']} | {n} | {v['injected']} ({pct(v['injected'] / n if n else None)}) | "
              f"{v['labelled']} ({pct(v['labelled'] / n if n else None)}) | {pct(v['precision'])} | "
              f"{pct(v['recall'])} | {pct(v['detector_precision'])} |")


if __name__ == "__main__":
    main()
