"""OpenEnv's own validator and client (PyPI `openenv`) against a running `tracer serve`.

Run by tests/serve_openenv.rs: argv[1] the server's address, argv[2] a JSON file of
episodes to replay ({task_id, trial, messages, reward} rows of the rollouts artifact).
Prints one JSON object with what it saw; the Rust test asserts on it.
"""

import json
import os
import subprocess
import sys

from openenv import GenericEnvClient

addr, episodes_path = sys.argv[1], sys.argv[2]
url = f"http://{addr}"
out = {}

# 1. `openenv validate --url`, the CLI itself.
cli = os.path.join(os.path.dirname(sys.executable), "openenv")
run = subprocess.run([cli, "validate", "--url", url, "--json"], capture_output=True, text=True)
out["validate_rc"] = run.returncode
try:
    report = json.loads(run.stdout)
    out["validate_passed"] = report.get("passed")
    out["validate_failed"] = [c["id"] for c in report.get("criteria", []) if not c.get("passed")]
except ValueError:
    out["validate_passed"] = None
    out["validate_output"] = run.stdout[-2000:] + run.stderr[-2000:]

# 2. Replay episodes through the client: one connection, a reset per episode.
episodes = json.load(open(episodes_path))
played = []
with GenericEnvClient(base_url=url).sync() as env:
    for ep in episodes:
        transcript = json.loads(ep["messages"])
        r = env.reset(task_id=ep["task_id"], trial=ep["trial"], agent_model="replay")
        seen = list(r.observation["messages"])
        sources = list(r.observation["message_sources"])
        mismatch = None
        steps = 0
        while not r.done:
            said = transcript[len(seen)]
            # Both action shapes: the bare assistant message and {"message": ...}.
            action = {"message": said} if steps % 2 else {k: v for k, v in said.items() if k != "role"}
            r = env.step(action)
            steps += 1
            added = r.observation["messages"]
            if transcript[len(seen) + 1 : len(seen) + 1 + len(added)] != added and mismatch is None:
                mismatch = len(seen)
            seen += [said] + added
            sources += ["policy"] + r.observation["message_sources"]
        state = env.state()
        played.append({
            "task_id": ep["task_id"],
            "want": ep["reward"],
            "reward": r.reward,
            "same_transcript": seen == transcript,
            "mismatch_at": mismatch,
            "failure": r.metadata.get("failure"),
            "record_reward": r.metadata["record"]["reward"],
            "customer_marked": all(
                (s == "customer") == (m["role"] == "user") for s, m in zip(sources, seen)
            ),
            "state_steps": state["step_count"],
            "state_episode": state["episode_id"],
        })

    # 3. A policy that never helps: the episode fails (reward 0 or -1), and says whose
    # failure it was.
    r = env.reset(task_id=episodes[0]["task_id"])
    while not r.done:
        r = env.step({"content": "I am sorry, I cannot do that. Is there anything else?"})
    out["failing"] = {"reward": r.reward, "termination": r.observation["termination"],
                      "failure": r.metadata.get("failure")}

    # 4. A bad step is an error the client raises; the session goes on.
    try:
        env.step({"role": "user", "content": "not the agent"})
        out["bad_step"] = "answered"
    except RuntimeError as e:
        out["bad_step"] = str(e)

out["played"] = played
print(json.dumps(out))
