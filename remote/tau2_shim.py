#!/usr/bin/env python3
"""Serve a tau2-style domain directory to Tracer over MCP (docs/remote-domains.md).

    python3 remote/tau2_shim.py --domain-dir DIR --db DB.json [--http PORT]

DIR holds the domain's own `data_model.py` (pydantic models and one `DB` subclass) and
`tools.py` (one `ToolKitBase` subclass whose tools are methods marked `@is_tool(...)`), as
in tau2-bench and ToolOrchestra; they are imported unchanged, as the package
`tau2.domains.<basename of DIR>` (`--name` overrides the basename). Nothing of tau2 is
needed: the modules they import from it (`tau2.environment.db`, `tau2.environment.toolkit`,
loguru) are small stand-ins written here; any other `tau2.*` module a domain imports is an
empty stand-in whose UPPER_CASE `*_PATH`/`*_DIR` names are empty paths. Needs pydantic (2.x).

What Tracer sees, following tau2's own Environment:
- tools/list: the toolkit's tools, the subclass's in definition order, then inherited ones.
  `readOnlyHint` is false for ToolType.WRITE only (READ, GENERIC and THINK tools are reads).
  The description is the docstring's first line, a blank line and the rest of its body
  (without the Args/Returns/Raises/... sections); inputSchema is the JSON schema pydantic
  builds from the signature (type hints; pydantic models give their own schema; a
  parameter with a default, e.g. `Optional[...] = None`, is not required), each parameter
  described by its docstring `Args:` entry, with `$defs` references inlined.
- tools/call: the method is called with the arguments as they come (JSON values, not
  models, exactly as tau2 passes them); the result is serialised as tau2's
  `Environment.to_json_str` does (models dumped, numbers and booleans as str, strings as
  they are); an exception is `isError: true` with the text `Error: <message>`.
- tracer/reset: the seed and the split are ignored: DB.json is the database (declare
  `separate_train_db = false` in domain.toml). `{"tables": ...}` validates the tables into
  the DB class (field names or aliases).
- tracer/state: the DB's `model_dump()` (field names, defaults filled in); tracer/fork a
  deep copy of the toolkit and its DB.
"""
import argparse
import copy
import enum
import importlib
import importlib.abc
import importlib.util
import inspect
import json
import os
import pathlib
import re
import sys
import types
import typing

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tracer_env  # noqa: E402

TOOL_ATTR, TOOL_TYPE_ATTR = "__tool__", "__tool_type__"
DOC_SECTIONS = ("Arguments", "Args", "Parameters", "Params", "Raises", "Exceptions", "Except",
                "Attributes", "Example", "Examples", "Returns", "Yields")
PARAM_SECTIONS = ("Arguments", "Args", "Parameters", "Params")


# ---------------------------------------------------------------- stand-ins for tau2

class ToolType(str, enum.Enum):
    READ = "read"
    WRITE = "write"
    THINK = "think"
    GENERIC = "generic"


def is_tool(tool_type=ToolType.READ):
    def mark(func):
        setattr(func, TOOL_ATTR, True)
        setattr(func, TOOL_TYPE_ATTR, tool_type)
        return func

    return mark


class ToolKitBase:
    def __init__(self, db=None):
        self.db = db

    @classmethod
    def tool_names(cls):
        """The marked methods: the class's own in definition order, then its bases'."""
        names = []
        for klass in cls.__mro__:
            for name, member in vars(klass).items():
                member = member.fget if isinstance(member, property) else member
                if hasattr(member, TOOL_ATTR) and name not in names:
                    names.append(name)
        return names

    @property
    def tools(self):
        return {name: getattr(self, name) for name in self.tool_names()}

    def has_tool(self, name):
        return name in self.tool_names()

    def tool_type(self, name):
        return getattr(getattr(self, name), TOOL_TYPE_ATTR)

    def use_tool(self, tool_name, **kwargs):
        if tool_name not in self.tool_names():
            raise ValueError(f"Tool '{tool_name}' not found.")
        return getattr(self, tool_name)(**kwargs)


class _Lenient(types.ModuleType):
    def __getattr__(self, name):
        if name.isupper() and name.endswith(("_PATH", "_DIR")):
            return pathlib.Path("")
        raise AttributeError(f"{self.__name__}.{name}: not available in tau2_shim's stand-in")


class _StandIns(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Every `tau2.*` module but the served domain's: an empty package of lenient constants
    (first on sys.meta_path, so an installed tau2 is never imported)."""

    def __init__(self, served):
        self.served = served + "."

    def find_spec(self, fullname, path=None, target=None):
        if (fullname == "tau2" or fullname.startswith("tau2.")) and not fullname.startswith(self.served):
            return importlib.util.spec_from_loader(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        mod = _Lenient(spec.name)
        mod.__path__ = []
        return mod

    def exec_module(self, module):
        pass


def install_stand_ins(served):
    from pydantic import BaseModel, ConfigDict

    class DB(BaseModel):
        model_config = ConfigDict(extra="forbid")

        @classmethod
        def load(cls, path):
            with open(path) as f:
                return cls.model_validate(json.load(f))

        def get_statistics(self):
            return {}

    class _Logger:
        def __getattr__(self, _name):
            return lambda *a, **k: None

    def module(name, **attrs):
        mod = types.ModuleType(name)
        mod.__dict__.update(attrs)
        sys.modules[name] = mod
        return mod

    module("loguru", logger=_Logger())
    module("tau2.environment.db", DB=DB)
    module("tau2.environment.toolkit", ToolKitBase=ToolKitBase, ToolType=ToolType, is_tool=is_tool,
           TOOL_ATTR=TOOL_ATTR, TOOL_TYPE_ATTR=TOOL_TYPE_ATTR)
    sys.meta_path.insert(0, _StandIns(served))
    for parent in ("tau2", "tau2.environment", "tau2.domains"):
        importlib.import_module(parent)
    return DB


def load_domain(domain_dir, name=None, db_class=None, toolkit=None):
    """Import DIR's data_model.py and tools.py as tau2.domains.<name>; return (DB class, toolkit class)."""
    domain_dir = os.path.abspath(domain_dir)
    name = name or os.path.basename(domain_dir.rstrip(os.sep))
    DB = install_stand_ins(f"tau2.domains.{name}")
    pkg = types.ModuleType(f"tau2.domains.{name}")
    pkg.__path__ = [domain_dir]
    sys.modules[pkg.__name__] = pkg
    dm = importlib.import_module(f"{pkg.__name__}.data_model")
    tm = importlib.import_module(f"{pkg.__name__}.tools")

    def pick(mod, base, wanted, what):
        found = [v for v in vars(mod).values()
                 if isinstance(v, type) and issubclass(v, base) and v is not base and v.__module__ == mod.__name__]
        if wanted:
            found = [v for v in found if v.__name__ == wanted]
        if len(found) != 1:
            raise SystemExit(f"{mod.__file__}: expected one {what} class{f' named {wanted}' if wanted else ''}, "
                             f"found {[v.__name__ for v in found]}")
        return found[0]

    return pick(dm, DB, db_class, "DB"), pick(tm, ToolKitBase, toolkit, "ToolKitBase")


# ---------------------------------------------------------------- tau2's tool descriptions

def parse_docstring(doc):
    """(short, long, {param: description}) the way docstring_parser reads Google style."""
    text = inspect.cleandoc(doc or "")
    header = re.compile(r"^(%s):[ \t\r\f\v]*$" % "|".join(DOC_SECTIONS), re.M)
    marks = list(header.finditer(text))
    desc = text[: marks[0].start()] if marks else text
    short, _, rest = desc.partition("\n")
    params = {}
    for i, m in enumerate(marks):
        if m.group(1) not in PARAM_SECTIONS:
            continue
        body = text[m.end(): marks[i + 1].start() if i + 1 < len(marks) else len(text)]
        lines = [ln for ln in body.split("\n")]
        indents = [len(ln) - len(ln.lstrip()) for ln in lines if ln.strip()]
        if not indents:
            continue
        items, base = [], min(indents)
        for ln in lines:
            if ln.strip() and len(ln) - len(ln.lstrip()) == base:
                items.append(ln[base:])
            elif items:
                items[-1] += "\n" + ln
        for item in items:
            before, colon, after = item.partition(":")
            if not colon:
                continue
            after = after[1:] if after.startswith(" ") else after
            if "\n" in after:
                first, more = after.split("\n", 1)
                after = first + "\n" + inspect.cleandoc(more)
            arg = before.strip().split(" ")[0].split("(")[0]
            params[arg] = after.strip("\n")
    return short.strip(), rest.strip(), params


def _inline_refs(schema):
    defs = schema.pop("$defs", {})
    recursive = []

    def walk(node, seen):
        if isinstance(node, list):
            return [walk(x, seen) for x in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] in defs:
            if ref[8:] in seen:
                recursive.append(ref)
                return node
            rest = {k: walk(v, seen) for k, v in node.items() if k != "$ref"}
            return {**walk(copy.deepcopy(defs[ref[8:]]), seen | {ref[8:]}), **rest}
        return {k: walk(v, seen) for k, v in node.items()}

    out = walk(schema, frozenset())
    if recursive:
        out["$defs"] = defs  # a recursive model keeps its definitions
    return out


def tool_spec(kit, name):
    """(description, inputSchema, read_only) of one tool, as tau2's Tool builds them."""
    from pydantic import Field, create_model

    method = getattr(kit, name)
    func = getattr(method, "__func__", method)
    short, long_desc, doc_params = parse_docstring(func.__doc__)
    description = (short + ("\n\n" + long_desc if long_desc else "")) if short else name
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except Exception:
        hints = {}
    fields, open_ended = {}, False
    for pname, param in inspect.signature(method).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            open_ended = open_ended or param.kind == param.VAR_KEYWORD
            continue
        anno = hints.get(pname, param.annotation)
        anno = typing.Any if anno is param.empty else anno
        default = ... if param.default is param.empty else param.default
        if pname in doc_params:
            default = Field(default, description=doc_params[pname])
        fields[pname] = (anno, default)
    try:
        schema = create_model("parameters", **fields).model_json_schema()
    except Exception as e:
        raise SystemExit(f"tool {name}: cannot build its JSON schema: {e}")
    schema.pop("title", None)
    schema = _inline_refs(schema)
    schema.setdefault("properties", {})
    schema.setdefault("required", [])
    if open_ended:
        schema["additionalProperties"] = True
    return description, schema, getattr(method, TOOL_TYPE_ATTR, ToolType.READ) != ToolType.WRITE


def to_json_str(resp):
    """tau2's Environment.to_json_str, re-implemented."""
    import datetime

    from pydantic import BaseModel

    def process(r):
        if isinstance(r, BaseModel):
            return r.model_dump()
        if isinstance(r, str) or r is None:
            return r
        if isinstance(r, (int, float, bool)):
            return str(r)
        if isinstance(r, (list, tuple)):
            return type(r)(process(x) for x in r)
        if isinstance(r, dict):
            return {k: process(v) for k, v in r.items()}
        if isinstance(r, (datetime.datetime, datetime.date)):
            return r.isoformat()
        return str(r)

    return resp if isinstance(resp, str) else json.dumps(process(resp), default=str)


# ---------------------------------------------------------------- the server

def _caller(tool):
    def call(kit, /, **arguments):
        return to_json_str(getattr(kit, tool)(**arguments))

    return call


def build_env(db_cls, kit_cls, db_text, name):
    def validate(tables):
        try:
            return db_cls.model_validate(tables, by_alias=True, by_name=True)
        except TypeError:  # pydantic < 2.11: aliases only
            return db_cls.model_validate(tables)

    # A reset loads db.json afresh, as tau2's DB.load does (faster than copying a model).
    fresh = lambda split, seed: kit_cls(db_cls.model_validate_json(db_text))  # noqa: E731
    env = tracer_env.Env(name, reset=fresh,
                         load=lambda tables: kit_cls(validate(tables)),
                         dump=lambda kit: kit.db.model_dump(), needs_seed=False)
    probe = fresh(None, None)
    for tool in kit_cls.tool_names():
        description, schema, read_only = tool_spec(probe, tool)

        env.add_tool(tracer_env.Tool(tool, description, schema, read_only, _caller(tool)))
    return env


def main(argv=None):
    ap = argparse.ArgumentParser(description="Serve a tau2-style domain directory to Tracer over MCP.")
    ap.add_argument("--domain-dir", required=True, help="folder with data_model.py and tools.py")
    ap.add_argument("--db", required=True, help="the database, db.json (tables at its top level)")
    ap.add_argument("--name", help="the domain's package name (default: the folder's name)")
    ap.add_argument("--db-class", help="the DB subclass, when data_model.py defines several")
    ap.add_argument("--toolkit", help="the ToolKitBase subclass, when tools.py defines several")
    ap.add_argument("--http", type=int, metavar="PORT", help="serve HTTP on 127.0.0.1:PORT/mcp instead of stdio")
    args = ap.parse_args(argv)
    real_stdout, sys.stdout = sys.stdout, sys.stderr  # domain modules may print while loading
    db_cls, kit_cls = load_domain(args.domain_dir, args.name, args.db_class, args.toolkit)
    with open(args.db) as f:
        db_text = f.read()
    name = args.name or os.path.basename(os.path.abspath(args.domain_dir).rstrip(os.sep))
    env = build_env(db_cls, kit_cls, db_text, name)
    sys.stdout = real_stdout
    tracer_env.log(f"{name}: {len(env.tools)} tools from {kit_cls.__name__}, database {args.db}")
    tracer_env.serve(env, args.http)


if __name__ == "__main__":
    main()
