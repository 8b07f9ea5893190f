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
cancellation date; bank's `datetime.utcnow()` stamps, for the tau2 family).

Families (--family):
  tau      tau-bench / tau-emotion-bench: <repo>/<package>/envs/<domain>/tools/ with
           `Tool.invoke(data, **kwargs) -> str`; exceptions become "Error: <e>" as the
           reference environment's `step` does.
  tau2     ToolOrchestra's tau2-style domains: <repo>/evaluation/tau2-bench/tau2/domains/
           <domain>/{tools.py,data_model.py}; the toolkit class is the one ToolKitBase
           subclass in tools.py, its database the one DB subclass in data_model.py,
           built from the data directory's tables (one <table>.json per top-level key of
           db.json). Results are serialised as tau2's Environment.to_json_str does (our
           re-implementation, below); exceptions become "Error: <e>". Needs pydantic.

The reference's package root is stubbed (its __init__ pulls in LLM clients); only the
domain's tool modules and, for tau, `envs/tool.py` / `types.py`, for tau2, tools.py and
data_model.py, are real. The tau2 toolkit, DB base and loguru are small stand-ins written
here with the behaviour the domain modules rely on (tool marking, `self.db`).
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
        def utcnow(cls):
            return cls(y, m, d, 9, 0, 0)

        @classmethod
        def today(cls):
            return cls(y, m, d, 9, 0, 0)

    proxy = types.ModuleType("datetime")
    proxy.__dict__.update(real.__dict__)
    proxy.datetime = Frozen
    modules = [sys.modules[tool.__module__] for tool in tools.values()]
    for mod in modules:
        value = getattr(mod, "datetime", None)
        if value is real.datetime:
            mod.datetime = Frozen
        elif value is real:
            mod.datetime = proxy


def tau2_stubs():
    """Stand-ins for the tau2 modules a domain's tools.py/data_model.py import."""
    import enum

    from pydantic import BaseModel, ConfigDict

    loguru = types.ModuleType("loguru")

    class _Logger:
        def __getattr__(self, _name):
            return lambda *a, **k: None

    loguru.logger = _Logger()
    sys.modules["loguru"] = loguru
    for name in ("tau2", "tau2.environment", "tau2.domains", "tau2.utils"):
        _stub_package(name)

    class DB(BaseModel):
        model_config = ConfigDict(extra="forbid")

    db_mod = types.ModuleType("tau2.environment.db")
    db_mod.DB = DB
    sys.modules["tau2.environment.db"] = db_mod

    class ToolType(str, enum.Enum):
        READ = "read"
        WRITE = "write"
        THINK = "think"
        GENERIC = "generic"

    def is_tool(tool_type=ToolType.READ):
        def mark(func):
            func.__tracer_tool__ = tool_type
            return func

        return mark

    class ToolKitBase:
        def __init__(self, db=None):
            self.db = db

        def tool_names(self):
            names = {}
            for klass in reversed(type(self).__mro__):
                for name, member in vars(klass).items():
                    if hasattr(member, "__tracer_tool__"):
                        names[name] = member.__tracer_tool__
            return names

    # Restaurant's data_model.py imports a path constant from the retail domain's utils
    # (unused); a stand-in keeps the import from reaching the real tau2 package.
    retail_utils = types.ModuleType("tau2.domains.retail.utils")
    retail_utils.RETAIL_DB_PATH = ""
    _stub_package("tau2.domains.retail")
    sys.modules["tau2.domains.retail.utils"] = retail_utils

    tk = types.ModuleType("tau2.environment.toolkit")
    tk.ToolKitBase, tk.ToolType, tk.is_tool = ToolKitBase, ToolType, is_tool
    sys.modules["tau2.environment.toolkit"] = tk
    return DB, ToolKitBase


def tau2_toolkit(repo, domain):
    DB, ToolKitBase = tau2_stubs()
    ddir = os.path.join(repo, "evaluation", "tau2-bench", "tau2", "domains", domain)
    _stub_package(f"tau2.domains.{domain}", ddir)
    dm = _load_module(f"tau2.domains.{domain}.data_model", os.path.join(ddir, "data_model.py"))
    tm = _load_module(f"tau2.domains.{domain}.tools", os.path.join(ddir, "tools.py"))
    db_cls = [v for v in vars(dm).values() if isinstance(v, type) and issubclass(v, DB) and v is not DB]
    kit_cls = [
        v for v in vars(tm).values()
        if isinstance(v, type) and issubclass(v, ToolKitBase) and v is not ToolKitBase
    ]
    if len(db_cls) != 1 or len(kit_cls) != 1:
        sys.exit(f"{ddir}: expected one DB and one toolkit class, found {db_cls} / {kit_cls}")
    return db_cls[0], kit_cls[0]


def tau2_json_str(resp):
    """tau2's Environment.to_json_str, re-implemented: models are dumped as they are;
    plain ints, floats and bools become their str(); strings pass through."""
    from pydantic import BaseModel

    def process(r):
        if isinstance(r, BaseModel):
            return r.model_dump()
        if isinstance(r, str) or r is None:
            return r
        if isinstance(r, (int, float, bool)):
            return str(r)
        if isinstance(r, list):
            return [process(x) for x in r]
        if isinstance(r, tuple):
            return tuple(process(x) for x in r)
        if isinstance(r, dict):
            return {k: process(v) for k, v in r.items()}
        return str(r)

    if isinstance(resp, str):
        return resp
    return json.dumps(process(resp), default=str)


def tau2_validate(db_cls, raw):
    """Build the pydantic DB from tables in model_dump form. Field aliases (school's
    `date-of-birth`) are what the reference's own db.json uses, but model_dump writes field
    names, so names are accepted too (pydantic >= 2.11; older versions need the aliases)."""
    try:
        return db_cls.model_validate(copy.deepcopy(raw), by_alias=True, by_name=True)
    except TypeError:
        return db_cls.model_validate(copy.deepcopy(raw))


def record_tau2(args):
    db_cls, kit_cls = tau2_toolkit(args.repo, args.domain)
    if args.today:
        # bank's tools stamp datetime.utcnow(); freeze it like tau's datetime.now().
        freeze_today({"toolkit": kit_cls}, args.today)
    raw = load_data(args.data)
    # Rows are compared in model_dump form (field names, defaults filled in), which is
    # what tau2 hashes and what our export writes.
    base = json.loads(json.dumps(tau2_validate(db_cls, raw).model_dump(), default=str))
    n = 0
    with open(args.calls) as src, open(args.out, "w") as dst:
        for line in src:
            seq = json.loads(line)
            db = tau2_validate(db_cls, raw)
            kit = kit_cls(db)
            names = kit.tool_names()
            outputs = []
            for call in seq:
                if call["name"] not in names:
                    outputs.append(f"Error: Tool '{call['name']}' not found.")
                    continue
                try:
                    out = tau2_json_str(getattr(kit, call["name"])(**call["kwargs"]))
                except Exception as e:  # the tau2 environment's own wrapping
                    out = f"Error: {e}"
                outputs.append(out)
            after = json.loads(json.dumps(db.model_dump(), default=str))
            dst.write(json.dumps({"outputs": outputs, "changed": changed(base, after)}) + "\n")
            n += 1
    print(f"recorded {n} sequences -> {args.out}", file=sys.stderr)


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
    if args.family == "tau2":
        return record_tau2(args)
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
