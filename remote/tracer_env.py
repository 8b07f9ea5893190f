"""Serve a Tracer remote domain: MCP's tools/list and tools/call plus Tracer's control calls.

Our own code, standard library only. The protocol is docs/remote-domains.md: JSON-RPC 2.0,
one request per line on stdin and one answer per line on stdout (the default), or the body
of a POST to http://127.0.0.1:PORT/mcp (`--http PORT`; loopback only, port 0 picks one and
the address is logged). Stdout carries protocol lines only: anything else a domain prints
goes to stderr, which is the server's log. Over stdio the server exits when stdin closes;
over HTTP it runs until stopped (SIGINT, SIGTERM), calls from any connection one at a time.
Notifications get no answer (HTTP: 202); JSON-RPC errors are for the caller's mistakes
(unknown method, session or tool; bad params; arguments the inputSchema rejects by name).

A domain is an `Env`: its tools, and how a session's state is made (`reset(split, seed)`),
rebuilt from tables (`load(tables)`), shown as tables (`dump(state)`) and copied (`fork`).
The defaults suit a state that is its own tables (a dict of table name -> rows):

    env = Env("pharmacy", reset=generate)

    @env.tool(read_only=True, description="...", args={"email": string("Their email.")})
    def find_patient_id_by_email(db, email):
        ...                # return a str (sent as it is) or JSON data (sent sorted)
                           # raise to fail: the agent sees "Error: <message>"
    main(env)           # stdio, or --http PORT

Sessions are copy on write: a fork shares its source's database until one of them writes.
A state that is a dict of tables the domain dumps as it is (the default `dump`) is shared
table by table and row by row, and watched: a write tool's call copies each row it reaches
before the tool sees it, and the rows that then differ are the call's changes, so
tracer/state answers `since` a version with only those rows ("Incremental state" in the
docs). A read tool sees the tables as they are and must not change them. Any other state is
copied whole by `fork` at its first write, and answered `since` a version by comparing dumps.
"""
import argparse
import copy
import os
import time
import pickle
import http.server
import json
import sys
import threading
import urllib.parse

PROTOCOL_VERSION = "2025-06-18"
PARSE_ERROR, INVALID_REQUEST, NO_METHOD, INVALID_PARAMS, INTERNAL = -32700, -32600, -32601, -32602, -32603


class RpcError(Exception):
    """An infrastructure failure, answered as a JSON-RPC error (never shown to the agent)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def log(*parts):
    print("tracer_env:", *parts, file=sys.stderr, flush=True)


def string(description=None, enum=None):
    return _prop("string", description, enum)


def integer(description=None):
    return _prop("integer", description)


def number(description=None):
    return _prop("number", description)


def _prop(kind, description, enum=None):
    schema = {"type": kind}
    if description:
        schema["description"] = description
    if enum:
        schema["enum"] = list(enum)
    return schema


class Tool:
    def __init__(self, name, description, input_schema, read_only, fn):
        self.name, self.description, self.read_only, self.fn = name, description, read_only, fn
        self.input_schema = input_schema

    def listing(self):
        return {"name": self.name, "description": self.description, "inputSchema": self.input_schema,
                "annotations": {"readOnlyHint": bool(self.read_only)}}


def _dump_as_is(state):
    return state


def _tables_are_state(tables):
    return copy.deepcopy(tables)


def _copy(state):
    """A deep copy: pickle's round trip (several times faster than deepcopy on plain data),
    deepcopy for what pickle refuses."""
    try:
        return pickle.loads(pickle.dumps(state, pickle.HIGHEST_PROTOCOL))
    except Exception:
        return copy.deepcopy(state)


_MISSING = object()  # a row or table that was not there


def _copy_value(v):
    """A deep copy of JSON-like data (dicts, lists, scalars), several times faster than
    pickle's round trip; anything else goes through `_copy`."""
    t = type(v)
    if t is dict:
        return {k: _copy_value(x) for k, x in v.items()}
    if t is list:
        return [_copy_value(x) for x in v]
    if t in (str, int, float, bool) or v is None:
        return v
    return _copy(v)


class _Rows(dict):
    """One table of a `_Tables` state: rows keyed by id. During a write tool's call every row
    the tool reaches is replaced by a fresh copy before the tool sees it, and the row it
    replaced is kept in the call's record: rows are never changed in place once a call is
    over, so tables forked from each other share the rows neither has written, and what a
    call changed is found by comparing each reached row with the one it replaced."""

    __slots__ = ("_state", "_name")

    def __init__(self, rows, state, name):
        super().__init__(dict.items(rows))
        self._state, self._name = state, name

    def _reach(self, key):
        """The row under `key` as a write may change it (its copy for this call)."""
        call = self._state._call
        if call is None:
            return dict.__getitem__(self, key)
        mark = (self._name, key)
        if mark in call.rows:
            return dict.__getitem__(self, key)
        old = dict.__getitem__(self, key)
        call.rows[mark] = old
        new = _copy_value(old)
        dict.__setitem__(self, key, new)
        return new

    def _will_change(self, key):
        call = self._state._call
        if call is not None:
            call.rows.setdefault((self._name, key), dict.get(self, key, _MISSING))

    def _reach_all(self):
        if self._state._call is not None:
            for key in list(dict.keys(self)):
                self._reach(key)

    def __getitem__(self, key):
        return self._reach(key)

    def get(self, key, default=None):
        return self._reach(key) if dict.__contains__(self, key) else default

    def __setitem__(self, key, value):
        self._will_change(key)
        dict.__setitem__(self, key, value)

    def __delitem__(self, key):
        self._will_change(key)
        dict.__delitem__(self, key)

    def pop(self, key, *default):
        if dict.__contains__(self, key):
            self._will_change(key)
        return dict.pop(self, key, *default)

    def popitem(self):
        if dict.__len__(self):
            self._will_change(next(reversed(dict.keys(self))))
        return dict.popitem(self)

    def setdefault(self, key, default=None):
        if dict.__contains__(self, key):
            return self._reach(key)
        self._will_change(key)
        return dict.setdefault(self, key, default)

    def update(self, *args, **kwargs):
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def clear(self):
        for key in list(dict.keys(self)):
            self._will_change(key)
        dict.clear(self)

    def items(self):
        self._reach_all()
        return dict.items(self)

    def values(self):
        self._reach_all()
        return dict.values(self)

    def __reduce__(self):
        return (dict, (dict(dict.items(self)),))


class _Call:
    """What one write call reached: (table, key) -> the row before (or _MISSING), and
    table -> the whole table before, for a table that is no dict of rows."""

    __slots__ = ("rows", "tables")

    def __init__(self):
        self.rows, self.tables = {}, {}


class _Tables(dict):
    """A state that is a dict of tables (table name -> rows keyed by id, or any JSON value).
    A session's `_Tables` shares its tables with the sessions it was forked from until a
    write tool reaches one: then the table is copied (a dict of rows shallowly, as `_Rows`,
    whose rows are copied one by one as the tool reaches them; anything else deeply). A read
    tool reaches the tables as they are, copying nothing."""

    __slots__ = ("_own", "_call")

    def __init__(self, source):
        super().__init__(dict.items(source))
        self._own = set()   # tables this state may change (copied since it last forked)
        self._call = None   # the running write call's record; None outside write calls

    def _mine(self, name):
        call = self._call
        if call is None or not dict.__contains__(self, name):
            return
        table = dict.__getitem__(self, name)
        if name in self._own and (type(table) is _Rows or name in call.tables):
            return
        if type(table) in (dict, _Rows):
            dict.__setitem__(self, name, _Rows(table, self, name))
        else:
            call.tables.setdefault(name, table)
            dict.__setitem__(self, name, _copy_value(table))
        self._own.add(name)

    def __getitem__(self, key):
        self._mine(key)
        return dict.__getitem__(self, key)

    def get(self, key, default=None):
        self._mine(key)
        return dict.get(self, key, default)

    def __setitem__(self, key, value):
        if self._call is not None:
            self._call.tables.setdefault(key, dict.get(self, key, _MISSING))
        self._own.add(key)
        dict.__setitem__(self, key, value)

    def __delitem__(self, key):
        if self._call is not None:
            self._call.tables.setdefault(key, dict.get(self, key, _MISSING))
        dict.__delitem__(self, key)

    def pop(self, key, *default):
        if self._call is not None and dict.__contains__(self, key):
            self._call.tables.setdefault(key, dict.get(self, key))
        self._own.discard(key)
        return dict.pop(self, key, *default)

    def _all(self):
        for key in list(dict.keys(self)):
            self._mine(key)

    def items(self):
        self._all()
        return dict.items(self)

    def values(self):
        self._all()
        return dict.values(self)

    def setdefault(self, key, default=None):
        if dict.__contains__(self, key):
            return self[key]
        self[key] = default
        return default

    def __reduce__(self):
        return (dict, (dict(dict.items(self)),))

    def run_write(self, fn, *args, **kwargs):
        """Run a write tool on this state; returns (its result or exception, the changes:
        (table, key) for each row added, changed or deleted, (table, None) for each table
        replaced, added or deleted)."""
        call = self._call = _Call()
        try:
            try:
                out = fn(self, *args, **kwargs)
            except Exception as e:  # the tool's own failure: what it changed stays, as in tau2
                out = e
        finally:
            self._call = None
        changed = set()
        for name, before in call.tables.items():
            if dict.get(self, name, _MISSING) != before:
                changed.add((name, None))
        for (name, key), before in call.rows.items():
            if (name, None) in changed:
                continue
            table = dict.get(self, name)
            now = dict.get(table, key, _MISSING) if isinstance(table, dict) else _MISSING
            if now is not before and now != before:
                changed.add((name, key))
        return out, changed


class _Cell:
    """One database, shared by the sessions forked from each other until one of them runs a
    write tool (copy on write): Tracer forks for every dry run, and most dry runs only read.
    `version` names the database as it is (a number from one clock for the whole server, so
    no two states share one); `changes` says at which version each row or table last
    changed, since `floor` (what tracer/state's `since` reads)."""

    __slots__ = ("state", "refs", "version", "changes", "floor")

    def __init__(self, state, version, changes=None, floor=None):
        self.state, self.refs, self.version = state, 1, version
        self.changes = changes if changes is not None else {}
        self.floor = version if floor is None else floor


# A session's record of changes is dropped past this many entries: a `since` older than
# that is answered with the whole state.
MAX_CHANGES = 4096
# Whole-state dumps kept to answer `since` for a state tracer_env cannot watch (one the
# domain dumps itself, e.g. a model object): the changes are found by comparing dumps.
KEPT_DUMPS = 32


class Env:
    """A domain: tools plus the four state hooks. `tool.fn(state, **arguments)`."""

    def __init__(self, name, version="1", *, reset, load=_tables_are_state, dump=_dump_as_is,
                 fork=_copy, splits=("train", "eval"), needs_seed=True):
        self.name, self.version = name, version
        self.reset, self.load, self.dump, self.fork = reset, load, dump, fork
        self.splits, self.needs_seed = splits, needs_seed
        self.tools = {}            # name -> Tool, in listing order
        self.sessions = {}
        self._next = 0
        self._clock = 0            # the last version given to a state
        self._dumps = {}           # version -> its dump, for states tracer_env cannot watch

    def add_tool(self, tool):
        if tool.name in self.tools:
            raise ValueError(f"tool {tool.name} declared twice")
        self.tools[tool.name] = tool

    def tool(self, name=None, *, read_only, description, args=None, optional=()):
        """Declare a tool: `args` maps argument name -> JSON schema (in order); all are
        required but those named in `optional`."""
        args = dict(args or {})
        unknown = set(optional) - set(args)
        if unknown:
            raise ValueError(f"optional names no argument: {sorted(unknown)}")
        schema = {"type": "object", "properties": args,
                  "required": [a for a in args if a not in optional], "additionalProperties": False}

        def mark(fn):
            self.add_tool(Tool(name or fn.__name__, description, schema, read_only, fn))
            return fn

        return mark

    # ---- sessions ----
    def _tick(self):
        self._clock += 1
        return self._clock

    def _watched(self, state):
        """Whether tracer_env sees what a write changes: a dict of tables the domain dumps
        as it is."""
        return self.dump is _dump_as_is and isinstance(state, dict)

    def _open(self, state=None, cell=None):
        self._next += 1
        sid = f"s{self._next}"
        if cell is None:
            if self._watched(state) and not isinstance(state, _Tables):
                state = _Tables(state)
            cell = _Cell(state, self._tick())
        self.sessions[sid] = cell
        return sid

    def _writable(self, sid):
        """The session's own database, split from the sessions that share it first. A dict
        of tables is not copied here: both sides get a fresh `_Tables` over the same
        tables, and each copies a table (and the table's rows) as a write reaches them."""
        cell = self.sessions[sid]
        if cell.refs > 1:
            cell.refs -= 1
            state = cell.state
            if isinstance(state, _Tables):
                cell.state = _Tables(state)
                copied = _Tables(state)
            else:
                copied = self.fork(state)
            cell = self.sessions[sid] = _Cell(copied, cell.version, dict(cell.changes), cell.floor)
        return cell

    def _run_write(self, sid, fn, arguments):
        """Run a write tool in a session: its result (or the exception it raised) and the
        session's new version, with what changed recorded."""
        cell = self._writable(sid)
        state = cell.state
        if isinstance(state, _Tables):
            out, changed = state.run_write(fn, **arguments)
            if changed:
                cell.version = self._tick()
                for mark in changed:
                    cell.changes[mark] = cell.version
                if len(cell.changes) > MAX_CHANGES:
                    cell.changes, cell.floor = {}, cell.version
            return out
        try:
            out = fn(state, **arguments)
        except Exception as e:
            out = e
        cell.version = self._tick()  # what changed is found by comparing dumps
        return out

    def _session(self, params, key="session"):
        sid = params.get(key) if isinstance(params, dict) else None
        if not isinstance(sid, str):
            raise RpcError(INVALID_PARAMS, f"params need a string {key!r}")
        if sid not in self.sessions:
            raise RpcError(INVALID_PARAMS, f"unknown session {sid!r} (closed, or never made by tracer/reset or tracer/fork)")
        return sid

    # ---- methods ----
    def m_initialize(self, params):
        asked = params.get("protocolVersion") if isinstance(params, dict) else None
        return {"protocolVersion": asked if isinstance(asked, str) else PROTOCOL_VERSION,
                "capabilities": {"tools": {}, "experimental": {"tracer": {"version": 1, "stateSince": True}}},
                "serverInfo": {"name": self.name, "version": self.version}}

    def m_tools_list(self, params):
        return {"tools": [t.listing() for t in self.tools.values()]}

    def m_tools_call(self, params):
        if not isinstance(params, dict) or not isinstance(params.get("name"), str):
            raise RpcError(INVALID_PARAMS, "tools/call needs params.name (a string)")
        meta = params.get("_meta")
        sid = self._session(meta if isinstance(meta, dict) else {}, "tracer/session")
        tool = self.tools.get(params["name"])
        if tool is None:
            raise RpcError(INVALID_PARAMS, f"unknown tool {params['name']!r}")
        arguments = params.get("arguments")
        arguments = {} if arguments is None else arguments
        if not isinstance(arguments, dict):
            raise RpcError(INVALID_PARAMS, f"{tool.name}: arguments must be an object")
        props = tool.input_schema.get("properties", {})
        missing = [a for a in tool.input_schema.get("required", []) if a not in arguments]
        extra = [a for a in arguments if a not in props]
        if missing or (extra and tool.input_schema.get("additionalProperties") is not True):
            raise RpcError(INVALID_PARAMS, f"{tool.name}: missing arguments {missing}, unknown arguments {extra}")
        if tool.read_only:
            try:
                out = tool.fn(self.sessions[sid].state, **arguments)
            except Exception as e:  # the tool's own failure: the agent sees it, as tau2 shows it
                out = e
        else:
            out = self._run_write(sid, tool.fn, arguments)
        if isinstance(out, Exception):
            text, failed = f"Error: {out}", True
        else:
            try:
                text, failed = (out if isinstance(out, str) else json.dumps(out, sort_keys=True)), False
            except Exception as e:
                text, failed = f"Error: {e}", True
        return {"content": [{"type": "text", "text": text}], "isError": failed}

    def m_reset(self, params):
        if not isinstance(params, dict):
            raise RpcError(INVALID_PARAMS, "tracer/reset needs {split, seed} or {tables}")
        if "tables" in params:
            if not isinstance(params["tables"], dict):
                raise RpcError(INVALID_PARAMS, "tracer/reset: tables must be an object of table name -> rows")
            try:
                state = self.load(params["tables"])
            except Exception as e:
                raise RpcError(INVALID_PARAMS, f"tracer/reset: tables rejected: {e}")
            return {"session": self._open(state)}
        split, seed = params.get("split"), params.get("seed")
        if split not in self.splits:
            raise RpcError(INVALID_PARAMS, f"tracer/reset: split must be one of {list(self.splits)}, got {split!r}")
        if (self.needs_seed or seed is not None) and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise RpcError(INVALID_PARAMS, f"tracer/reset: seed must be an integer, got {seed!r}")
        return {"session": self._open(self.reset(split, seed))}

    def m_state(self, params):
        """The session's tables and version; with `since` (a version this session, or the one
        it was forked from, answered before), only what changed after it (docs/remote-domains.md,
        "Incremental state"), or everything when that is not known any more."""
        cell = self.sessions[self._session(params)]
        since = params.get("since")
        if since is not None and (not isinstance(since, int) or isinstance(since, bool)):
            raise RpcError(INVALID_PARAMS, f"tracer/state: since must be an integer version, got {since!r}")
        state = cell.state
        if isinstance(state, _Tables):
            if since is not None and cell.floor <= since <= cell.version:
                return self._changes_since(cell, since)
            return {"version": cell.version, "tables": dict(dict.items(state))}
        tables = self.dump(state)
        delta = None
        if since is not None and since in self._dumps and isinstance(tables, dict):
            delta = _diff(self._dumps[since], tables)
        self._dumps[cell.version] = tables
        while len(self._dumps) > KEPT_DUMPS:
            del self._dumps[next(iter(self._dumps))]
        if delta is None:
            return {"version": cell.version, "tables": tables}
        return {"version": cell.version, "since": since, **delta}

    def _changes_since(self, cell, since):
        state, rows, deleted, tables = cell.state, {}, {}, {}
        for (name, key), version in cell.changes.items():
            if version <= since:
                continue
            if key is None:
                tables[name] = dict.get(state, name)
                continue
            table = dict.get(state, name)
            row = dict.get(table, key, _MISSING) if isinstance(table, dict) else _MISSING
            if row is _MISSING:
                deleted.setdefault(name, []).append(key)
            else:
                rows.setdefault(name, {})[key] = row
        for name in tables:
            rows.pop(name, None)
            deleted.pop(name, None)
        return {"version": cell.version, "since": since, "tables": tables, "rows": rows, "deleted": deleted}

    def m_fork(self, params):
        cell = self.sessions[self._session(params)]
        cell.refs += 1
        return {"session": self._open(cell=cell)}

    def m_close(self, params):
        cell = self.sessions.pop(self._session(params), None)
        if cell is not None:
            cell.refs -= 1
        return {}

    METHODS = {"initialize": "m_initialize", "ping": None, "tools/list": "m_tools_list",
               "tools/call": "m_tools_call", "tracer/reset": "m_reset", "tracer/state": "m_state",
               "tracer/fork": "m_fork", "tracer/close": "m_close"}

    def handle(self, msg):
        """One JSON-RPC message (already parsed) -> the answer, or None for a notification."""
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0" or not isinstance(msg.get("method"), str):
            rid = msg.get("id") if isinstance(msg, dict) else None
            if isinstance(msg, dict) and "method" not in msg and ("result" in msg or "error" in msg):
                return None  # an answer to nothing we asked: ignore
            return _error(rid, INVALID_REQUEST, "not a JSON-RPC 2.0 request (needs jsonrpc \"2.0\" and a method)")
        method, rid, notify = msg["method"], msg.get("id"), "id" not in msg
        params = msg.get("params", {})
        try:
            if method.startswith("notifications/"):
                if notify:
                    return None
                raise RpcError(INVALID_REQUEST, f"{method} is a notification (send it without an id)")
            if method not in self.METHODS:
                raise RpcError(NO_METHOD, f"unknown method {method!r}")
            name = self.METHODS[method]
            result = getattr(self, name)(params) if name else {}
        except RpcError as e:
            if notify:
                log(f"{method}: {e}")
                return None
            return _error(rid, e.code, f"{method}: {e}")
        except Exception as e:  # a bug in the server, never the agent's business
            log(f"{method}: internal error: {e!r}")
            return None if notify else _error(rid, INTERNAL, f"{method}: internal error: {e}")
        return None if notify else {"jsonrpc": "2.0", "id": rid, "result": result}

    def handle_text(self, text):
        try:
            msg = json.loads(text)
        except ValueError as e:
            return _error(None, PARSE_ERROR, f"not JSON: {e}")
        if isinstance(msg, list):
            return _error(None, INVALID_REQUEST, "batches are not supported: send one request at a time")
        return self.handle(msg)


def _diff(old, new):
    """What changed from one dump to the next, as tracer/state's `since` answer puts it: a
    table of rows (a dict) row by row, any other table whole."""
    rows, deleted, tables = {}, {}, {}
    for name in old.keys() | new.keys():
        a, b = old.get(name, _MISSING), new.get(name, _MISSING)
        if a is b or a == b:
            continue
        if type(a) is dict and type(b) is dict:
            changed = {k: v for k, v in b.items() if a.get(k, _MISSING) != v}
            gone = [k for k in a if k not in b]
            if changed:
                rows[name] = changed
            if gone:
                deleted[name] = gone
        else:
            tables[name] = None if b is _MISSING else b
    return {"tables": tables, "rows": rows, "deleted": deleted}


def _error(rid, code, message):
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


def encode(answer):
    return json.dumps(answer, default=str)


def serve_stdio(env):
    out = sys.stdout.buffer
    sys.stdout = sys.stderr  # whatever else gets printed must not reach the protocol stream
    slow = float(os.environ.get("TRACER_ENV_SLOW", "0") or 0)  # log calls slower than this (s)
    trace = open(os.environ["TRACER_ENV_TRACE"], "a") if os.environ.get("TRACER_ENV_TRACE") else None
    for raw in sys.stdin.buffer:
        line = raw.strip()
        if not line:
            continue
        started = time.monotonic()
        answer = env.handle_text(line.decode("utf-8", "replace"))
        if slow and time.monotonic() - started > slow:
            log(f"slow call ({time.monotonic() - started:.2f}s): {line[:120]!r}")
        if trace:
            trace.write(f"in  {line[:100]!r}\nout {str(answer)[:100]!r}\n")
            trace.flush()
        if answer is not None:
            out.write(encode(answer).encode() + b"\n")
            out.flush()


def serve_http(env, port):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # one small answer per request: don't wait for ACKs

        def _send(self, code, body=b"", ctype="application/json"):
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            if self.path.split("?")[0] != "/mcp":
                return self._send(404, b"not found: POST JSON-RPC to /mcp\n", "text/plain")
            origin = self.headers.get("Origin")  # a browser page elsewhere may not drive us
            if origin and urllib.parse.urlsplit(origin).hostname not in ("127.0.0.1", "localhost", "::1"):
                return self._send(403, b"forbidden origin\n", "text/plain")
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with lock:  # connections are threads (kept alive side by side); calls run one at a time
                answer = env.handle_text(body.decode("utf-8", "replace"))
            if answer is None:
                return self._send(202)
            self._send(200, encode(answer).encode())

        def do_GET(self):
            self._send(405, b"POST JSON-RPC to /mcp (no server-sent events)\n", "text/plain")

        def log_message(self, fmt, *args):
            pass

    lock = threading.Lock()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    log(f"{env.name} listening on http://127.0.0.1:{server.server_address[1]}/mcp")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


def serve(env, http_port=None):
    """Serve stdio, or HTTP on loopback when a port is given."""
    if http_port is None:
        serve_stdio(env)
    else:
        serve_http(env, http_port)


def main(env, argv=None):
    """The command line of a domain with no options of its own: `[--http PORT]`."""
    parser = argparse.ArgumentParser(description=f"Serve the {env.name} domain to Tracer.")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve HTTP on 127.0.0.1:PORT/mcp instead of stdio")
    serve(env, parser.parse_args(argv).http)
