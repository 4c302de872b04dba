"""Seconds per episode of a short task with the local model: the compact profile vs the default
chat profile, on the same llama.cpp server (Gemma 3 270M, the base model, 2 CPU threads).

* ``compact``: what ``--model local:gemma-3-270m`` plays (``agentbed.agents.local.profile``):
  a token cap, the short prompt with the tool menu, the JSON-schema grammar over the tools, a
  window of recent exchanges;
* ``chat``: the chat agent as for any OpenAI-compatible provider (``openai:`` with ``base_url``):
  the default system prompt, tools bound with ``bind_tools`` (``tool_choice`` auto), no cap.

    .venv/bin/python bench/local_model.py --episodes 3 --task open-fast

Each episode is the vault task under the suite's budget (20 steps) or ``--max-steps``. Token
speeds are the server's own ``timings`` (generated and prompt tokens per second), summed over
the episode's calls. The load average is printed: a shared machine slows everything, so compare
rows of one run, and quote idle-machine numbers only from a run on an idle machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from agentbed.agents.chat import ChatAgent
from agentbed.agents.local.profile import LocalProfile
from agentbed.agents.local.server import LocalServer
from agentbed.agents.local.weights import DEFAULT_MODEL, resolve_weights
from agentbed.log import MemoryWriter
from agentbed.runner import Budget, EpisodeSpec, run_episode
from environments.vault.env import VaultEnv


class Timings:
    """The server's ``timings`` of every chat completion (llama.cpp adds them to each response)."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def client(self) -> httpx.Client:
        def keep(response: httpx.Response) -> None:
            if response.request.url.path.endswith("/chat/completions"):
                response.read()
                with_timings = json.loads(response.content)
                self.calls.append(with_timings.get("timings") or {})

        return httpx.Client(event_hooks={"response": [keep]}, timeout=600)


def agent_for(profile: str, server: LocalServer, seed: int, timings: Timings) -> ChatAgent:
    if profile == "compact":
        return ChatAgent.from_model_string(f"local:{DEFAULT_MODEL}", seed=seed, base_url=server.base_url,
                                           profile=LocalProfile(), http_client=timings.client())
    return ChatAgent.from_model_string(f"openai:{DEFAULT_MODEL}", seed=seed, base_url=server.base_url,
                                       api_key="local", temperature=0, timeout=600, http_client=timings.client())


def episode(profile: str, server: LocalServer, task: str, seed: int, max_steps: int) -> dict[str, Any]:
    timings = Timings()
    agent = agent_for(profile, server, seed, timings)
    t0 = time.perf_counter()
    record = run_episode(VaultEnv(task), agent, EpisodeSpec("vault", task, profile, seed),
                         budget=Budget(max_steps=max_steps), writer=MemoryWriter())
    wall = time.perf_counter() - t0
    generated = sum(c.get("predicted_n", 0) for c in timings.calls)
    prompt = sum(c.get("prompt_n", 0) for c in timings.calls)
    gen_ms = sum(c.get("predicted_ms", 0.0) for c in timings.calls)
    prompt_ms = sum(c.get("prompt_ms", 0.0) for c in timings.calls)
    return {"profile": profile, "seed": seed, "wall": wall, "steps": record.steps, "success": record.success,
            "status": record.status, "generated": generated, "prompt": prompt,
            "gen_tps": generated / (gen_ms / 1000) if gen_ms else 0.0,
            "prompt_tps": prompt / (prompt_ms / 1000) if prompt_ms else 0.0}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--episodes", type=int, default=3, help="seeds per profile")
    p.add_argument("--task", default="open-fast")
    p.add_argument("--max-steps", type=int, default=20, help="the vault suite's budget")
    p.add_argument("--profiles", default="compact,chat")
    args = p.parse_args()
    load_before = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory() as tmp, LocalServer(resolve_weights(DEFAULT_MODEL), Path(tmp) / "server.log") as server:
        for profile in args.profiles.split(","):
            for seed in range(args.episodes):
                rows.append(episode(profile, server, args.task, seed, args.max_steps))
                r = rows[-1]
                print(f"  {profile} seed {seed}: {r['wall']:.1f} s, {r['steps']} steps, {r['status']},"
                      f" success {r['success']}", flush=True)
    print(f"\nvault {args.task}, {args.episodes} episode(s) per profile, budget {args.max_steps} steps;"
          f" load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after; {os.cpu_count()} CPUs")
    header = ("profile", "s/episode (median)", "steps/episode", "s/step", "gen tokens/step", "prompt tokens/step",
              "gen tok/s", "prompt tok/s", "passed")
    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    for profile in args.profiles.split(","):
        mine = [r for r in rows if r["profile"] == profile]
        steps = sum(r["steps"] for r in mine) or 1
        print("| " + " | ".join([
            profile, f"{statistics.median(r['wall'] for r in mine):.1f}",
            f"{steps / len(mine):.1f}", f"{sum(r['wall'] for r in mine) / steps:.2f}",
            f"{sum(r['generated'] for r in mine) / steps:.0f}", f"{sum(r['prompt'] for r in mine) / steps:.0f}",
            f"{statistics.median(r['gen_tps'] for r in mine):.0f}", f"{statistics.median(r['prompt_tps'] for r in mine):.0f}",
            f"{sum(r['success'] for r in mine)}/{len(mine)}"]) + " |")


if __name__ == "__main__":
    main()
