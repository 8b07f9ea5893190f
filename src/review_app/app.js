// tracer review: keyboard shortcuts and decisions posted as JSON. No dependencies.
(function () {
  "use strict";
  const $ = (sel) => document.querySelector(sel);
  const panel = $("#decide");
  const message = $("#message");

  function say(text, kind) {
    if (!message) return;
    message.textContent = text;
    message.className = "message " + kind;
  }

  async function decide(body) {
    const payload = Object.assign(
      { domain: panel.dataset.domain, task_id: panel.dataset.task, content: panel.dataset.content },
      body
    );
    say("saving…", "");
    try {
      const res = await fetch("/api/decide", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(payload),
      });
      const answer = await res.json();
      if (!res.ok) {
        say(answer.error || "refused", "error");
        return false;
      }
      say("saved: " + answer.state, "saved");
      const state = $("#review-state");
      if (state) state.innerHTML = '<span class="badge ok">' + answer.state + "</span>";
      return true;
    } catch (e) {
      say("could not reach tracer review: " + e, "error");
      return false;
    }
  }

  function accept() {
    decide({ decision: "accept" });
  }

  function reject() {
    const pick = $("#reason").value;
    const text = $("#reason-text").value.trim();
    const reason = pick && pick !== "other" ? (text ? pick + ": " + text : pick) : text;
    if (!reason) {
      say("pick or write a reason first", "error");
      $("#reason").focus();
      return;
    }
    decide({ decision: "reject", reason: reason });
  }

  function toggleEdit() {
    const form = $("#edit-form");
    form.hidden = !form.hidden;
    if (!form.hidden) $("#edit-instruction").focus();
  }

  // Only the fields that differ from what the page showed go into the edit.
  function collectEdit() {
    const edit = {};
    const ins = $("#edit-instruction");
    if (ins.value !== ins.defaultValue) edit.instruction = ins.value;
    const emo = $("#edit-emotion");
    if (emo.value !== emo.defaultValue) edit.emotion_instruction = emo.value;
    const outs = $("#edit-outputs");
    if (outs.value !== outs.defaultValue)
      edit.outputs = outs.value.split("\n").map((s) => s.trim()).filter((s) => s);
    const args = Array.from(document.querySelectorAll(".edit-arg"));
    if (args.some((a) => a.value !== a.defaultValue)) {
      edit.arguments = [];
      for (const a of args) {
        try {
          edit.arguments.push(JSON.parse(a.value));
        } catch (e) {
          throw new Error("arguments[" + a.dataset.index + "]: not JSON (" + e.message + ")");
        }
      }
    }
    return edit;
  }

  if (panel) {
    $("#accept").addEventListener("click", accept);
    $("#reject").addEventListener("click", reject);
    $("#edit-toggle").addEventListener("click", toggleEdit);
    $("#edit-form").addEventListener("submit", async (ev) => {
      ev.preventDefault();
      let edit;
      try {
        edit = collectEdit();
      } catch (e) {
        say(e.message, "error");
        return;
      }
      if (Object.keys(edit).length === 0) {
        say("nothing changed", "error");
        return;
      }
      if (await decide({ decision: "edit", edit: edit })) {
        for (const el of document.querySelectorAll("#edit-form textarea")) el.defaultValue = el.value;
      }
    });
  }

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
      case "j": go("#next"); break;
      case "k": go("#prev"); break;
      case "g": go("#graph-link"); break;
      case "/": { const s = $("#search"); if (s) { ev.preventDefault(); s.focus(); } break; }
      default: return;
    }
  });
})();
