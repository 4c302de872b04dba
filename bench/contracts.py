"""Benchmark of the contracts suite: one command, one table.

    python bench/contracts.py [--seeds 5]

1. The whole suite with the oracle, serial vs the process executor (the engine's), logs written.
2. Time per task (oracle episode, in process, no log): the slowest tasks.
3. Time per issuer verification: the family's final call (real verifier + grading) vs the
   SHA-256 byte comparison the published benchmark grades with.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentbed.executors import execute  # noqa: E402
from agentbed.runner import EpisodeSpec, run_episode  # noqa: E402
from environments.contracts.agents import oracle  # noqa: E402
from environments.contracts.env import ContractEnv  # noqa: E402
from environments.contracts.family import FAMILIES  # noqa: E402


class TimedEnv(ContractEnv):
    """Records the wall time of each call of the family's final tool (verification + grading)."""

    timings: dict[str, list[float]] = defaultdict(list)

    def call_tool(self, call):  # noqa: ANN001, ANN201 - same signature as the base class
        t0 = time.perf_counter()
        result = super().call_tool(call)
        elapsed = time.perf_counter() - t0
        # throttled and maintenance answers (429/503) never reach the verifier: leave them out
        if call.name == self.family.final_tool and json.loads(result.observation).get("status") not in (429, 503):
            TimedEnv.timings[self.family.name].append(elapsed)
        return result


def suite_wall(seeds: int, executor: str) -> tuple[float, int]:
    tasks = [t.id for t in ContractEnv.task_list()]
    specs = [EpisodeSpec("contracts", t, "oracle", s, {"feedback": "off"}) for t in tasks for s in range(seeds)]
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        records = list(execute(specs, tmp, executor=executor, jobs=2))
        wall = time.perf_counter() - t0
    assert all(r.success for r in records), "the oracle must pass every episode"
    return wall, len(records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    suite_wall(1, "serial")  # warm-up: imports, RSA keys, botocore loaders
    print(f"### oracle over all {len(ContractEnv.task_list())} tasks x {args.seeds} seeds, logs written")
    print("| executor | episodes | wall s | ms / episode |\n|---|---|---|---|")
    for executor in ("serial", "process"):
        wall, n = suite_wall(args.seeds, executor)
        print(f"| {executor} (2 workers) | {n} | {wall:.2f} | {1000 * wall / n:.1f} |"
              if executor == "process" else f"| {executor} | {n} | {wall:.2f} | {1000 * wall / n:.1f} |")

    per_task: dict[str, list[float]] = defaultdict(list)
    for spec in ContractEnv.task_list():
        for seed in range(args.seeds):
            t0 = time.perf_counter()
            run_episode(TimedEnv(spec.id), oracle(), EpisodeSpec("contracts", spec.id, "oracle", seed))
            per_task[spec.id].append(time.perf_counter() - t0)
    ranked = sorted(per_task.items(), key=lambda kv: -statistics.median(kv[1]))
    print("\n### time per task (oracle episode in process, no log; median over seeds), 8 slowest and the median task")
    print("| task | ms |\n|---|---|")
    for task, times in ranked[:8]:
        print(f"| {task} | {1000 * statistics.median(times):.2f} |")
    middle = ranked[len(ranked) // 2]
    print(f"| (median task: {middle[0]}) | {1000 * statistics.median(middle[1]):.2f} |")

    artifact = "x" * 600
    t0 = time.perf_counter()
    for _ in range(10000):
        hashlib.sha256(artifact.encode()).hexdigest() == hashlib.sha256(artifact.encode()).hexdigest()  # noqa: B015
    sha_us = (time.perf_counter() - t0) / 10000 * 1e6
    print("\n### time per issuer verification (final call: real verifier + byte-strict grading) vs SHA-256 only")
    print("| family | calls | median µs | SHA-256 compare µs (published benchmark's check) |\n|---|---|---|---|")
    for name in sorted(FAMILIES):
        times = TimedEnv.timings.get(name, [])
        if times:
            print(f"| {name} | {len(times)} | {1e6 * statistics.median(times):.0f} | {sha_us:.1f} |")


if __name__ == "__main__":
    main()
