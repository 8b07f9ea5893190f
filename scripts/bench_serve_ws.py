"""WebSocket episodes of `tracer serve` (OpenEnv's /ws protocol): episodes/s and step
latency p50/p99 at each concurrency, then sessions held open (server memory per session).

    .venv-serve/bin/python scripts/bench_serve_ws.py ADDR SERVER_PID [1,64,1024] [EPISODES]

Each episode: connect, reset on a task (in turn), text steps until the episode ends (the
scripted customer answers each) or 8 steps, close. Uses `websockets` (OpenEnv's own
client library). Prints Markdown; figures are this machine's, never asserted.
"""
import asyncio, json, os, sys, time, urllib.request

import websockets

addr, pid = sys.argv[1], int(sys.argv[2])
levels = [int(x) for x in (sys.argv[3] if len(sys.argv) > 3 else "1,64,1024").split(",")]
episodes = int(sys.argv[4]) if len(sys.argv) > 4 else 2048
tasks = [t["task_id"] for t in json.load(urllib.request.urlopen(f"http://{addr}/tasks?limit=1000"))["tasks"]]
SAY = ["Could you give me your user id, please?", "Thank you. Shall I proceed?",
       "Is there anything else I can help you with?"]


def cpu_s():
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def rss_kib():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])


async def episode(i, lat):
    async with websockets.connect(f"ws://{addr}/ws", max_size=None) as ws:
        await ws.send(json.dumps({"type": "reset", "data": {"task_id": tasks[i % len(tasks)]}}))
        r = json.loads(await ws.recv())
        for k in range(8):
            if r["data"]["done"]:
                break
            t = time.perf_counter()
            await ws.send(json.dumps({"type": "step", "data": {"content": SAY[k % 3]}}))
            r = json.loads(await ws.recv())
            lat.append(time.perf_counter() - t)


async def level(n):
    lat, next_i = [], iter(range(episodes))

    async def worker():
        for i in next_i:
            await episode(i, lat)
    t, c = time.perf_counter(), cpu_s()
    await asyncio.gather(*(worker() for _ in range(n)))
    dt, dc = time.perf_counter() - t, cpu_s() - c
    lat.sort()
    q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] * 1000
    print(f"| {n} | {episodes / dt:,.0f} | {len(lat)} | {q(0.5):.2f} ms | {q(0.99):.2f} ms "
          f"| {dc * 1000 / episodes:.2f} ms |")


async def held(n):
    before = rss_kib()
    socks = [await websockets.connect(f"ws://{addr}/ws") for _ in range(n)]
    for i, ws in enumerate(socks):
        await ws.send(json.dumps({"type": "reset", "data": {"task_id": tasks[i % len(tasks)]}}))
        await ws.recv()
    after = rss_kib()
    print(f"\n{n} sessions held open over /ws: server RSS {before / 1024:.1f} -> {after / 1024:.1f} MiB, "
          f"{(after - before) / n:.1f} KiB per session (connection thread included)")
    for ws in socks:
        await ws.close()


async def main():
    print("| concurrent sessions | episodes/s | steps | step p50 | step p99 | server CPU / episode |\n|---|---|---|---|---|---|")
    for n in levels:
        await level(n)
    await held(max(levels))

asyncio.run(main())
