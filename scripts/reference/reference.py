#!/usr/bin/env python3
"""Run a public reference environment's own Python tools, for Tracer's differential tests.

Our code, written for Tracer; it imports the reference's tool modules from a checkout you
supply and never copies them. Two subcommands:

  record   run call sequences (from `tracer reference calls`) through the reference tools
           on a database directory (from `tracer export db`), one fresh copy per sequence,
           and write one JSON line per sequence: {"outputs": [...], "changed": {table:
           {id: row | null}}}.
  tasks    convert a tau-emotion-bench task module (tasks_<split>.py) to a JSON task file
           that `tracer replay` / `tracer rollout` read.

`record --today YYYY-MM-DD` freezes the reference tools' `datetime.now()` to that day, for
tools that stamp the wall clock where Tracer stamps its simulation clock (telehealth's
cancellation date).

Families (--family):
  tau      tau-bench / tau-emotion-bench: <repo>/<package>/envs/<domain>/tools/ with
           `Tool.invoke(data, **kwargs) -> str`; exceptions become "Error: <e>" as the
           reference environment's `step` does.

The reference's package root is stubbed (its __init__ pulls in LLM clients); only the
domain's tool modules and `envs/tool.py` / `types.py` are real.
"""
import argparse
import copy
import importlib.util
import json
import os
import sys
import types


def _stub_package(name, path=None):
    mod = types.ModuleType(name)
    mod.__path__ = [path] if path else []
    sys.modules[name] = mod
    return mod


def _load_module(name, file):
    spec = importlib.util.spec_from_file_location(name, file, submodule_search_locations=None)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _load_package(name, directory):
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(directory, "__init__.py"), submodule_search_locations=[directory]
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def tau_package(repo):
    """Stub the reference's package root; return (package name, its directory)."""
    for pkg in ("tau_emotion_bench", "tau_bench"):
        root = os.path.join(repo, pkg)
        if os.path.isdir(root):
            _stub_package(pkg, root)
            _stub_package(f"{pkg}.envs", os.path.join(root, "envs"))
            _load_module(f"{pkg}.envs.tool", os.path.join(root, "envs", "tool.py"))
            _load_module(f"{pkg}.types", os.path.join(root, "types.py"))
            return pkg, root
    sys.exit(f"{repo}: neither tau_emotion_bench/ nor tau_bench/ found")


def tau_tools(repo, domain):
    pkg, root = tau_package(repo)
    ddir = os.path.join(root, "envs", domain)
    _stub_package(f"{pkg}.envs.{domain}", ddir)
    tools = _load_package(f"{pkg}.envs.{domain}.tools", os.path.join(ddir, "tools"))
    return {t.get_info()["function"]["name"]: t for t in tools.ALL_TOOLS}


def freeze_today(tools, today):
    """Make the tools' wall clock read `today` (YYYY-MM-DD, 09:00): where a reference tool
    stamps `datetime.now()`, Tracer stamps its simulation clock, and the recording should
    compare everything else."""
    import datetime as real

    y, m, d = (int(x) for x in today.split("-"))

    class Frozen(real.datetime):
        @classmethod
        def now(cls, tz=None):
            return cls(y, m, d, 9, 0, 0, tzinfo=tz)

        @classmethod
        def today(cls):
            return cls(y, m, d, 9, 0, 0)

    proxy = types.ModuleType("datetime")
    proxy.__dict__.update(real.__dict__)
    proxy.datetime = Frozen
    for tool in tools.values():
        mod = sys.modules[tool.__module__]
        value = getattr(mod, "datetime", None)
        if value is real.datetime:
            mod.datetime = Frozen
        elif value is real:
            mod.datetime = proxy


def load_data(directory):
    data = {}
    for name in sorted(os.listdir(directory)):
        if name.endswith(".json"):
            with open(os.path.join(directory, name)) as f:
                data[name[: -len(".json")]] = json.load(f)
    if not data:
        sys.exit(f"{directory}: no *.json tables")
    return data


def changed(before, after):
    out = {}
    for table, now in after.items():
        was = before.get(table)
        rows = {}
        if isinstance(was, dict) and isinstance(now, dict):
            for k, v in now.items():
                if k not in was or was[k] != v:
                    rows[k] = v
            for k in was:
                if k not in now:
                    rows[k] = None
        elif was != now:
            rows["*"] = now
        if rows:
            out[table] = rows
    return out


def record(args):
    if args.family != "tau":
        sys.exit(f"unknown family {args.family}")
    tools = tau_tools(args.repo, args.domain)
    if args.today:
        freeze_today(tools, args.today)
    base = load_data(args.data)
    n = 0
    with open(args.calls) as src, open(args.out, "w") as dst:
        for line in src:
            seq = json.loads(line)
            data = copy.deepcopy(base)
            outputs = []
            for call in seq:
                tool = tools.get(call["name"])
                if tool is None:
                    outputs.append(f"Unknown action {call['name']}")
                    continue
                try:
                    out = tool.invoke(data=data, **call["kwargs"])
                except Exception as e:  # the reference environment's own wrapping
                    out = f"Error: {e}"
                outputs.append(out if isinstance(out, str) else str(out))
            dst.write(json.dumps({"outputs": outputs, "changed": changed(base, data)}) + "\n")
            n += 1
    print(f"recorded {n} sequences -> {args.out}", file=sys.stderr)


def convert_tasks(args):
    pkg, root = tau_package(args.repo)
    ddir = os.path.join(root, "envs", args.domain)
    _stub_package(f"{pkg}.envs.{args.domain}", ddir)
    mod = _load_module(
        f"{pkg}.envs.{args.domain}.tasks_{args.split}",
        os.path.join(ddir, f"tasks_{args.split}.py"),
    )
    tasks = getattr(mod, "TASKS", None) or getattr(mod, "TASKS_TEST", None)
    if tasks is None:
        sys.exit(f"tasks_{args.split}.py defines no TASKS")
    out = [t.model_dump() if hasattr(t, "model_dump") else t.dict() for t in tasks]
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    print(f"converted {len(out)} tasks -> {args.out}", file=sys.stderr)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("--family", default="tau")
    r.add_argument("--repo", required=True, help="checkout of the reference repository")
    r.add_argument("--domain", required=True)
    r.add_argument("--data", required=True, help="database directory (reference format)")
    r.add_argument("--calls", required=True, help="JSON lines from `tracer reference calls`")
    r.add_argument("--out", required=True)
    r.add_argument("--today", help="freeze the tools' wall clock to this date (YYYY-MM-DD)")
    r.set_defaults(func=record)
    t = sub.add_parser("tasks")
    t.add_argument("--repo", required=True)
    t.add_argument("--domain", required=True)
    t.add_argument("--split", required=True, help="test, train, test_no_emotion, ...")
    t.add_argument("--out", required=True)
    t.set_defaults(func=convert_tasks)
    args = p.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
