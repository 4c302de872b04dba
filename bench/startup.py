"""Start-up: the wall time of ``agentbed --help``, ``agentbed list`` and ``agentbed list --json``,
each a fresh process, beside Inspect AI's CLI on the same machine in the same run.

    .venv/bin/python bench/startup.py --repeats 10

Each command runs once to warm up (the OS file cache; the first run writes the bytecode caches),
then ``--repeats`` times; the median, the fastest and the slowest are printed. The goals (issue 37)
are ``agentbed --help`` at most 0.3 s and ``agentbed list`` at most 1.0 s on an idle machine: the
load average is printed before and after, and figures taken at a load above 0.5 are not that.

Bytecode caching is as a user has it: ``PYTHONDONTWRITEBYTECODE`` is removed from the commands'
environment, so the warm-up writes ``__pycache__`` and the timed runs read it. (Where that variable
is set and no ``__pycache__`` was ever written, as in some containers and sessions, every command
compiles agentbed's ~200 modules again, a fixed cost on top: docs/benchmarks.md.)

Inspect's baseline (when its CLI is installed beside this Python): ``inspect --help``, ``inspect
info version``, and ``inspect list tasks`` over a folder holding one small task file written
here (run in that folder), the nearest equivalent of listing the tasks a user can run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOALS = {"agentbed --help": 0.3, "agentbed list": 1.0}
TASK_FILE = '''from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import match


@task
def echo() -> Task:
    return Task(dataset=[Sample(input="Say hello.", target="hello")], scorer=match())
'''


def _agentbed() -> list[str]:
    script = Path(sys.executable).with_name("agentbed")
    return [str(script)] if script.exists() else [sys.executable, "-m", "agentbed.cli"]


def _timed(argv: list[str], env: dict[str, str], repeats: int, cwd: Path | None = None) -> list[float]:
    def once() -> None:
        subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                       timeout=600)

    once()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        once()
        times.append(time.perf_counter() - t0)
    return times


def _row(name: str, times: list[float]) -> str:
    goal = GOALS.get(name)
    median = statistics.median(times)
    verdict = "" if goal is None else f"  goal (idle) <= {goal:.1f} s: {'within' if median <= goal else 'over'}"
    return f"{name:<28} median {median:6.3f} s  fastest {min(times):6.3f}  slowest {max(times):6.3f}{verdict}"


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--no-inspect", action="store_true", help="leave out Inspect's baseline")
    args = ap.parse_args(argv)
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    agentbed = _agentbed()
    commands = {"agentbed --help": [*agentbed, "--help"], "agentbed list": [*agentbed, "list"],
                "agentbed list --json": [*agentbed, "list", "--json"]}
    inspect = shutil.which("inspect", path=str(Path(sys.executable).parent))
    tasks_dir = Path(tempfile.mkdtemp(prefix="agentbed-startup-"))
    if inspect and not args.no_inspect:
        (tasks_dir / "echo_task.py").write_text(TASK_FILE, encoding="utf-8")
        commands |= {"inspect --help": [inspect, "--help"], "inspect info version": [inspect, "info", "version"],
                     "inspect list tasks": [inspect, "list", "tasks"]}  # in tasks_dir (it takes relative paths)
    print(f"start-up, {args.repeats} runs each after one warm-up, bytecode cached; {os.cpu_count()} CPUs")
    before = os.getloadavg()[0]
    print(f"load average before: {_load()}")
    results = {}
    try:
        for name, command in commands.items():
            results[name] = _timed(command, env, args.repeats, cwd=tasks_dir if name == "inspect list tasks" else None)
            print(_row(name, results[name]), flush=True)
    finally:
        shutil.rmtree(tasks_dir, ignore_errors=True)
    print(f"load average after: {_load()}")
    if max(before, os.getloadavg()[0]) > 0.5:
        print("the goals are for an idle machine: at this load these are not the goals' figures")
    for ours, theirs in (("agentbed --help", "inspect --help"), ("agentbed list", "inspect list tasks")):
        if ours in results and theirs in results:
            ratio = statistics.median(results[ours]) / statistics.median(results[theirs])
            print(f"{ours} / {theirs}: {ratio:.2f}x")
    if not inspect and not args.no_inspect:
        print("inspect's CLI is not installed beside this Python (pip install -e '.[inspect]'): no baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
