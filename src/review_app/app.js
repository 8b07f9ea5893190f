// tracer review: keyboard shortcuts and decisions posted as JSON. No dependencies.
(function () {
  "use strict";
  const $ = (sel) => document.querySelector(sel);
  const panel = $("#decide");
  const ADVANCE_KEY = "tracer-review-auto-advance";

  // Messages go next to what was pressed; both are live regions, so screen readers hear them.
  function say(where, text, kind) {
    const el = typeof where === "string" ? $(where) : where;
    if (!el) return;
    el.textContent = text;
    el.classList.remove("error", "saved");
    if (kind) el.classList.add(kind);
  }

  async function post(path, body) {
    const res = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    let answer = {};
    try {
      answer = await res.json();
    } catch (e) {
      answer = { error: "the answer was not JSON (" + res.status + ")" };
    }
    return { ok: res.ok, answer: answer };
  }

  function showProgress(answer) {
    const p = $("#progress");
    if (p && typeof answer.left === "number") {
      p.textContent = answer.left + " of " + answer.total + " left";
      p.dataset.left = answer.left;
      p.dataset.total = answer.total;
      const bar = p.parentElement.querySelector("progress");
      if (bar) {
        bar.max = Math.max(answer.total, 1);
        bar.value = answer.total - answer.left;
      }
    }
  }

  function advancing() {
    const box = $("#auto-advance");
    return box ? box.checked : false;
  }

  async function decide(body, where) {
    const payload = Object.assign(
      {
        domain: panel.dataset.domain,
        task_id: panel.dataset.task,
        content: panel.dataset.content,
        query: panel.dataset.query,
      },
      body
    );
    say(where, "saving…", "");
    try {
      const { ok, answer } = await post("/api/decide", payload);
      if (!ok) {
        say(where, answer.error || "refused", "error");
        return false;
      }
      const note = answer.resolved ? " (conflict resolved)" : "";
      showProgress(answer);
      const state = $("#review-state");
      if (state) state.innerHTML = '<span class="badge ok">' + answer.state + "</span>";
      if (advancing() && answer.next) {
        say(where, "saved: " + answer.state + note + "; next task…", "saved");
        window.location.href = answer.next;
      } else {
        say(where, "saved: " + answer.state + note, "saved");
        const undo = $("#undo");
        if (undo) {
          undo.disabled = false;
          undo.textContent = "undo your last decision (" + body.decision + " of " + panel.dataset.task + ") u";
        }
      }
      return true;
    } catch (e) {
      say(where, "could not reach tracer review: " + e, "error");
      return false;
    }
  }

  function accept() {
    decide({ decision: "accept" }, "#message");
  }

  function reject() {
    const pick = $("#reason").value;
    const text = $("#reason-text").value.trim();
    const reason = pick && pick !== "other" ? (text ? pick + ": " + text : pick) : text;
    if (!reason) {
      say("#message", "pick or write a reason first", "error");
      $("#reason").focus();
      return;
    }
    decide({ decision: "reject", reason: reason }, "#message");
  }

  async function undo() {
    const domain = panel ? panel.dataset.domain : null;
    if (!domain) return;
    say("#message", "undoing…", "");
    try {
      const { ok, answer } = await post("/api/undo", { domain: domain, query: panel.dataset.query });
      if (!ok) {
        say("#message", answer.error || "refused", "error");
        return;
      }
      say("#message", "undone: " + answer.undone + " of " + answer.task_id + "; now " + answer.state, "saved");
      if (window.location.pathname + window.location.search === answer.url) window.location.reload();
      else window.location.href = answer.url;
    } catch (e) {
      say("#message", "could not reach tracer review: " + e, "error");
    }
  }

  function toggleEdit() {
    const form = $("#edit-form");
    form.hidden = !form.hidden;
    if (!form.hidden) $("#edit-instruction").focus();
  }

  const canonical = (text) => JSON.stringify(JSON.parse(text));

  // The edit is every field that differs from the task as generated (the form starts from
  // the current values, which may already carry an earlier edit).
  function collectEdit() {
    const edit = {};
    const differs = (el) => el.value.trim() !== el.dataset.original.trim();
    const ins = $("#edit-instruction");
    if (differs(ins)) edit.instruction = ins.value;
    const emo = $("#edit-emotion");
    if (differs(emo)) edit.emotion_instruction = emo.value;
    const outs = $("#edit-outputs");
    const lines = (text) => text.split("\n").map((s) => s.trim()).filter((s) => s);
    if (lines(outs.value).join("\n") !== lines(outs.dataset.original).join("\n")) edit.outputs = lines(outs.value);
    const args = Array.from(document.querySelectorAll(".edit-arg"));
    const parsed = args.map((a) => {
      try {
        return JSON.parse(a.value);
      } catch (e) {
        throw new Error("arguments[" + a.dataset.index + "]: not JSON (" + e.message + ")");
      }
    });
    if (args.some((a, i) => JSON.stringify(parsed[i]) !== canonical(a.dataset.original))) edit.arguments = parsed;
    return edit;
  }

  if (panel) {
    const box = $("#auto-advance");
    const stored = window.localStorage.getItem(ADVANCE_KEY);
    box.checked = stored === null ? panel.dataset.advance === "true" : stored === "true";
    box.addEventListener("change", () => window.localStorage.setItem(ADVANCE_KEY, String(box.checked)));
    $("#accept").addEventListener("click", accept);
    $("#reject").addEventListener("click", reject);
    $("#undo").addEventListener("click", undo);
    $("#edit-toggle").addEventListener("click", toggleEdit);
    $("#edit-form").addEventListener("submit", async (ev) => {
      ev.preventDefault();
      let edit;
      try {
        edit = collectEdit();
      } catch (e) {
        say("#edit-message", e.message, "error");
        return;
      }
      if (Object.keys(edit).length === 0) {
        say("#edit-message", "nothing differs from the original task: accept it instead", "error");
        return;
      }
      if ((await decide({ decision: "edit", edit: edit }, "#edit-message")) && !advancing()) {
        window.setTimeout(() => window.location.reload(), 700);
      }
    });
  }

  // Bulk decision on a filtered list: the rows shown, after a confirmation with the count.
  const bulk = $("#bulk");
  async function bulkDecide(decision) {
    const rows = Array.from(document.querySelectorAll("table.tasks tbody tr[data-content]"));
    const tasks = rows.map((r) => [r.dataset.task, r.dataset.content]);
    const body = { domain: bulk.dataset.domain, query: bulk.dataset.query, decision: decision, tasks: tasks };
    if (decision === "reject") {
      body.reason = $("#bulk-reason").value;
      if (!body.reason) {
        say("#bulk-message", "pick a reason first", "error");
        $("#bulk-reason").focus();
        return;
      }
    }
    const verb = decision === "accept" ? "Accept" : "Reject (" + body.reason + ")";
    if (!window.confirm(verb + " all " + tasks.length + " tasks of this list? One decision line per task is written."))
      return;
    say("#bulk-message", "saving…", "");
    try {
      const { ok, answer } = await post("/api/bulk", body);
      if (!ok) {
        say("#bulk-message", answer.error || "refused", "error");
        return;
      }
      say("#bulk-message", "saved " + answer.written + " decisions", "saved");
      window.setTimeout(() => window.location.reload(), 600);
    } catch (e) {
      say("#bulk-message", "could not reach tracer review: " + e, "error");
    }
  }
  if (bulk) {
    $("#bulk-accept").addEventListener("click", () => bulkDecide("accept"));
    $("#bulk-reject").addEventListener("click", () => bulkDecide("reject"));
  }

  // Graph edges: keep or drop (with a reason).
  const edges = $("#edges");
  if (edges) {
    edges.addEventListener("click", async (ev) => {
      const button = ev.target.closest("button");
      if (!button) return;
      const row = button.closest("tr.edge-row");
      const decision = button.classList.contains("edge-drop") ? "drop" : "keep";
      const message = row.querySelector(".edge-message");
      const body = { domain: edges.dataset.domain, from: row.dataset.from, to: row.dataset.to, decision: decision };
      if (decision === "drop") {
        body.reason = row.querySelector(".edge-reason").value.trim();
        if (!body.reason) {
          say(message, "write why this edge goes first", "error");
          row.querySelector(".edge-reason").focus();
          return;
        }
      }
      try {
        const { ok, answer } = await post("/api/edge", body);
        if (!ok) {
          say(message, answer.error || "refused", "error");
          return;
        }
        say(message, "saved: " + answer.state + " (tracer run graphs applies it)", "saved");
        row.querySelector(".edge-decision").textContent = answer.state;
      } catch (e) {
        say(message, "could not reach tracer review: " + e, "error");
      }
    });
  }

  // The index while the run's artifacts are still being read.
  if (document.querySelector("tr[data-loading]")) window.setTimeout(() => window.location.reload(), 700);

  document.addEventListener("keydown", (ev) => {
    const t = ev.target;
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT")) {
      if (ev.key === "Escape") t.blur();
      if (ev.key === "Enter" && t.id === "reason-text") reject();
      return;
    }
    const go = (sel) => {
      const a = $(sel);
      if (a) window.location.href = a.href;
    };
    switch (ev.key) {
      case "a": if (panel) accept(); break;
      case "r": if (panel) { const r = $("#reason"); if (r.value) reject(); else r.focus(); } break;
      case "e": if (panel) { ev.preventDefault(); toggleEdit(); } break;
      case "u": if (panel) undo(); break;
      case "j": go("#next"); break;
      case "k": go("#prev"); break;
      case "g": go("#graph-link"); break;
      case "/": { const s = $("#search"); if (s) { ev.preventDefault(); s.focus(); } break; }
      default: return;
    }
  });
})();
