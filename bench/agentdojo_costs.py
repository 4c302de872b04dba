"""`agentbed run agentdojo` against AgentDojo's own benchmark functions, per task, on one agent.

    python bench/agentdojo_costs.py [--task-suite banking] [--attacks none,important_instructions]

Both sides play AgentDojo's ground truth (no model: a replayed, scripted policy): agentbed's
``ground-truth`` agent in ``agentbed run agentdojo --agent ground-truth --executor serial`` (its
logs, index, summary and seal written), and AgentDojo's own ``GroundTruthPipeline`` through
``agentdojo.benchmark.benchmark_suite_without_injections`` / ``benchmark_suite_with_injections``,
the functions AgentDojo's ``benchmark`` script calls (the script itself takes only a provider's
model), as :func:`suites.agentdojo.crosscheck.their_ground_truth` runs them. Each side runs in a
fresh process; per task is the time of the tasks alone, after the task suite is loaded (agentbed's
own "episodes run in" line, and AgentDojo's benchmark call timed around it), and the whole process's wall time is given too
(imports and, for agentbed, the summary and seal).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

THEIRS = """
import json, sys, time, warnings
from agentdojo.attacks.attack_registry import load_attack
from agentdojo.benchmark import benchmark_suite_with_injections, benchmark_suite_without_injections
from environments.agentdojo.benchmark import BENCHMARK_VERSION, task_suite
from suites.agentdojo.crosscheck import ground_truth_pipeline, quiet_logger
name, attack = sys.argv[1], (None if sys.argv[2] == "none" else sys.argv[2])
suite, pipeline = task_suite(name, BENCHMARK_VERSION), ground_truth_pipeline(name)  # loaded before the clock, as agentbed's
with warnings.catch_warnings(), quiet_logger(sys.argv[3]):
    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    if attack is None:
        results = benchmark_suite_without_injections(pipeline, suite, logdir=None, force_rerun=True,
                                                     benchmark_version=BENCHMARK_VERSION)
    else:
        results = benchmark_suite_with_injections(pipeline, suite, load_attack(attack, suite, pipeline), logdir=None,
                                                  force_rerun=True, benchmark_version=BENCHMARK_VERSION)
    seconds = time.perf_counter() - t0
print(json.dumps({"tasks": len(results["utility_results"]), "seconds": seconds}))
"""


def timed(cmd: list[str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"agentdojo_costs: {' '.join(cmd[:6])} exited {done.returncode}: {done.stderr[-2000:]}")
    return wall, done.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task-suite", default="banking")
    parser.add_argument("--attacks", default="none,important_instructions")
    args = parser.parse_args(argv)
    print(f"AgentDojo {args.task_suite}, ground truth on both sides (scripted), serial; load average at start "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print("| attack | tasks | agentbed ms/task | AgentDojo ms/task | ratio | agentbed process s | AgentDojo process s |")
    print("|---|---|---|---|---|---|---|")
    for attack in args.attacks.split(","):
        with tempfile.TemporaryDirectory(prefix="agentbed-dojo-costs-") as tmp:
            theirs_wall, out = timed([sys.executable, "-c", THEIRS, args.task_suite, attack, str(Path(tmp) / "theirs")])
            theirs = json.loads(out.strip().splitlines()[-1])
            ours_wall, out = timed([sys.executable, "-m", "agentbed.cli", "run", "agentdojo", "--agent", "ground-truth",
                                    "--task_suite", args.task_suite, "--attack", attack, "--executor", "serial",
                                    "--allow-errors", "1.0", "--out", str(Path(tmp) / "ours")])
            found = re.search(r"(\d+) episodes run in ([\d.]+)s", out)
            if found is None:
                raise SystemExit(f"agentdojo_costs: no 'episodes run in' line in agentbed's output:\n{out[-2000:]}")
            n, seconds = int(found.group(1)), float(found.group(2))
            if n != theirs["tasks"]:
                raise SystemExit(f"agentdojo_costs: agentbed ran {n} tasks, AgentDojo {theirs['tasks']}")
            ours_ms, theirs_ms = seconds / n * 1000, theirs["seconds"] / n * 1000
            print(f"| {attack} | {n} | {ours_ms:.1f} | {theirs_ms:.1f} | {ours_ms / theirs_ms:.2f} | {ours_wall:.1f} | "
                  f"{theirs_wall:.1f} |", flush=True)
    print(f"(load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
