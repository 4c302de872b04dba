"""A model run's start-up: how long ``agentbed run`` is silent before its first progress line, and
how long a run whose every model call is cached takes in all (issue 55, item 3).

A loopback OpenAI-compatible server (tests/agents/openai_stub.py) plays vault ``open-fast`` (three
calls an episode). The first run fills a fresh model-call cache; each timed run repeats it, every
call answered from the cache, so what is measured is the command's own cost: imports, planning,
workers, logs. Each run is a fresh process; its stderr is read as it comes:

    .venv/bin/python bench/model_startup.py --episodes 32 --repeats 5

Goals: the first progress line at most 1.5 s after the command starts, and a fully cached rerun of
32 episodes at most 2.5 s, on an idle machine (the load average is printed before and after).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "agents"))

from openai_stub import OpenAIStub  # noqa: E402 - needs the path above
from scripted_models import vault_three_calls  # noqa: E402

GOALS = {"first progress line": 1.5, "whole cached run": 2.5}


def timed_run(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(seconds to the first progress line on stderr, seconds to exit) of one fresh process."""
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    first = float("nan")
    for line in process.stderr:
        if first != first and line.startswith("agentbed: "):
            first = time.perf_counter() - start
    if process.wait() != 0:
        raise SystemExit(f"the run failed (exit {process.returncode}): {' '.join(command)}")
    return first, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    stub = OpenAIStub(vault_three_calls)
    stub.start()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(OPENAI_BASE_URL=stub.base_url, OPENAI_API_KEY="bench")
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            def command(n: int) -> list[str]:
                return [str(Path(sys.executable).parent / "agentbed"), "run", "vault", "--task", "open-fast",
                        "--model", "openai:stub-m", "--seeds", str(args.episodes), "--cache-dir", f"{tmp}/cache",
                        "--out", f"{tmp}/run{n}"]

            cold = timed_run(command(0), env)  # fills the cache (and the bytecode caches)
            runs = [timed_run(command(n + 1), env) for n in range(args.repeats)]
    finally:
        stub.stop()
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print(f"uncached run of {args.episodes} episodes: first line {cold[0]:.2f} s, whole run {cold[1]:.2f} s")
    print(f"| measure ({args.episodes} episodes, all calls cached, {args.repeats} runs) | median s | fastest | "
          "slowest | goal |")
    print("|---|---|---|---|---|")
    for index, name in enumerate(GOALS):
        values = [run[index] for run in runs]
        print(f"| {name} | {statistics.median(values):.2f} | {min(values):.2f} | {max(values):.2f} | "
              f"<= {GOALS[name]} s |")


if __name__ == "__main__":
    main()
