"""Episodes of `tracer serve` through OpenEnv's own client: the loop a TRL or torchforge
rollout function runs. Written against openenv 0.10.0 (PyPI); the policy is any
OpenAI-compatible server (the trainer's vLLM, say).

    python examples/openenv_policy.py --env http://127.0.0.1:8766 --task TASK_ID \
        --model-url http://127.0.0.1:8000/v1 --model Qwen/Qwen3-8B
"""
import argparse, json, urllib.request

from openenv import GenericEnvClient


def chat(url, model, messages, tools):
    body = {"model": model, "messages": messages, "tools": tools}
    req = urllib.request.Request(f"{url}/chat/completions", json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.load(r)["choices"][0]["message"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--env", default="http://127.0.0.1:8766")
    p.add_argument("--task", required=True)
    p.add_argument("--model-url", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--max-turns", type=int, default=30)
    a = p.parse_args()
    with GenericEnvClient(base_url=a.env).sync() as env:
        r = env.reset(task_id=a.task, agent_model=a.model)
        messages, tools = r.observation["messages"], r.observation["tools"]
        # Train on the policy's messages only: the customer's are the simulator's tokens.
        sources = list(r.observation["message_sources"])
        for _ in range(a.max_turns):
            if r.done:
                break
            said = chat(a.model_url, a.model, messages, tools)
            said = {k: said.get(k) for k in ("role", "content", "tool_calls") if said.get(k)}
            r = env.step({"message": said})
            messages += [said] + r.observation["messages"]
            sources += ["policy"] + r.observation["message_sources"]
        # reward: 1 / 0 / -1 when the episode is over; None when an endpoint failed (no
        # signal: drop the episode). `failure` says whose failure it was and why.
        print(json.dumps({"task_id": a.task, "reward": r.reward, "done": r.done,
                          "failure": r.observation.get("failure"),
                          "policy_messages": sources.count("policy")}))


if __name__ == "__main__":
    main()
