"""Model-bound throughput: agentbed's in-flight executor against Inspect AI and against agentbed's
process pool (one episode per worker, the behaviour before in-flight episodes), on one loopback
OpenAI-compatible server that answers every call after a fixed delay.

    .venv/bin/python bench/model_bound.py                 # 200 episodes, 300 ms, 32 connections
    .venv/bin/python bench/model_bound.py --episodes 50   # quicker

The task is vault ``open-fast`` played in three tool calls (read a log page, fetch a token, open
the vault with it); the server's scripted model answers from the conversation alone, in the same
way for agentbed's and Inspect's requests. Each contender runs as its own process (the server
stays in this one). Two times are measured: the server's *span*, from the first request it
receives to the last answer it sends (the contender's throughput while it runs), and the
contender's *wall* time from process start to exit (imports and start-up included); *cpu* is
the CPU time (user + system) the contender's processes used:

1. agentbed, ``--max-connections 32`` (its default ``-j``), live, filling a fresh model-call cache;
2. Inspect AI, ``max_connections=32``, the same server, prompt, tools and task;
3. agentbed's process executor at ``-j 2``, one episode per worker (today's behaviour before this change);
4. agentbed again on the filled cache: it must make 0 provider calls;
5. agentbed with two models in one run (``--model openai:stub-model,openai:stub-b``, half the
   seeds each, so the same number of episodes), paired differences in one summary;
6. agentbed on Ray (``--executor ray -j 2``; with ``--cluster``, on the two-node loopback cluster
   of agentbed/testing_ray.py, episodes forced onto the container node), one cap of
   ``--max-connections`` across the nodes through the run's actor, then its cached rerun (0 calls).

    .venv/bin/python bench/model_bound.py --episodes 40 --cluster   # the Ray rows on the two-node cluster

The server is a simulation of a provider: a fixed delay, no rate limits, no variance.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "agents"))  # the loopback server the tests use

MODEL = "stub-model"


def _agentbed(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentbed.cli", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=3600)


def _successes(run_dir: Path) -> int:
    from agentbed.store import read_index

    return sum(1 for r in read_index(run_dir / "index.jsonl") if r["success"])


class Span:
    """First arrival and last answer of the server's requests (wraps the stub's handler)."""

    def __init__(self, stub: Any) -> None:
        self.first = self.last = None
        answer = stub._answer

        def timed(handler: Any, body: Any) -> None:
            if self.first is None:
                self.first = time.perf_counter()
            answer(handler, body)
            self.last = time.perf_counter()

        stub._answer = timed

    def reset(self) -> None:
        self.first = self.last = None

    def seconds(self) -> float | None:
        return None if self.first is None or self.last is None else self.last - self.first


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # finished children and what they waited for
    return usage.ru_utime + usage.ru_stime


def _timed(label: str, stub: Any, span: Span, episodes: int, run: Any) -> dict[str, Any]:
    served, t0, cpu0 = stub.served, time.perf_counter(), _children_cpu()
    span.reset()
    ok = run()
    wall = time.perf_counter() - t0
    busy = span.seconds()
    return {"contender": label, "episodes": episodes, "succeeded": ok, "calls": stub.served - served,
            "cpu_s": _children_cpu() - cpu0, "wall_s": wall, "span_s": busy, "eps_per_s_wall": episodes / wall,
            "eps_per_s_span": episodes / busy if busy else None}


def bench(episodes: int, delay: float, connections: int, cluster: bool = False) -> list[dict[str, Any]]:
    from openai_stub import OpenAIStub
    from scripted_models import vault_three_calls

    stub = OpenAIStub(lambda body: vault_three_calls(body, delay))
    url = stub.start()
    span = Span(stub)
    work = Path(tempfile.mkdtemp(prefix="agentbed-model-bound-"))
    env = {**os.environ, "OPENAI_BASE_URL": url, "OPENAI_API_KEY": "bench", "STUB_BASE_URL": url,
           "STUB_API_KEY": "bench", "AGENTBED_CACHE_DIR": str(work / "cache"), "PYTHONPATH": str(ROOT)}
    run = ["run", "vault", "--model", f"openai:{MODEL}", "--task", "open-fast", "--seeds", str(episodes),
           "--max-connections", str(connections), "--quiet"]

    def agentbed_run(out: str, args: list[str] | None = None, environ: dict[str, str] | None = None) -> Any:
        def go() -> int:
            done = _agentbed([*(args or run), "--out", str(work / out)], environ or env)
            if done.returncode != 0:
                raise RuntimeError(f"agentbed run failed: {done.stderr[-2000:]}")
            return _successes(work / out)
        return go

    def worker(mode: str) -> Any:
        def go() -> int:
            done = subprocess.run([sys.executable, __file__, "--worker", mode, "--episodes", str(episodes),
                                   "--connections", str(connections), "--out", str(work / mode)],
                                  capture_output=True, text=True, env=env, cwd=ROOT, timeout=3600)
            if done.returncode != 0:
                raise RuntimeError(f"{mode} failed: {done.stderr[-2000:]}")
            return int(done.stdout.strip().splitlines()[-1])
        return go

    two = ["run", "vault", "--model", f"openai:{MODEL},openai:stub-b", "--task", "open-fast",
           "--seeds", str(max(1, episodes // 2)), "--max-connections", str(connections), "--quiet", "--no-cache"]
    on_ray = ["run", "vault", "--model", f"openai:{MODEL}", "--task", "open-fast", "--seeds", str(episodes),
              "--max-connections", str(connections), "--quiet", "--executor", "ray", "-j", "2",
              "--cache-dir", str(work / "ray-cache")]
    ray_env = env
    held = None
    if cluster:
        from agentbed.testing_ray import LoopbackCluster, build_worker_image

        held = LoopbackCluster(build_worker_image())
        running = held.__enter__()
        ray_env = {**env, **running.env}
        on_ray += ["--address", running.address, "--ray-resource", "container_node=1"]
    where = "two-node cluster" if cluster else "local Ray"
    try:
        rows = [_timed(f"agentbed, {connections} connections", stub, span, episodes, agentbed_run("live")),
                _timed(f"Inspect AI, max_connections={connections}", stub, span, episodes, worker("inspect")),
                _timed("agentbed process pool, -j 2", stub, span, episodes, worker("pool")),
                _timed("agentbed, cached rerun", stub, span, episodes, agentbed_run("cached")),
                _timed("agentbed, two models in one run", stub, span, 2 * max(1, episodes // 2),
                       agentbed_run("two", two)),
                _timed(f"agentbed on {where}, -j 2", stub, span, episodes, agentbed_run("ray", on_ray, ray_env)),
                _timed(f"agentbed on {where}, cached rerun", stub, span, episodes,
                       agentbed_run("ray-cached", on_ray, ray_env))]
    finally:
        stub.stop()
        if held is not None:
            held.__exit__(None, None, None)
    return rows


# -- contenders run as their own processes ------------------------------------------------------------
def pool_worker(episodes: int, out: Path) -> int:
    """agentbed's process executor as before in-flight episodes: one episode at a time per worker."""
    from agentbed.executors import execute
    from agentbed.runner import EpisodeSpec

    specs = [EpisodeSpec("vault", "open-fast", f"model:openai:{MODEL}", s) for s in range(episodes)]
    return sum(r.success for r in execute(specs, out, executor="process", jobs=2))


def inspect_worker(episodes: int, connections: int, out: Path) -> int:
    """The same task in Inspect AI: the vault's first observation, agentbed's system prompt, the
    three tools with the vault's answers, three generate-and-execute turns, scored on the vault."""
    import hashlib
    import random

    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import Score, accuracy, scorer
    from inspect_ai.solver import solver, system_message, use_tools
    from inspect_ai.tool import tool
    from inspect_ai.util import store

    from agentbed.agents.chat import DEFAULT_SYSTEM_PROMPT
    from environments.vault.env import VaultEnv

    @tool
    def read_logs():  # noqa: ANN202 - Inspect's tool factory
        async def execute(page: int) -> str:
            """Read one page of the service logs.

            Args:
                page: the page number, from 1
            """
            store().set("pages", [*store().get("pages", []), page])
            return json.dumps({"page": page, "entries": [f"entry {page}.{i}" for i in range(3)]})
        return execute

    @tool
    def get_token():  # noqa: ANN202
        async def execute() -> str:
            """Fetch a fresh access token."""
            token = hashlib.sha256(str(random.getrandbits(62)).encode()).hexdigest()[:32]
            store().set("issued", [*store().get("issued", []), token])
            return json.dumps({"access_token": token, "expires_in": 60})
        return execute

    @tool
    def open_vault():  # noqa: ANN202
        async def execute(token: str) -> str:
            """Open the vault with a token.

            Args:
                token: an access token from get_token
            """
            if token not in store().get("issued", []):
                return json.dumps({"status": 401, "error": "invalid_token"})
            store().set("opened", True)
            return json.dumps({"status": 200, "vault": "opened"})
        return execute

    @solver
    def three_turns():  # noqa: ANN202
        async def solve(state, generate):  # noqa: ANN001, ANN202
            for _ in range(3):
                state = await generate(state, tool_calls="single")
                if store().get("opened"):
                    break
            return state
        return solve

    @scorer(metrics=[accuracy()])
    def vault_opened():  # noqa: ANN202
        async def score(state, target):  # noqa: ANN001, ANN202
            return Score(value=1.0 if store().get("opened") else 0.0)
        return score

    observation = VaultEnv("open-fast").reset(seed=0)[0]
    task = Task(dataset=[Sample(input=observation, id=i) for i in range(episodes)],
                solver=[system_message(DEFAULT_SYSTEM_PROMPT), use_tools([read_logs(), get_token(), open_vault()]),
                        three_turns()], scorer=vault_opened())
    (log,) = inspect_eval(task, model=f"openai-api/stub/{MODEL}", max_connections=connections, log_dir=str(out),
                          display="none", score=True)
    if log.status != "success":
        raise RuntimeError(f"Inspect eval status {log.status}: {log.error}")
    return sum(1 for s in log.samples or [] if s.scores and next(iter(s.scores.values())).value == 1.0)


def print_table(rows: list[dict[str, Any]], args: argparse.Namespace) -> None:
    inspect = next(r for r in rows if r["contender"].startswith("Inspect"))
    pool = next(r for r in rows if "-j 2" in r["contender"])
    print(f"model-bound throughput: {args.episodes} episodes of vault open-fast (3 tool calls each), a loopback "
          f"server answering after {args.delay * 1000:.0f} ms")
    def ratio(r: dict[str, Any], base: dict[str, Any], key: str) -> str:
        return "-" if r[key] is None or base[key] is None else f"{r[key] / base[key]:.2f}x"

    def num(value: float | None, digits: int) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    print(f"{'contender':<37} {'ok':>4} {'calls':>5} {'cpu s':>6} | {'span s':>6} {'eps/s':>6} {'vs Insp':>7} {'vs -j2':>7} |"
          f" {'wall s':>6} {'eps/s':>6} {'vs Insp':>7} {'vs -j2':>7}")
    for r in rows:
        print(f"{r['contender']:<37} {r['succeeded']:>4} {r['calls']:>5} {r['cpu_s']:>6.1f} | {num(r['span_s'], 1):>6} "
              f"{num(r['eps_per_s_span'], 2):>6} {ratio(r, inspect, 'eps_per_s_span'):>7} "
              f"{ratio(r, pool, 'eps_per_s_span'):>7} | {r['wall_s']:>6.1f} {r['eps_per_s_wall']:>6.2f} "
              f"{ratio(r, inspect, 'eps_per_s_wall'):>7} {ratio(r, pool, 'eps_per_s_wall'):>7}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--episodes", type=int, default=200)
    p.add_argument("--delay", type=float, default=0.3, help="seconds the server waits before each answer")
    p.add_argument("--connections", type=int, default=32)
    p.add_argument("--json", help="also write the rows to this file")
    p.add_argument("--cluster", action="store_true", help="the Ray rows on the two-node loopback cluster")
    p.add_argument("--worker", choices=["inspect", "pool"], help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker == "pool":
        print(pool_worker(args.episodes, Path(args.out)))
        return 0
    if args.worker == "inspect":
        print(inspect_worker(args.episodes, args.connections, Path(args.out)))
        return 0
    rows = bench(args.episodes, args.delay, args.connections, args.cluster)
    print_table(rows, args)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
