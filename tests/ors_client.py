"""The Open Reward Standard SDK (PyPI `openreward`) against a running `tracer serve`.

Run by tests/serve_openenv.rs: argv[1] the server's address, argv[2] a JSON file of
episodes to replay ({task_id, messages, reward} rows of the rollouts artifact). Each
assistant message becomes ORS tool calls: its tool calls as they are, its text as
`reply_to_customer`. Prints one JSON object; the Rust test asserts on it.
"""
import asyncio, json, os, sys

os.environ.setdefault("OPENREWARD_DISABLE_UPDATE_CHECK", "1")
from openreward import AsyncOpenReward
from openreward.api.environments.types import Task

addr, episodes_path = sys.argv[1], sys.argv[2]
url = f"http://{addr}"


async def main():
    out = {}
    client = AsyncOpenReward(api_key="local", base_url=url)
    env = client.environments.get("airline", variant="airline", base_url=url)
    out["splits"] = await env.list_splits()
    train = await env.list_tasks("train")
    out["train_tasks"] = len(train)
    tools = await env.list_tools()
    out["tools"] = sorted(t.name for t in tools)
    played = []
    for ep in json.load(open(episodes_path)):
        transcript = json.loads(ep["messages"])
        task = Task(server_name="airline", environment_name="airline",
                    task_spec={"task_id": ep["task_id"]}, namespace=None)
        async with env.session(task=task) as s:
            prompt = await s.get_prompt()
            result, early_reward = None, False
            for m in transcript[2:]:
                if m["role"] != "assistant":
                    continue
                calls = m.get("tool_calls") or []
                for c in calls:
                    result = await s.call_tool(c["function"]["name"],
                                               json.loads(c["function"]["arguments"]))
                    early_reward |= result.reward is not None and not result.finished
                if not calls:
                    result = await s.call_tool("reply_to_customer", {"text": m["content"]})
                    early_reward |= result.reward is not None and not result.finished
                if result.finished:
                    break
            played.append({"task_id": ep["task_id"], "want": ep["reward"],
                           "reward": result.reward, "finished": result.finished,
                           "early_reward": early_reward,
                           "prompt_has_customer": "The customer says:" in prompt[0].text,
                           "failure": (result.metadata or {}).get("failure")})
            try:
                await s.call_tool("reply_to_customer", {"text": "One more thing?"})
                out["after_end"] = "answered"
            except Exception as e:  # ToolCallError(reason="episode_finished")
                out["after_end"] = str(getattr(e, "reason", e))
    out["played"] = played
    print(json.dumps(out, default=str))


try:
    asyncio.run(main())
except Exception as e:  # the test prints it
    print(json.dumps({"error": f"{type(e).__name__}: {e}"}))
