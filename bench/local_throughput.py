"""Local-model throughput: ``agentbed run`` against direct llama.cpp calls on the same prompts.

    .venv/bin/python bench/local_throughput.py --episodes 6 [--load 2]

1. **Prompts.** The vault task's episodes are played once in this process with the compact
   profile (what ``--model local:gemma-3-270m`` plays), and every chat-completion request body is
   kept: the exact prompts agentbed sends.
2. **Direct.** The same request bodies are posted straight to one llama.cpp server (the same
   weights, threads and slots), one at a time and with two in flight: the floor any harness pays.
3. **agentbed.** ``agentbed run vault --model local:... --no-cache`` as a user runs it, with one and
   with two connections (``--max-connections``, which also sizes the server's slots, and ``-j``).
   Its start-up (interpreter, server, model load) is differenced out: the rate is the marginal one
   between a 1-episode run and a (1 + N)-episode run.

Tokens per second count generated tokens (the server's ``timings``; agentbed's from the run's
recorded usage). ``--load N`` runs N busy processes beside the bench (load average about N). The
load average is printed before and after: quote idle figures only from a run on an idle machine.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from agentbed.agents.chat import ChatAgent
from agentbed.agents.local.profile import LocalProfile
from agentbed.agents.local.server import LocalServer, ServerSettings
from agentbed.agents.local.weights import DEFAULT_MODEL, resolve_weights
from agentbed.log import MemoryWriter
from agentbed.runner import Budget, EpisodeSpec, run_episode
from environments.vault.env import VaultEnv

ROOT = Path(__file__).resolve().parents[1]


def record_requests(server: LocalServer, task: str, seeds: int, max_steps: int) -> list[dict[str, Any]]:
    """Every chat-completion request body the compact profile sends over ``seeds`` episodes."""
    bodies: list[dict[str, Any]] = []

    def keep(request: httpx.Request) -> None:
        if request.url.path.endswith("/chat/completions"):
            bodies.append(json.loads(request.content))

    for seed in range(seeds):
        client = httpx.Client(event_hooks={"request": [keep]}, timeout=600)
        agent = ChatAgent.from_model_string(f"local:{DEFAULT_MODEL}", seed=seed, base_url=server.base_url,
                                            profile=LocalProfile(), http_client=client)
        run_episode(VaultEnv(task), agent, EpisodeSpec("vault", task, "local", seed),
                    budget=Budget(max_steps=max_steps), writer=MemoryWriter())
    return bodies


def direct(server: LocalServer, bodies: list[dict[str, Any]], in_flight: int) -> dict[str, float]:
    """Post ``bodies`` to the server with ``in_flight`` requests at a time: wall, calls, tokens."""
    url = server.base_url + "/chat/completions"
    generated: list[int] = []
    lock = threading.Lock()

    def post(body: dict[str, Any]) -> None:
        reply = httpx.post(url, json={**body, "stream": False}, timeout=600).json()
        with lock:
            generated.append(int((reply.get("timings") or {}).get("predicted_n")
                                 or (reply.get("usage") or {}).get("completion_tokens", 0)))

    t0 = time.perf_counter()
    with ThreadPoolExecutor(in_flight) as pool:
        list(pool.map(post, bodies))
    wall = time.perf_counter() - t0
    return {"wall": wall, "calls": len(bodies), "tokens": sum(generated)}


def agentbed_run(task: str, seeds: int, connections: int, out: Path) -> dict[str, float]:
    """``agentbed run`` as a user types it; wall time, episodes, model calls and generated tokens."""
    command = [str(ROOT / ".venv" / "bin" / "agentbed"), "run", "vault", "--task", task,
               "--model", f"local:{DEFAULT_MODEL}", "--seeds", str(seeds), "--no-cache",
               "--max-connections", str(connections), "-j", str(connections), "--out", str(out)]
    t0 = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)}: exit {done.returncode}\n{done.stderr[-2000:]}")
    calls = tokens = 0
    for line in (out / "index.jsonl").read_text(encoding="utf-8").splitlines():
        usage = json.loads(line).get("usage") or {}
        calls += int(usage.get("calls", 0))
        tokens += int(usage.get("output_tokens", 0))
    return {"wall": wall, "episodes": seeds, "calls": calls, "tokens": tokens}


def busy() -> None:
    while True:
        pass


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--episodes", type=int, default=6, help="episodes (seeds) per configuration")
    p.add_argument("--task", default="open-fast")
    p.add_argument("--max-steps", type=int, default=20, help="the vault suite's budget")
    p.add_argument("--load", type=int, default=0, help="busy processes beside the bench")
    args = p.parse_args()
    hogs = [multiprocessing.Process(target=busy, daemon=True) for _ in range(args.load)]
    for hog in hogs:
        hog.start()
    if hogs:
        time.sleep(5)
    load_before = os.getloadavg()[0]
    rows: list[tuple[str, int, float, float, float]] = []  # side, in flight, episodes/min, calls/s, tok/s
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for in_flight in (1, 2):
                settings = ServerSettings(slots=in_flight)
                with LocalServer(resolve_weights(DEFAULT_MODEL), Path(tmp) / f"server{in_flight}.log",
                                 settings) as server:
                    bodies = record_requests(server, args.task, args.episodes, args.max_steps)
                    d = direct(server, bodies, in_flight)
                rows.append(("direct llama.cpp", in_flight, 60 * args.episodes / d["wall"], d["calls"] / d["wall"],
                             d["tokens"] / d["wall"]))
                one = agentbed_run(args.task, 1, in_flight, Path(tmp) / f"one{in_flight}")
                many = agentbed_run(args.task, 1 + args.episodes, in_flight, Path(tmp) / f"many{in_flight}")
                wall = max(many["wall"] - one["wall"], 1e-9)
                rows.append(("agentbed run", in_flight, 60 * args.episodes / wall,
                             (many["calls"] - one["calls"]) / wall, (many["tokens"] - one["tokens"]) / wall))
                print(f"  in flight {in_flight}: direct {d['wall']:.1f} s for {d['calls']} calls; agentbed "
                      f"{one['wall']:.1f} s (1 episode) and {many['wall']:.1f} s ({1 + args.episodes})",
                      flush=True)
    finally:
        for hog in hogs:
            hog.terminate()
    print(f"\nvault {args.task}, {args.episodes} episodes per row, Gemma 3 270M (base) on llama.cpp; "
          f"{args.load} busy processes; load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after; "
          f"{os.cpu_count()} CPUs")
    print("| side | in flight (slots) | episodes/min | calls/s | generated tok/s |\n|---|---|---|---|---|")
    for side, in_flight, epm, cps, tps in rows:
        print(f"| {side} | {in_flight} | {epm:.1f} | {cps:.2f} | {tps:.0f} |")
    by = {(side, n): (cps, epm) for side, n, epm, cps, _ in rows}
    for n in (1, 2):
        ours, floor = by[("agentbed run", n)][0], by[("direct llama.cpp", n)][0]
        if ours and floor:
            print(f"in flight {n}: agentbed's overhead per call {1000 * (1 / ours - 1 / floor):.0f} ms "
                  f"({ours / floor:.2f}x the direct call rate)")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
