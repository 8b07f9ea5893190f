"""A trainer-owned endpoint (AReaL / rLLM / OpenRLHF / ART shape): the trainer serves its
policy on an OpenAI-compatible URL and asks `tracer serve` to play whole episodes against
it (`POST /episode`), then keeps the rows it can learn from. Stdlib only; written against
tracer serve's HTTP API (this repository) and the OpenAI chat-completions wire format.

    python3 examples/trainer_endpoint.py --env http://127.0.0.1:8766 \
        --model-url http://127.0.0.1:8000/v1 --model my-policy --tasks 8
"""
import argparse, json, os, urllib.request


def call(url, body=None):
    headers = {"Content-Type": "application/json"}
    if os.environ.get("TRACER_SERVE_TOKEN"):
        headers["Authorization"] = "Bearer " + os.environ["TRACER_SERVE_TOKEN"]
    data = None if body is None else json.dumps(body).encode()
    with urllib.request.urlopen(urllib.request.Request(url, data, headers), timeout=3600) as r:
        return json.load(r)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--env", default="http://127.0.0.1:8766")
    p.add_argument("--model-url", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--tasks", type=int, default=8)
    p.add_argument("--split", default="train")
    a = p.parse_args()
    tasks = call(f"{a.env}/tasks?split={a.split}&limit={a.tasks}")["tasks"]
    batch, dropped = [], []
    for t in tasks:
        v = call(f"{a.env}/episode", {"task_id": t["task_id"],
                                      "agent": {"base_url": a.model_url, "model": a.model}})
        if v["reward"] is None:  # an endpoint failed: no signal for the policy
            dropped.append({"task_id": t["task_id"], "failure": v["failure"]})
            continue
        messages = json.loads(v["record"]["messages"])
        # Loss mask: the policy's own messages only (never the simulated customer's).
        mask = [s == "policy" for s in v["message_sources"]]
        batch.append({"task_id": t["task_id"], "reward": v["reward"],
                      "messages": messages, "loss_mask": mask, "failure": v["failure"]})
    print(json.dumps({"episodes": len(batch), "dropped": dropped,
                      "rewards": [b["reward"] for b in batch],
                      "masked_customer_turns": sum(m.count(False) for m in
                                                   (b["loss_mask"] for b in batch))}))


if __name__ == "__main__":
    main()
