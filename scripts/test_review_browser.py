#!/usr/bin/env python3
"""`make test-review`: `tracer review` driven in a real headless Chromium (selenium +
Debian's chromium-driver).

On a project copy (the repository's stages/graphs/policies/anchors, smaller grounding
caps) it runs the offline pipeline for airline through `eval`, starts `tracer review` on a
free loopback port, and in the browser: filters the list, searches, opens a task, accepts
one (key a), rejects one with a reason (key r), makes one valid edit (key e) and one
invalid edit (refused, nothing written), and opens the dependency graph. It then asserts
the reviews file, re-runs the release and asserts its counts in review.json, the eval
artifact and `tracer stats`. With --screenshot PATH it saves the task page as a PNG.

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
    return out.stdout


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
    from selenium.webdriver.support.ui import Select, WebDriverWait
    from selenium.common.exceptions import StaleElementReferenceException, TimeoutException

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

    server = subprocess.Popen(
        [a.tracer, "review", "--domain", "airline", "--port", "0"],
        env=env, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    driver = None
    try:
        line = server.stdout.readline()
        url = next((w for w in line.split() if w.startswith("http://")), None)
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
        wait = WebDriverWait(driver, 20)

        def message_is(prefix):
            wait.until(lambda d: d.find_element(By.ID, "message").text.startswith(prefix))
            return driver.find_element(By.ID, "message").text

        def key(k):
            driver.find_element(By.TAG_NAME, "body").send_keys(k)

        # The index, then the list filtered to screened tasks.
        driver.get(base + "/")
        check("airline" in driver.find_element(By.TAG_NAME, "table").text, "index lists airline")
        driver.find_element(By.LINK_TEXT, "airline").click()
        Select(driver.find_element(By.NAME, "screen")).select_by_value("passed")
        driver.find_element(By.CSS_SELECTOR, "form.filters button").click()
        wait.until(lambda d: "screen=passed" in d.current_url)
        rows = driver.find_elements(By.CSS_SELECTOR, "table.tasks tbody tr")
        count = driver.find_element(By.ID, "count").text
        check(len(rows) >= 4 and count.startswith(f"{len(rows)} of"), f"filtered list: {count}")
        first_id = rows[0].get_attribute("data-task")
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

        # Open the first task; accept it with the key.
        driver.find_elements(By.CSS_SELECTOR, "a.task-link")[0].click()
        wait.until(lambda d: d.find_elements(By.ID, "decide"))
        check(driver.find_element(By.ID, "task-id").text == first_id, "task page opens")
        page = driver.page_source
        check("Gold actions" in page and "Episodes (" in page and "Path on the dependency graph" in page,
              "task page shows gold actions, episodes and the graph path")
        if a.screenshot:
            # Unfold the first episode so the picture shows a conversation.
            eps = driver.find_elements(By.CSS_SELECTOR, "details.episode summary")
            if eps:
                eps[0].click()
            driver.execute_script("window.scrollTo(0, 0)")
            driver.save_screenshot(a.screenshot)
            print(f"ok: screenshot {a.screenshot}")
        key("a")
        check(message_is("saved") == "saved: accepted", "key a accepts")

        # Next task: reject with a reason from the list.
        key("j")
        wait.until(lambda d: d.find_element(By.ID, "task-id").text != first_id)
        second_id = driver.find_element(By.ID, "task-id").text
        Select(driver.find_element(By.ID, "reason")).select_by_visible_text("ambiguous instruction")
        driver.find_element(By.TAG_NAME, "body").click()
        key("r")
        check(message_is("saved") == "saved: rejected", "key r rejects with the chosen reason")

        # Next task: a valid edit of the emotion instruction.
        key("j")
        wait.until(lambda d: d.find_element(By.ID, "task-id").text != second_id)
        third_id = driver.find_element(By.ID, "task-id").text
        check(not driver.find_element(By.ID, "edit-form").is_displayed(), "the edit form starts folded")
        key("e")
        emo = driver.find_element(By.ID, "edit-emotion")
        check(emo.is_displayed(), "key e opens the edit form")
        emo.clear()
        emo.send_keys("You are worn out and want this settled quickly; you keep your answers short "
                      "and say thanks once it is done.")
        driver.find_element(By.ID, "save-edit").click()
        check(message_is("saved") == "saved: edited", "a valid edit is verified and saved")

        # Next task: an edit whose replay fails is refused, nothing written.
        key("j")
        wait.until(lambda d: d.find_element(By.ID, "task-id").text != third_id)
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
        msg = message_is("edit refused")
        check("edit refused" in msg, f"an invalid edit is refused with the reason ({msg[:100]})")

        # The graph page draws the domain's graph with the task's path.
        key("g")
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "svg.graph"))
        edges = driver.find_elements(By.CSS_SELECTOR, "svg.graph line.edge")
        check(len(edges) > 10, f"graph page draws {len(edges)} edges")

        lines = [json.loads(l) for l in (root / "reviews/airline.jsonl").read_text().splitlines()]
        check([l["decision"] for l in lines] == ["accept", "reject", "edit"],
              f"reviews file holds accept, reject, edit ({[l['decision'] for l in lines]})")
        check(all(l["reviewer"] == "browser-test" for l in lines), "each line names the reviewer")
        check(lines[1]["reason"] == "ambiguous instruction", "the reject carries its reason")
    finally:
        if driver:
            driver.quit()
        server.kill()
        server.wait()

    run(a.tracer, env, "run", "eval", "--domain", "airline")
    review = json.loads((output / "reviewed/domain=airline/review.json").read_text())
    check(review["accepted"] == 1 and review["rejected"] == 1 and review["edited"] == 1
          and review["emotion_edits"] == 1, f"the release counts the decisions ({review})")
    check(review["released"] == review["candidates"] - 1, "everything but the rejected task is released")
    stats = run(a.tracer, env, "stats", "--domain", "airline")
    check("Manual review of the evaluation release" in stats, "tracer stats shows the review table")
    if a.keep:
        print(f"kept: {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    print("review browser test: all steps passed")


if __name__ == "__main__":
    main()
