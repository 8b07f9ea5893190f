"""Play one episode of a `tracer serve` task with any OpenAI-compatible model (stdlib only).

    python3 examples/serve_episode.py --env http://127.0.0.1:8766 --task TASK_ID \
        --model-url http://127.0.0.1:8000/v1 --model Qwen/Qwen3-8B
"""
import argparse, json, os, urllib.request


def post(url, body, key=None):
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    req = urllib.request.Request(url, json.dumps(body).encode(), headers)
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.load(r)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--env", default="http://127.0.0.1:8766")
    p.add_argument("--task", required=True)
    p.add_argument("--model-url", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--seed", type=int)
    p.add_argument("--max-turns", type=int, default=30)
    a = p.parse_args()
    reset = {"task_id": a.task, "agent_model": a.model}
    if a.seed is not None:
        reset["seed"] = a.seed
    r = post(f"{a.env}/reset", reset, os.environ.get("TRACER_SERVE_TOKEN"))
    session, obs = r["session"], r["observation"]
    messages, done = list(obs["messages"]), r["done"]
    for _ in range(a.max_turns):
        if done:
            break
        answer = post(f"{a.model_url}/chat/completions",
                      {"model": a.model, "messages": messages, "tools": obs["tools"]},
                      os.environ.get("OPENAI_API_KEY"))
        m = answer["choices"][0]["message"]
        message = {"role": "assistant", "content": m.get("content")}
        if m.get("tool_calls"):
            message["tool_calls"] = m["tool_calls"]
        step = post(f"{a.env}/step", {"session": session, "action": {"message": message}},
                    os.environ.get("TRACER_SERVE_TOKEN"))
        messages += [message] + step["observation"]["messages"]
        done = step["done"]
    v = post(f"{a.env}/verify", {"session": session, "end": True},
             os.environ.get("TRACER_SERVE_TOKEN"))
    post(f"{a.env}/close", {"session": session}, os.environ.get("TRACER_SERVE_TOKEN"))
    print(json.dumps({"task_id": a.task, "reward": v["reward"], "termination": v["termination"],
                      "breakdown": v["breakdown"], "turns": len(messages)}))


if __name__ == "__main__":
    main()
