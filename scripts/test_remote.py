#!/usr/bin/env python3
"""End-to-end checks of Tracer's remote-domain servers (docs/remote-domains.md), stdlib only.

Starts each server as a subprocess and talks the protocol to it, over stdio and over HTTP:
  pharmacy      examples/domains/pharmacy/server.py
  tau2_mini     remote/tau2_shim.py on tests/fixtures/tau2_mini
  school, restaurant
                remote/tau2_shim.py on ToolOrchestra's domains, when TRACER_TOOLORCHESTRA
                names an extracted checkout (with evaluation/tau2-bench/tau2/domains/<d>/
                and data/tau2/domains/<d>/db.json)
Checks: the handshake, tools/list (names, kinds, schemas), determinism of tracer/reset,
splits, a write changing the state, fork isolation, the state since a version (exactly the
rows a write changed, patching to the whole state), reset from tables, a rule violation as
isError, JSON-RPC errors for malformed requests, close, exit on EOF; prints read calls per
second through each server. Exits 1 after printing one `FAIL <server>: <check>: <detail>`
line per failing server (a server's later checks are skipped after its first failure).

    python3 scripts/test_remote.py [--only pharmacy,tau2_mini] [--calls 2000]
"""
import argparse
import http.client as httpclient
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHIM = os.path.join(ROOT, "remote", "tau2_shim.py")


class Fail(Exception):
    def __init__(self, check, detail):
        super().__init__(f"{check}: {detail}")


def expect(cond, check, detail=""):
    if not cond:
        raise Fail(check, detail)


# ---------------------------------------------------------------- clients

class Server:
    """A server subprocess; `send(msg)` returns its answer (None for a notification)."""

    def __init__(self, cmd, cwd, http=False):
        self.http = http
        self.proc = subprocess.Popen(cmd + (["--http", "0"] if http else []), cwd=cwd,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.log, self.lines, self.port = [], queue.Queue(), queue.Queue()
        threading.Thread(target=self._stderr, daemon=True).start()
        threading.Thread(target=self._stdout, daemon=True).start()
        if http:
            try:
                port = self.port.get(timeout=60)
            except queue.Empty:
                self.proc.kill()
                self.proc.wait()
                raise Fail("start", "no 'listening on' line on stderr within 60 s: " + self.tail())
            self.conn = httpclient.HTTPConnection("127.0.0.1", port, timeout=60)

    def _stderr(self):
        for raw in self.proc.stderr:
            line = raw.decode("utf-8", "replace").rstrip()
            self.log.append(line)
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)/mcp", line)
            if m:
                self.port.put(int(m.group(1)))

    def _stdout(self):
        for raw in self.proc.stdout:
            self.lines.put(raw)
        self.lines.put(None)

    def tail(self):
        return " | ".join(self.log[-5:])

    def send_raw(self, text, notify=False, timeout=60):
        if self.http:
            self.conn.request("POST", "/mcp", body=text.encode(), headers={"Content-Type": "application/json"})
            resp = self.conn.getresponse()
            body = resp.read()
            if notify:
                expect(resp.status == 202 and not body, "http", f"a notification got {resp.status} {body[:80]!r}")
                return None
            expect(resp.status == 200, "http", f"status {resp.status}: {body[:200]!r}")
            expect(resp.getheader("Content-Type", "").startswith("application/json"), "http", "not application/json")
            return json.loads(body)
        self.proc.stdin.write(text.encode() + b"\n")
        self.proc.stdin.flush()
        if notify:
            return None
        try:
            raw = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise Fail("answer", f"no answer within {timeout} s to {text[:120]}: " + self.tail())
        expect(raw is not None, "answer", f"the server closed stdout: {self.tail()}")
        try:
            return json.loads(raw)
        except ValueError:
            raise Fail("stdout", f"a line that is not JSON-RPC: {raw[:200]!r}")

    def send(self, msg):
        return self.send_raw(json.dumps(msg), notify="id" not in msg)

    _id = 0

    def rpc(self, method, params=None, error=False):
        Server._id += 1
        rid = Server._id
        ans = self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}})
        expect(isinstance(ans, dict) and ans.get("jsonrpc") == "2.0" and ans.get("id") == rid, method,
               f"answer does not match request {rid}: {str(ans)[:200]}")
        if error:
            expect("error" in ans and isinstance(ans["error"].get("message"), str) and ans["error"]["message"],
                   method, f"expected a JSON-RPC error, got {str(ans)[:200]}")
            return ans["error"]
        expect("result" in ans, method, f"error {ans.get('error')}")
        return ans["result"]

    def notify(self, method, params=None):
        self.send({"jsonrpc": "2.0", "method": method, "params": params or {}})

    def call(self, session, name, arguments):
        r = self.rpc("tools/call", {"name": name, "arguments": arguments, "_meta": {"tracer/session": session}})
        expect(isinstance(r.get("content"), list) and isinstance(r.get("isError"), bool), "tools/call",
               f"{name}: bad result shape {str(r)[:200]}")
        return "".join(c["text"] for c in r["content"] if c.get("type") == "text"), r["isError"]

    def ok(self, session, name, arguments, check):
        text, err = self.call(session, name, arguments)
        expect(not err, check, f"{name}({arguments}) failed: {text[:300]}")
        return text

    def state(self, session):
        r = self.rpc("tracer/state", {"session": session})
        expect(isinstance(r.get("tables"), dict), "tracer/state", "no tables object")
        return r["tables"]

    def reset(self, **params):
        r = self.rpc("tracer/reset", params)
        expect(isinstance(r.get("session"), str), "tracer/reset", f"no session: {r}")
        return r["session"]

    def stop(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# ---------------------------------------------------------------- the checks every server gets

def common(srv, t, calls):
    init = srv.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "tracer-test", "version": "0"}})
    expect(init.get("capabilities", {}).get("experimental", {}).get("tracer", {}).get("version") == 1,
           "initialize", f"capabilities.experimental.tracer.version is not 1: {init}")
    expect(init.get("protocolVersion") == "2025-06-18", "initialize", "protocolVersion not echoed")
    srv.notify("notifications/initialized")
    tools = srv.rpc("tools/list")["tools"]  # also checks that the notification got no answer
    kinds = {x["name"]: ("read" if x.get("annotations", {}).get("readOnlyHint") is True else "write") for x in tools}
    expect(list(kinds) == list(t["tools"]), "tools/list", f"names {list(kinds)} != {list(t['tools'])}")
    expect(kinds == t["tools"], "tools/list", f"kinds {kinds} != {t['tools']}")
    for x in tools:
        s = x.get("inputSchema", {})
        expect(s.get("type") == "object" and isinstance(s.get("properties"), dict), "tools/list",
               f"{x['name']}: inputSchema is not an object schema")
        expect(isinstance(x.get("description"), str) and x["description"], "tools/list", f"{x['name']}: no description")
        expect("$ref" not in json.dumps(s), "tools/list", f"{x['name']}: schema keeps a $ref")
    for name, (required, optional) in t.get("schema", {}).items():
        s = next(x["inputSchema"] for x in tools if x["name"] == name)
        expect(sorted(s.get("required", [])) == sorted(required), "tools/list", f"{name}: required {s.get('required')} != {required}")
        expect(set(s["properties"]) == set(required) | set(optional), "tools/list", f"{name}: properties {list(s['properties'])}")

    # determinism and splits
    a, b = srv.reset(split="train", seed=7), srv.reset(split="train", seed=7)
    base = srv.state(a)
    expect(base == srv.state(b), "determinism", "the same split and seed gave different tables")
    expect(set(base) == set(t["tables"]), "tracer/state", f"tables {sorted(base)} != {sorted(t['tables'])}")
    e = srv.reset(split="eval", seed=7)
    if t["seeded"]:
        expect(srv.state(e) != base, "splits", "train and eval gave the same tables")
        expect(srv.state(srv.reset(split="train", seed=8)) != base, "seeds", "seeds 7 and 8 gave the same tables")
    else:
        expect(srv.state(e) == base, "splits", "a db.json domain should ignore split and seed")

    # a write changes the state; a fork is isolated both ways
    f = srv.rpc("tracer/fork", {"session": a})["session"]
    expect(f not in (a, b, e), "tracer/fork", "the fork reused a session id")
    write, args = t["write"](base)
    srv.ok(f, write, args, "write")
    forked = srv.state(f)
    expect(forked != base, "write", f"{write} changed nothing")
    expect(srv.state(a) == base, "fork isolation", f"{write} in the fork changed the original")
    srv.ok(a, write, args, "write")
    expect(srv.state(f) == forked and srv.state(a) == forked, "fork isolation",
           "the same write on the original differs, or changed the fork")
    again, err = srv.call(a, write, args)
    if t.get("write_twice_fails"):
        expect(err and again.startswith("Error: "), "rule violation", f"repeating {write} succeeded: {again[:200]}")

    # incremental state: what changed since a version, patched onto what was seen, is the state
    declared = init["capabilities"]["experimental"]["tracer"].get("stateSince") is True
    expect(declared or not t.get("state_since"), "initialize", "stateSince is not declared")
    if declared:
        s = srv.reset(split="train", seed=7)
        seen = srv.rpc("tracer/state", {"session": s})
        expect(isinstance(seen.get("version"), int), "state since", f"no version in {str(seen)[:120]}")
        f = srv.rpc("tracer/fork", {"session": s})["session"]
        srv.ok(f, write, args, "write")
        delta = srv.rpc("tracer/state", {"session": f, "since": seen["version"]})
        expect(delta.get("since") == seen["version"], "state since", f"not an answer since {seen['version']}")
        expect(delta.get("version") != seen["version"], "state since", "a write kept the version")
        patched = apply_delta(seen["tables"], delta)
        expect(patched == srv.state(f), "state since", "the patched tables differ from the whole state")
        after, before = srv.state(f), seen["tables"]
        changed = {(n, k) for n in set(before) | set(after) if n not in delta.get("tables", {})
                   for k in set(before.get(n, {})) | set(after.get(n, {}))
                   if before.get(n, {}).get(k) != after.get(n, {}).get(k)}
        named = {(n, k) for n, rows in delta.get("rows", {}).items() for k in rows} | \
                {(n, k) for n, keys in delta.get("deleted", {}).items() for k in keys}
        expect(named == changed, "state since", f"the answer names {sorted(named)}, the write changed {sorted(changed)}")
        same = srv.rpc("tracer/state", {"session": s, "since": seen["version"]})
        expect(not same.get("rows") and not same.get("tables") and not same.get("deleted"), "state since",
               f"the unwritten original reports changes: {str(same)[:200]}")

    # reset from tables rebuilds the same state
    r = srv.reset(tables=forked)
    expect(srv.state(r) == forked, "reset from tables", "tracer/state of a session reset from tables differs")

    # a rule the tool enforces -> isError with tau2's text, and no change
    for name, arguments, needle in t["violations"](base):
        s = srv.reset(split="train", seed=7)
        text, err = srv.call(s, name, arguments)
        expect(err, "rule violation", f"{name}({arguments}) succeeded: {text[:200]}")
        expect(text.startswith("Error: ") and needle in text, "rule violation", f"{name}: text {text[:200]!r} lacks {needle!r}")
        expect(srv.state(s) == base, "rule violation", f"failing {name} changed the state")

    # malformed requests -> JSON-RPC errors, never a tool result
    read, read_args = t["read"](base)
    for method, params, what in [
        ("tools/call", {"name": read, "arguments": read_args, "_meta": {"tracer/session": "s999999"}}, "unknown session"),
        ("tools/call", {"name": read, "arguments": read_args}, "no session"),
        ("tools/call", {"name": "no_such_tool", "arguments": {}, "_meta": {"tracer/session": a}}, "unknown tool"),
        ("tools/call", {"name": read, "arguments": "x", "_meta": {"tracer/session": a}}, "arguments not an object"),
        ("tools/call", {"name": read, "arguments": {**read_args, "bogus_arg": 1}, "_meta": {"tracer/session": a}}, "unknown argument"),
        ("tracer/reset", {"split": "test", "seed": 7}, "bad split"),
        ("tracer/reset", {"tables": [1, 2]}, "bad tables"),
        ("tracer/state", {"session": 3}, "session not a string"),
        ("tracer/fork", {}, "no session"),
        ("no/such/method", {}, "unknown method"),
    ]:
        err = srv.rpc(method, params, error=True)
        expect(err.get("code") in (-32600, -32601, -32602), "malformed request", f"{what}: code {err.get('code')}")
    if t["seeded"]:
        srv.rpc("tracer/reset", {"split": "train"}, error=True)
        srv.rpc("tracer/reset", {"split": "train", "seed": "7"}, error=True)
    required = next(x["inputSchema"].get("required", []) for x in tools if x["name"] == read)
    if required:
        missing = {k: v for k, v in read_args.items() if k != required[0]}
        srv.rpc("tools/call", {"name": read, "arguments": missing, "_meta": {"tracer/session": a}}, error=True)
    ans = srv.send_raw("{not json")
    expect(ans.get("error", {}).get("code") == -32700 and ans.get("id") is None, "malformed request", f"bad JSON: {ans}")
    ans = srv.send_raw(json.dumps({"id": 5, "method": "tools/list"}))
    expect(ans.get("error", {}).get("code") == -32600, "malformed request", f"no jsonrpc field: {ans}")

    # close frees a session
    srv.notify("tracer/close", {"session": b})
    srv.rpc("tracer/state", {"session": b}, error=True)

    # throughput: read calls on one session
    s = srv.reset(split="train", seed=7)
    start = time.perf_counter()
    for _ in range(calls):
        srv.ok(s, read, read_args, "throughput")
    return calls / (time.perf_counter() - start)


def apply_delta(tables, delta):
    """`tables` with an answer `since` a version applied (docs/remote-domains.md)."""
    out = json.loads(json.dumps(tables))
    for name, table in delta.get("tables", {}).items():
        if table is None:
            out.pop(name, None)
        else:
            out[name] = table
    for name, rows in delta.get("rows", {}).items():
        out.setdefault(name, {}).update(rows)
    for name, keys in delta.get("deleted", {}).items():
        for key in keys:
            out[name].pop(key, None)
    return out


def run(name, t, calls, transports):
    rates = {}
    for http in transports:
        label = f"{name} ({'http' if http else 'stdio'})"
        srv = None
        try:
            srv = Server(t["cmd"], t["cwd"], http=http)
            rates[label] = common(srv, t, calls)
            if not http:
                srv.proc.stdin.close()
                try:
                    code = srv.proc.wait(10)
                except subprocess.TimeoutExpired:
                    raise Fail("exit on EOF", "still running 10 s after stdin closed")
                expect(code == 0, "exit on EOF", f"exit status {code}: {srv.tail()}")
        except Exception as e:  # noqa: BLE001 - one line per failing server, whatever broke
            what = str(e) if isinstance(e, Fail) else f"driver: {type(e).__name__}: {e}"
            print(f"FAIL {label}: {what}" + (f" [stderr: {srv.tail()}]" if srv and srv.log else ""), flush=True)
            return None
        finally:
            if srv:
                srv.proc.kill() if http else srv.stop()
                srv.proc.wait()
        print(f"ok   {label}: {rates[label]:.0f} read calls/s ({t['read'](None)[0]})", flush=True)
    return rates


# ---------------------------------------------------------------- the servers

def pharmacy():
    def pick(tables):
        p = tables["prescriptions"]
        opened = {o["prescription_id"] for o in tables["refill_orders"].values() if o["status"] in ("processing", "ready_for_pickup")}
        rx = next(r for k, r in sorted(p.items()) if r["status"] == "active" and r["refills_left"] > 0 and k not in opened)
        pm = next(k for k, m in sorted(tables["payment_methods"].items()) if m["patient_id"] == rx["patient_id"])
        other = next(k for k, m in sorted(tables["payment_methods"].items()) if m["patient_id"] != rx["patient_id"])
        return rx, pm, other

    def write(tables):
        rx, pm, _ = pick(tables)
        return "refill_prescription", {"prescription_id": rx["prescription_id"], "payment_method_id": pm}

    def violations(tables):
        rx, pm, other = pick(tables)
        p = tables["prescriptions"]
        empty = next(k for k, r in sorted(p.items()) if r["status"] == "active" and r["refills_left"] == 0)
        expired = next(k for k, r in sorted(p.items()) if r["status"] == "expired")
        held = next(k for k, r in sorted(tables["refill_orders"].items()) if r["status"] == "picked_up")
        pid = rx["patient_id"]
        addr = tables["patients"][pid]["address"]
        return [
            ("refill_prescription", {"prescription_id": rx["prescription_id"], "payment_method_id": other}, "does not belong"),
            ("refill_prescription", {"prescription_id": empty, "payment_method_id": pm}, "no refills left"),
            ("refill_prescription", {"prescription_id": expired, "payment_method_id": pm}, "expired"),
            ("refill_prescription", {"prescription_id": "RX-000000", "payment_method_id": pm}, "not found"),
            ("cancel_refill_order", {"order_id": held, "reason": "no longer needed"}, "can no longer be cancelled"),
            ("update_patient_address", {"patient_id": pid, **addr}, "same as the current"),
            ("update_patient_address", {"patient_id": pid, **addr, "zip": "123"}, "five digits"),
            ("transfer_prescription", {"prescription_id": rx["prescription_id"], "pharmacy_id": rx["pharmacy_id"]}, "already at"),
            ("transfer_prescription", {"prescription_id": rx["prescription_id"], "pharmacy_id": "PH-99"}, "not found"),
        ]

    def read(tables):
        return "get_patient_details", {"patient_id": sorted(tables["patients"])[0] if tables else "PT-?"}

    R, W = "read", "write"
    return {
        "cmd": [sys.executable, "server.py"], "cwd": os.path.join(ROOT, "examples", "domains", "pharmacy"), "seeded": True, "state_since": True,
        "tools": {"find_patient_id_by_email": R, "get_patient_details": R, "get_prescription_details": R,
                  "list_pharmacies": R, "refill_prescription": W, "cancel_refill_order": W,
                  "update_patient_address": W, "transfer_prescription": W, "transfer_to_human_agents": R},
        "schema": {"refill_prescription": (["prescription_id", "payment_method_id"], []),
                   "list_pharmacies": ([], [])},
        "tables": ["patients", "payment_methods", "prescriptions", "refill_orders", "pharmacies"],
        "write": write, "write_twice_fails": True, "violations": violations, "read": read,
        "extra": pharmacy_extra,
    }


def pharmacy_extra(srv):
    """Domain checks beyond the protocol: the lookups agree with the tables, the other writes work."""
    s = srv.reset(split="eval", seed=3)
    t = srv.state(s)
    expect(len(t["patients"]) == 40, "eval size", f"{len(t['patients'])} patients")
    pid, p = sorted(t["patients"].items())[0]
    expect(srv.ok(s, "find_patient_id_by_email", {"email": p["email"].upper()}, "lookup") == pid, "lookup", "email lookup")
    details = json.loads(srv.ok(s, "get_patient_details", {"patient_id": pid}, "lookup"))
    expect(all(m["payment_method_id"] in t["payment_methods"] for m in details["payment_methods"]), "lookup", "payment ids")
    order = next(k for k, o in sorted(t["refill_orders"].items()) if o["status"] == "processing")
    rx = t["refill_orders"][order]["prescription_id"]
    before = t["prescriptions"][rx]["refills_left"]
    srv.ok(s, "cancel_refill_order", {"order_id": order, "reason": "no longer needed"}, "cancel")
    after = srv.state(s)
    expect(after["refill_orders"][order]["status"] == "cancelled" and after["prescriptions"][rx]["refills_left"] == before + 1,
           "cancel", "order not cancelled or refill not returned")
    target = next(k for k in sorted(t["pharmacies"]) if k != after["prescriptions"][rx]["pharmacy_id"])
    if after["prescriptions"][rx]["status"] == "active":
        srv.ok(s, "transfer_prescription", {"prescription_id": rx, "pharmacy_id": target}, "transfer")
    srv.ok(s, "update_patient_address", {"patient_id": pid, "line1": "1 New Street", "line2": "", "city": "Tucson",
                                         "state": "AZ", "zip": "85701"}, "address")
    expect(srv.ok(s, "transfer_to_human_agents", {"summary": "x"}, "transfer") == "Transfer successful", "transfer", "text")
    # The controlled-substance rule is policy only (domain.toml [[rule]]): the server allows the move.
    t = srv.state(s)
    opened = {o["prescription_id"] for o in t["refill_orders"].values() if o["status"] in ("processing", "ready_for_pickup")}
    rx = next(r for k, r in sorted(t["prescriptions"].items()) if r["controlled"] and r["status"] == "active" and k not in opened)
    target = next(k for k in sorted(t["pharmacies"]) if k != rx["pharmacy_id"])
    srv.ok(s, "transfer_prescription", {"prescription_id": rx["prescription_id"], "pharmacy_id": target}, "policy-only rule")
    pharmacy_declarations(srv)


def _fields(sentence):
    return re.findall(r"\{([^{}]+)\}", sentence)


def pharmacy_declarations(srv):
    """domain.toml, tools.toml and requests.toml name only tools, arguments, tables and
    fields the server has (the Rust side parses them strictly; this catches drift early)."""
    try:
        import tomllib
    except ImportError:
        print("skip pharmacy: declarations (no tomllib before Python 3.11)")
        return
    folder = os.path.join(ROOT, "examples", "domains", "pharmacy")
    load = lambda name: tomllib.load(open(os.path.join(folder, name), "rb"))  # noqa: E731
    d, tt, rq = load("domain.toml"), load("tools.toml"), load("requests.toml")
    tools = {x["name"]: x for x in srv.rpc("tools/list")["tools"]}
    props = {n: x["inputSchema"]["properties"] for n, x in tools.items()}
    args = {a for p in props.values() for a in p}
    tables = srv.state(srv.reset(split="train", seed=1))

    def fields(table):
        expect(table in tables and tables[table], "declarations", f"no rows in table {table!r}")
        return set().union(*(row.keys() for row in tables[table].values()))

    c = d["customers"]
    expect(c["key"] in args, "declarations", f"customers.key {c['key']} is no tool's argument")
    for f in c["facts"]:
        expect(set(_fields(f["say"])) | set(f["values"]) <= fields(c["table"]), "declarations", f"fact {f}")
    expect(c["facts"][0]["kind"] == "identity", "declarations", "the first fact is not the identity")
    for o in c["owns"]:
        expect(set(_fields(o["say"])) | set(o["values"]) | {o["owner"]} <= fields(o["table"]), "declarations", f"owns {o['table']}")
    for r in c["records"]:
        expect(r["arg"] in props.get(r["tool"], {}), "declarations", f"record {r}")
        if "table" in r:
            expect(r["owner"] in fields(r["table"]), "declarations", f"record {r}")
    draws = {}
    for dr in d["draw"]:
        expect(dr["arg"] in args, "declarations", f"draw of {dr['arg']}: no tool takes it")
        if "table" in dr:
            need = {dr.get("owner"), dr.get("field"), *dr.get("where", {})} - {None}
            expect(need <= fields(dr["table"]), "declarations", f"draw of {dr['arg']}: fields {need}")
            draws[dr["arg"]] = dr["table"]
        else:
            draws.setdefault(dr["arg"], None)
    for r in d["rule"]:
        expect(r["arg"] in props.get(r["tool"], {}) and r["field"] in fields(r["table"]), "declarations", f"rule {r['name']}")
    for name, schema in tools.items():
        for a in schema["inputSchema"].get("required", []):
            expect(a in draws or a == c["key"] or "enum" in props[name][a], "declarations",
                   f"{name}: required argument {a} has no source (draw, customer key or enum)")
    for path in tt.get("internal", []):
        expect(path in args, "declarations", f"tools.toml internal {path}: no such argument")
    for entry in tt["tool"]:
        expect(entry["name"] in tools, "declarations", f"tools.toml names {entry['name']}, which the server does not list")
        expect(not {"kind", "description", "args", "kit"} & set(entry), "declarations", f"tools.toml [{entry['name']}] has server-owned keys")
        for a in entry.get("target", []) + entry.get("internal", []):
            expect(a in props[entry["name"]], "declarations", f"tools.toml [{entry['name']}]: no argument {a}")
    for tool, table in rq.items():
        expect(tool in tools, "declarations", f"requests.toml [{tool}]: no such tool")
        for sentence in table["say"]:
            for ph in _fields(sentence):
                arg, _, field = ph.partition(".")
                expect(arg in props[tool], "declarations", f"requests.toml [{tool}]: {{{ph}}} is no argument")
                if field:
                    source = c["table"] if arg == c["key"] else draws.get(arg)
                    expect(source and field in fields(source), "declarations", f"requests.toml [{tool}]: {{{ph}}} has no row field")
    for name, x in tools.items():
        if not x["annotations"]["readOnlyHint"]:
            expect(name in rq and 2 <= len(rq[name]["say"]) <= 4, "declarations", f"requests.toml: {name} needs 2-4 sentences")


def tau2_mini():
    fixture = os.path.join(ROOT, "tests", "fixtures", "tau2_mini")

    def write(_tables):
        return "rent_bike", {"customer_id": "C002", "bike_id": "B01", "hours": 2, "payment": {"card_id": "card_21", "amount": 13.0}}

    def violations(_tables):
        return [
            ("rent_bike", {"customer_id": "C002", "bike_id": "B03", "hours": 1, "payment": {"card_id": "card_21", "amount": 4.0}}, "not available"),
            ("rent_bike", {"customer_id": "C002", "bike_id": "B02", "hours": 1, "payment": {"card_id": "card_11", "amount": 9.0}}, "Card card_11 not found for customer C002"),
            ("rent_bike", {"customer_id": "C002", "bike_id": "B02", "hours": 1, "payment": {"card_id": "card_21", "amount": 1.0}}, "total due is 9.0"),
            ("return_bike", {"rental_id": "R404"}, "Rental R404 not found"),
        ]

    R, W = "read", "write"
    return {
        "cmd": [sys.executable, SHIM, "--domain-dir", fixture, "--db", os.path.join(fixture, "db.json")], "cwd": ROOT,
        "seeded": False, "state_since": True,
        "tools": {"find_customer_id_by_email": R, "list_available_bikes": R, "rent_bike": W, "return_bike": W,
                  "transfer_to_human_agents": R},
        "schema": {"rent_bike": (["customer_id", "bike_id", "hours", "payment"], []),
                   "list_available_bikes": ([], ["size"]), "return_bike": (["rental_id"], ["note"])},
        "tables": ["customers", "bikes", "rentals"],
        "write": write, "write_twice_fails": True, "violations": violations,
        "read": lambda _t: ("list_available_bikes", {"size": "M"}), "extra": tau2_mini_extra,
    }


def tau2_mini_extra(srv):
    s = srv.reset(split="train", seed=0)
    expect(srv.ok(s, "find_customer_id_by_email", {"email": "BEN@example.com"}, "lookup") == "C002", "lookup", "email")
    bikes = json.loads(srv.ok(s, "list_available_bikes", {}, "lookup"))
    expect([b["bike_id"] for b in bikes] == ["B01", "B02"], "lookup", f"available bikes {bikes}")
    text = srv.ok(s, "return_bike", {"rental_id": "R001"}, "return")
    expect(json.loads(text)["status"] == "returned" and srv.state(s)["bikes"]["B03"]["status"] == "available", "return", text)
    tools = {x["name"]: x for x in srv.rpc("tools/list")["tools"]}
    pay = tools["rent_bike"]["inputSchema"]["properties"]["payment"]
    expect("card_id" in json.dumps(pay), "schema", f"the pydantic model's schema is not inlined: {pay}")
    expect(tools["rent_bike"]["description"].startswith("Rent an available bike for a number of hours, paid in advance.\n\nThe payment"),
           "schema", repr(tools["rent_bike"]["description"]))
    expect(tools["rent_bike"]["inputSchema"]["properties"]["hours"].get("description") == "Hours to rent, 1 to 8.", "schema", "arg description")


def toolorchestra(domain, repo):
    ddir = os.path.join(repo, "evaluation", "tau2-bench", "tau2", "domains", domain)
    db = os.path.join(repo, "data", "tau2", "domains", domain, "db.json")
    cmd = [sys.executable, SHIM, "--domain-dir", ddir, "--db", db]
    R, W = "read", "write"
    if domain == "school":
        def pick(tables):
            reg = next(r for _, r in sorted(tables["registrations"].items())
                       if tables["students"].get(r["student_id"], {}).get("payment_methods"))
            pm = sorted(tables["students"][reg["student_id"]]["payment_methods"])[0]
            return reg, pm

        def write(tables):
            reg, pm = pick(tables)
            return "pay_registration", {"registration_id": reg["registration_id"], "payment": {"payment_id": pm, "amount": 100}}

        def violations(tables):
            reg, _ = pick(tables)
            return [("pay_registration", {"registration_id": reg["registration_id"], "payment": {"payment_id": "pm_nope", "amount": 1}},
                     "Payment method pm_nope not found"),
                    ("get_course_details", {"course_id": "NOPE"}, "Course NOPE not found")]

        tools = {"get_student_details": R, "get_course_details": R, "get_registration_details": R, "list_departments": R,
                 "list_courses_by_term": R, "search_courses": R, "get_course_meeting_status": R, "register_courses": W,
                 "update_registration_courses": W, "cancel_registration": W, "pay_registration": W}
        read = lambda t: ("get_student_details", {"student_id": sorted(t["students"])[0] if t else "?"})
        schema = {"search_courses": (["term"], ["department", "campus", "day", "start_after", "end_before", "open_only"])}
        tables = ["courses", "students", "registrations"]
    else:
        def write(tables):
            ticket = next(k for k, v in sorted(tables["service_tickets"].items()) if v["state"] == "placed")
            return "cancel_placed_ticket", {"ticket_ref": ticket, "reason": "no longer needed"}

        def violations(tables):
            done = next(k for k, v in sorted(tables["service_tickets"].items()) if v["state"] not in ("placed",))
            return [("cancel_placed_ticket", {"ticket_ref": done, "reason": "x"}, "Only tickets in 'placed' state"),
                    ("find_patron_ref_by_email", {"email": "nobody@nowhere"}, "Patron not found"),
                    ("calculate", {"expression": "2 + x"}, "Invalid characters")]

        tools = {"calculate": R, "transfer_to_human_agents": R, "get_ticket_details": R, "get_dish_details": R,
                 "get_patron_details": R, "list_all_dishes": R, "find_patron_ref_by_email": R,
                 "find_patron_ref_by_name_zip": R, "cancel_placed_ticket": W, "modify_placed_ticket_dropoff": W,
                 "modify_placed_ticket_table": W, "modify_placed_ticket_items": W, "modify_placed_ticket_instrument": W,
                 "add_tip_to_ticket": W}
        read = lambda t: ("get_patron_details", {"guest_ref": sorted(t["patron_registry"])[0] if t else "?"})
        schema = {"modify_placed_ticket_items": (["ticket_ref", "plate_refs", "new_plate_refs", "instrument_ref"], [])}
        tables = ["menu_board", "patron_registry", "service_tickets"]
    return {"cmd": cmd, "cwd": ROOT, "seeded": False, "state_since": True, "tools": tools, "schema": schema, "tables": tables,
            "write": write, "write_twice_fails": domain == "restaurant", "violations": violations, "read": read}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help="comma-separated servers to check")
    ap.add_argument("--calls", type=int, default=2000, help="read calls timed per server and transport")
    args = ap.parse_args()
    targets = [("pharmacy", pharmacy()), ("tau2_mini", tau2_mini())]
    repo = os.environ.get("TRACER_TOOLORCHESTRA")
    if repo:
        targets += [(d, toolorchestra(d, repo)) for d in ("school", "restaurant")]
    else:
        print("skip school, restaurant: TRACER_TOOLORCHESTRA is not set", flush=True)
    if args.only:
        wanted = args.only.split(",")
        targets = [(n, t) for n, t in targets if n in wanted]
    failed = 0
    for name, t in targets:
        rates = run(name, t, args.calls, (False, True))
        if rates is None:
            failed += 1
            continue
        if t.get("extra"):
            srv = Server(t["cmd"], t["cwd"])
            try:
                srv.rpc("initialize", {})
                t["extra"](srv)
                print(f"ok   {name}: domain checks", flush=True)
            except Exception as e:  # noqa: BLE001
                what = str(e) if isinstance(e, Fail) else f"driver: {type(e).__name__}: {e}"
                print(f"FAIL {name}: {what} [stderr: {srv.tail()}]", flush=True)
                failed += 1
            finally:
                srv.stop()
    if failed:
        sys.exit(1)
    print("all remote checks passed", flush=True)


if __name__ == "__main__":
    main()
