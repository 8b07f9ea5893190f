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


def _tables_are_state(tables):
    return copy.deepcopy(tables)


def _copy(state):
    """A deep copy: pickle's round trip (several times faster than deepcopy on plain data),
    deepcopy for what pickle refuses."""
    try:
        return pickle.loads(pickle.dumps(state, pickle.HIGHEST_PROTOCOL))
    except Exception:
        return copy.deepcopy(state)


class _LazyTables(dict):
    """A copy of a dict of tables whose tables are copied on first access: until a tool reads
    or changes a table, it is the source's (which no one changes: the source is shared)."""

    __slots__ = ("_own", "reading")

    def __init__(self, source):
        super().__init__(dict.items(source))
        self._own = set()
        self.reading = False  # a read-only tool runs: nothing is copied

    def _mine(self, key):
        if not self.reading and key not in self._own and dict.__contains__(self, key):
            dict.__setitem__(self, key, _copy(dict.__getitem__(self, key)))
            self._own.add(key)

    def __getitem__(self, key):
        self._mine(key)
        return dict.__getitem__(self, key)

    def get(self, key, default=None):
        self._mine(key)
        return dict.get(self, key, default)

    def __setitem__(self, key, value):
        self._own.add(key)
        dict.__setitem__(self, key, value)

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
        self._mine(key)
        return dict.setdefault(self, key, default)

    def pop(self, key, *default):
        self._own.discard(key)
        return dict.pop(self, key, *default)

    def __reduce__(self):
        return (dict, (dict(dict.items(self)),))


class _Cell:
    """One database, shared by the sessions forked from each other until one of them runs a
    write tool (copy on write): Tracer forks for every dry run, and most dry runs only read."""

    __slots__ = ("state", "refs")

    def __init__(self, state):
        self.state, self.refs = state, 1


class Env:
    """A domain: tools plus the four state hooks. `tool.fn(state, **arguments)`."""

    def __init__(self, name, version="1", *, reset, load=_tables_are_state, dump=lambda s: s,
                 fork=_copy, splits=("train", "eval"), needs_seed=True):
        self.name, self.version = name, version
        self.reset, self.load, self.dump, self.fork = reset, load, dump, fork
        self.splits, self.needs_seed = splits, needs_seed
        self.tools = {}            # name -> Tool, in listing order
        self.sessions = {}
        self._next = 0

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
    def _open(self, state=None, cell=None):
        self._next += 1
        sid = f"s{self._next}"
        self.sessions[sid] = cell if cell is not None else _Cell(state)
        return sid

    def _writable(self, sid):
        """The session's own database, copied first if another session shares it. A state
        that is a dict of tables is copied table by table, each when a tool first touches it
        (most writes touch two or three tables of a domain's five)."""
        cell = self.sessions[sid]
        if cell.refs > 1:
            cell.refs -= 1
            state = cell.state
            if isinstance(state, dict):
                # Both sides copy a table before they first change it: the tables they still
                # share are never written again.
                cell.state = _LazyTables(state)
                copied = _LazyTables(state)
            else:
                copied = self.fork(state)
            cell = self.sessions[sid] = _Cell(copied)
        return cell.state

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
                "capabilities": {"tools": {}, "experimental": {"tracer": {"version": 1}}},
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
        try:
            state = self.sessions[sid].state if tool.read_only else self._writable(sid)
            lazy = tool.read_only and isinstance(state, _LazyTables)
            if lazy:
                state.reading = True
            try:
                out = tool.fn(state, **arguments)
            finally:
                if lazy:
                    state.reading = False
            text = out if isinstance(out, str) else json.dumps(out, sort_keys=True)
            failed = False
        except Exception as e:  # the tool's own failure: the agent sees it, as tau2 shows it
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
        state = self.sessions[self._session(params)].state
        if isinstance(state, _LazyTables):
            state = dict(dict.items(state))  # the tables as they are: showing copies nothing
        return {"tables": self.dump(state)}

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
