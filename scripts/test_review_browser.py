#!/usr/bin/env python3
"""`make test-review`: `tracer review` driven in a real headless Chromium (selenium +
Debian's chromium-driver).

On a project copy (the repository's stages/graphs/policies/anchors, smaller grounding
caps) it runs the offline pipeline for airline through `eval`, starts `tracer review` on a
free loopback port, and in the browser: filters the list (with its progress), searches,
opens a task, accepts one (key a; the page moves on to the next open task and the progress
counts one fewer), rejects one with a reason (key r), undoes that (key u: back on the task,
pending again), makes one valid edit (key e; the page then shows the edited value beside
the original and the edit's diff) and one invalid edit (refused beside the button, in a
live region, nothing written), bulk-accepts a filtered list after a confirmation stating
the count (exactly that many lines), has a second reviewer disagree (a conflict), and drops
a dependency-graph edge. It then asserts the reviews file, re-runs the release and asserts
its counts in review.json and `tracer stats` (with the reviewers' agreement), and that the
next `tracer run graphs` leaves the dropped edge out. With --screenshot PATH it saves the
task page as a PNG.

Exit status 0 when every step held; a failed step prints what it saw.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def tracer_env(root, output):
    env = dict(os.environ)
    env.update(
        TRACER_ROOT=str(root),
        TRACER_OUTPUT=str(output),
        TRACER_EMBED_MODEL=str(ROOT / ".cache/models/all-MiniLM-L6-v2"),
        TRACER_EMOTION_CACHE=str(ROOT / ".cache/emotion"),
        TRACER_REVIEWER="browser-test",
    )
    return env


def run(tracer, env, *args):
    out = subprocess.run([tracer, *args], env=env, cwd=env["TRACER_ROOT"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"tracer {' '.join(args)} failed:\n{out.stderr[-3000:]}")
    return out.stdout + out.stderr


def check(cond, what):
    if not cond:
        sys.exit(f"FAILED: {what}")
    print(f"ok: {what}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tracer", default=str(ROOT / "target/debug/tracer"))
    ap.add_argument("--screenshot", help="save the task page here (PNG)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary project")
    a = ap.parse_args()

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import Select, WebDriverWait
    from selenium.common.exceptions import (
        StaleElementReferenceException,
        TimeoutException,
        WebDriverException,
    )

    work = Path(tempfile.mkdtemp(prefix="tracer-review-browser-"))
    root, output = work / "project", work / "output"
    for d in ["stages", "graphs", "policies", "emotion_anchors"]:
        shutil.copytree(ROOT / d, root / d)
    (root / "stages/grounded.toml").write_text(
        "max_train = 80\nmax_eval = 30\nmax_customers = 24\nmax_proposals = 6\nmax_expansions = 400\n"
    )
    env = tracer_env(root, output)
    t0 = time.time()
    run(a.tracer, env, "run", "eval", "--domain", "airline")
    print(f"ok: offline run through eval ({time.time() - t0:.0f} s)")

    def start_server(reviewer):
        proc = subprocess.Popen(
            [a.tracer, "review", "--domain", "airline", "--port", "0", "--reviewer", reviewer],
            env=env, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        line = proc.stdout.readline()
        url = next((w for w in line.split() if w.startswith("http://")), None)
        return proc, url, line

    servers = []
    driver = None
    reviews_file = root / "reviews/airline.jsonl"

    def lines():
        if not reviews_file.exists():
            return []
        return [json.loads(l) for l in reviews_file.read_text().splitlines() if l.strip()]

    try:
        server, url, line = start_server("browser-test")
        servers.append(server)
        check(url is not None, f"tracer review printed its address ({line.strip()})")
        base = url.rstrip("/")

        opts = webdriver.ChromeOptions()
        for arg in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1800"]:
            opts.add_argument(arg)
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        if chromium:
            opts.binary_location = chromium
        driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
        driver = webdriver.Chrome(service=Service(driver_path), options=opts)
        # Pages change under the polls (auto-advance, reloads): an element gone in between is
        # polled again, not an error.
        wait = WebDriverWait(driver, 30, poll_frequency=0.1, ignored_exceptions=(WebDriverException,))

        def message_is(prefix, where="message"):
            wait.until(lambda d: d.find_element(By.ID, where).text.startswith(prefix))
            return driver.find_element(By.ID, where).text

        def key(k):
            driver.find_element(By.TAG_NAME, "body").send_keys(k)

        def task_id():
            try:
                return driver.find_element(By.ID, "task-id").text
            except WebDriverException:
                return ""

        def on_task_other_than(old):
            wait.until(lambda d: task_id() not in ("", old) and d.find_elements(By.ID, "decide"))
            return task_id()

        def progress():
            p = driver.find_element(By.ID, "progress")
            return int(p.get_attribute("data-left")), int(p.get_attribute("data-total")), p.text

        # The index answers at once while the domain is read, then shows its counts.
        t0 = time.time()
        driver.get(base + "/")
        print(f"   (first page in {time.time() - t0:.2f} s)")
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#domains tr[data-domain=airline]"))
        check("airline" in driver.find_element(By.ID, "domains").text, "index lists airline with its counts")
        driver.find_element(By.LINK_TEXT, "airline").click()
        Select(driver.find_element(By.NAME, "screen")).select_by_value("passed")
        driver.find_element(By.CSS_SELECTOR, "form.filters button").click()
        wait.until(lambda d: "screen=passed" in d.current_url)
        rows = driver.find_elements(By.CSS_SELECTOR, "table.tasks tbody tr")
        row_ids = [r.get_attribute("data-task") for r in rows]
        count = driver.find_element(By.ID, "count").text
        check(len(rows) >= 8 and count.startswith(f"{len(rows)} of"), f"filtered list: {count}")
        left, total, text = progress()
        check(left == total == len(rows) and text == f"{left} of {total} left", f"the list shows progress ({text})")
        first_id = row_ids[0]
        # Search by id narrows the list to that task.
        box = driver.find_element(By.ID, "search")
        box.send_keys(first_id)
        box.submit()
        wait.until(lambda d: "q=" in d.current_url)

        # The URL changes when the new page starts loading: wait for its rows, not the old ones.
        def searched(d):
            try:
                found = d.find_elements(By.CSS_SELECTOR, "table.tasks tbody tr")
                return len(found) == 1 and found[0].get_attribute("data-task") == first_id
            except StaleElementReferenceException:
                return False

        try:
            wait.until(searched)
            narrowed = True
        except TimeoutException:
            narrowed = False
        check(narrowed, "search finds the task")
        driver.back()
        driver.back()
        wait.until(lambda d: "q=" not in d.current_url)

        # Open the first task; accept it with the key: the page moves on to the next open
        # task (auto-advance), whose progress counts one fewer left.
        driver.find_elements(By.CSS_SELECTOR, "a.task-link")[0].click()
        wait.until(lambda d: d.find_elements(By.ID, "decide"))
        check(task_id() == first_id, "task page opens")
        page = driver.page_source
        check("Gold actions" in page and "Episodes (" in page and "Path on the dependency graph" in page,
              "task page shows gold actions, episodes and the graph path")
        check(driver.find_element(By.ID, "auto-advance").is_selected(), "auto-advance is on by default")
        if a.screenshot:
            # Unfold the first episode so the picture shows a conversation.
            eps = driver.find_elements(By.CSS_SELECTOR, "details.episode summary")
            if eps:
                eps[0].click()
            driver.execute_script("window.scrollTo(0, 0)")
            driver.save_screenshot(a.screenshot)
            print(f"ok: screenshot {a.screenshot}")
        left0 = progress()[0]
        key("a")
        second_id = on_task_other_than(first_id)
        check(second_id == row_ids[1], "key a accepts and moves on to the next open task")
        check(progress()[0] == left0 - 1, f"progress is updated ({progress()[2]})")

        # Reject with a reason (it moves on too), then undo: back on that task, pending again.
        Select(driver.find_element(By.ID, "reason")).select_by_visible_text("ambiguous instruction")
        driver.find_element(By.TAG_NAME, "body").click()
        key("r")
        third_id = on_task_other_than(second_id)
        check(lines()[-1]["decision"] == "reject", "key r rejects with the chosen reason")
        key("u")
        wait.until(lambda d: task_id() == second_id)
        wait.until(lambda d: d.find_element(By.ID, "review-state").text == "pending")
        check(lines()[-1]["decision"] == "undo" and len(lines()) == 3,
              "key u undoes the last decision with an appended line; the task is pending again")
        Select(driver.find_element(By.ID, "reason")).select_by_visible_text("ambiguous instruction")
        driver.find_element(By.TAG_NAME, "body").click()
        key("r")
        check(on_task_other_than(second_id) == third_id, "rejected again, on to the next task")

        # A valid edit of the emotion instruction, staying on the task (auto-advance off):
        # the page then shows the edited values beside the original, and the edit's diff.
        advance = driver.find_element(By.ID, "auto-advance")
        advance.click()
        check(not advance.is_selected(), "auto-advance can be switched off")
        check(not driver.find_element(By.ID, "edit-form").is_displayed(), "the edit form starts folded")
        original = driver.find_element(By.ID, "emotion-instruction").text
        key("e")
        emo = driver.find_element(By.ID, "edit-emotion")
        check(emo.is_displayed(), "key e opens the edit form")
        edited = ("You are worn out and want this settled quickly; you keep your answers short "
                  "and say thanks once it is done.")
        emo.clear()
        emo.send_keys(edited)
        driver.find_element(By.ID, "save-edit").click()
        check(message_is("saved", "edit-message") == "saved: edited", "a valid edit is verified and saved")
        wait.until(lambda d: d.find_elements(By.ID, "emotion-instruction-original"))
        check(task_id() == third_id, "auto-advance off: the page stays on the task")
        check(driver.find_element(By.ID, "emotion-instruction").text == edited
              and driver.find_element(By.ID, "emotion-instruction-original").text == original,
              "the task shows the edited value, the original beside it")
        diff = driver.find_element(By.CSS_SELECTOR, "#history dl.diff")
        check(diff.find_elements(By.TAG_NAME, "ins") and diff.find_elements(By.TAG_NAME, "del")
              and "emotion instruction" in diff.text, "the history shows the edit's diff")
        check(driver.find_element(By.ID, "edit-emotion").get_attribute("value") == edited,
              "the edit form starts from the edited values")

        # Next task: an edit whose replay fails is refused; the reason appears beside the
        # save button, in a live region, and nothing is written.
        key("j")
        fourth_id = on_task_other_than(third_id)
        before = len(lines())
        key("e")
        broken = False
        for area in driver.find_elements(By.CSS_SELECTOR, "textarea.edit-arg"):
            args = json.loads(area.get_attribute("value"))
            ids = [k for k in (args or {}) if k.endswith("_id")]
            if ids:
                args[ids[0]] = "NO_SUCH_ID_123"
                area.clear()
                area.send_keys(json.dumps(args))
                broken = True
                break
        check(broken, "an id argument to break")
        driver.find_element(By.ID, "save-edit").click()
        msg = message_is("edit refused", "edit-message")
        near = driver.find_element(By.CSS_SELECTOR, "#edit-form .save")
        live = driver.find_element(By.ID, "edit-message")
        check(near.find_elements(By.ID, "save-edit") and near.find_elements(By.ID, "edit-message")
              and live.get_attribute("role") == "alert" and live.get_attribute("aria-live") == "assertive",
              f"an invalid edit is refused beside the button, announced ({msg[:90]})")
        check(len(lines()) == before and task_id() == fourth_id, "a refused edit writes nothing")

        # Bulk: accept the pending tasks of one emotion family, after a confirmation that
        # states the count: exactly that many lines.
        driver.get(base + "/d/airline?screen=passed&review=pending")
        row = driver.find_element(By.CSS_SELECTOR, "table.tasks tbody tr[data-content]")
        family = row.find_elements(By.TAG_NAME, "td")[4].text.split(" / ")[0]
        driver.get(base + "/d/airline?" + urllib.parse.urlencode(
            {"screen": "passed", "review": "pending", "family": family}))
        bulk = driver.find_element(By.ID, "bulk")
        n = int(bulk.get_attribute("data-count"))
        shown = len(driver.find_elements(By.CSS_SELECTOR, "table.tasks tbody tr[data-content]"))
        check(n >= 1 and n == shown, f"the bulk panel offers the {n} tasks of the list ({family})")
        before = len(lines())
        driver.find_element(By.CSS_SELECTOR, "#bulk summary").click()
        driver.find_element(By.ID, "bulk-accept").click()
        alert = wait.until(EC.alert_is_present())
        check(f"all {n} tasks" in alert.text, f"the confirmation states the count ({alert.text})")
        alert.accept()
        message_is("saved", "bulk-message")
        added = lines()[before:]
        check(len(added) == n and all(l["decision"] == "accept" for l in added),
              f"a bulk accept writes exactly {n} lines")
        wait.until(lambda d: not d.find_elements(By.CSS_SELECTOR, "table.tasks tbody tr[data-content]"))
        check(True, "the list (pending) is empty after the bulk accept")

        # A second reviewer disagrees on the first task: a conflict, shown to both.
        other, url2, _ = start_server("second-reviewer")
        servers.append(other)
        base2 = url2.rstrip("/")
        driver.get(base2 + "/d/airline/t/" + first_id)
        wait.until(lambda d: d.find_elements(By.ID, "decide"))
        Select(driver.find_element(By.ID, "reason")).select_by_visible_text("unsolvable")
        driver.find_element(By.TAG_NAME, "body").click()
        key("r")
        wait.until(lambda d: any(l["reviewer"] == "second-reviewer" for l in lines()))
        driver.get(base + "/d/airline/t/" + first_id)
        wait.until(lambda d: d.find_elements(By.ID, "decide"))
        check(driver.find_element(By.ID, "review-state").text == "conflict"
              and "second-reviewer" in driver.find_element(By.ID, "conflict").text,
              "two reviewers' different decisions show a conflict")
        driver.get(base + "/d/airline?review=conflict")
        check([r.get_attribute("data-task") for r in driver.find_elements(By.CSS_SELECTOR, "table.tasks tbody tr")]
              == [first_id], "the list filters the conflict")

        # The graph page draws the domain's graph; drop an edge into a root with a reason.
        driver.get(base + "/d/airline/t/" + fourth_id)
        wait.until(lambda d: d.find_elements(By.ID, "decide"))
        key("g")
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "svg.graph"))
        edges = driver.find_elements(By.CSS_SELECTOR, "svg.graph line.edge")
        check(len(edges) > 10, f"graph page draws {len(edges)} edges")
        graph = json.loads((root / "graphs/airline.json").read_text())
        roots = {n["tool"] for n in graph["nodes"] if n.get("root")}
        to_root = next(e for e in graph["edges"] if e["to"] in roots)
        row = driver.find_element(
            By.CSS_SELECTOR, f'tr.edge-row[data-from="{to_root["from"]}"][data-to="{to_root["to"]}"]')
        row.find_element(By.CLASS_NAME, "edge-drop").click()
        wait.until(lambda d: row.find_element(By.CLASS_NAME, "edge-message").text.startswith("write why"))
        row.find_element(By.CLASS_NAME, "edge-reason").send_keys("a conversation starts here")
        row.find_element(By.CLASS_NAME, "edge-drop").click()
        wait.until(lambda d: row.find_element(By.CLASS_NAME, "edge-message").text.startswith("saved: dropped"))
        driver.refresh()
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "svg.graph line.edge.dropped"))
        check("dropped by browser-test" in driver.find_element(By.ID, "edges").text,
              "an edge decision is saved and shown on the graph page")

        decisions = [(l["decision"], l["reviewer"]) for l in lines()]
        check(decisions[:5] == [("accept", "browser-test"), ("reject", "browser-test"), ("undo", "browser-test"),
                                ("reject", "browser-test"), ("edit", "browser-test")]
              and decisions[-1] == ("reject", "second-reviewer"),
              f"reviews file holds each decision in order ({decisions[:5]} ... {decisions[-1]})")
        check(lines()[1]["reason"] == "ambiguous instruction", "the reject carries its reason")
    finally:
        if driver:
            driver.quit()
        for s in servers:
            s.kill()
            s.wait()

    # The release, before the graph changes (a changed graph regenerates every task): the
    # decisions applied, the conflict counted, the agreement in `tracer stats`.
    edge_file = root / "reviews/graphs/airline.jsonl"
    dropped = edge_file.read_text()
    edge_file.unlink()
    run(a.tracer, env, "run", "eval", "--domain", "airline")
    review = json.loads((output / "reviewed/domain=airline/review.json").read_text())
    check(review["accepted"] == n and review["rejected"] == 1 and review["edited"] == 1
          and review["emotion_edits"] == 1 and review["conflicts"] == 1, f"the release counts the decisions ({review})")
    check(review["released"] == review["candidates"] - 1, "everything but the rejected task is released")
    stats = run(a.tracer, env, "stats", "--domain", "airline")
    check("Manual review of the evaluation release" in stats, "tracer stats shows the review table")
    check("Agreement between reviewers" in stats and "| airline | 1 | 0 | 0.0% | 0.00 |" in stats,
          "tracer stats shows the agreement of the two reviewers")

    # The graph-edge decision: the next `tracer run graphs` leaves the edge out.
    edge_file.write_text(dropped)
    out = run(a.tracer, env, "run", "graphs", "--domain", "airline")
    written = json.loads((output / "graphs/domain=airline/graph.json").read_text())
    pairs = {(e["from"], e["to"]) for e in written["edges"]}
    check((to_root["from"], to_root["to"]) not in pairs and len(pairs) == len(graph["edges"]) - 1
          and "1 dropped in review" in out, "the graphs stage uses the reviewed graph")
    status = run(a.tracer, env, "status", "--domain", "airline")
    check("| traces | airline | stale" in status, "the stages after it are stale")
    if a.keep:
        print(f"kept: {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    print("review browser test: all steps passed")


if __name__ == "__main__":
    main()
