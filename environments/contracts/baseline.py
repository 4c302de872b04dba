"""Write baselines/contracts.json, the results baseline the gate reads for ``tox -e contracts``.

``python -m environments.contracts.baseline [PATH] [--seeds N]`` runs oracle and naive over every
task (feedback off, as ``agentbed run contracts --agent oracle,naive`` does) and writes the
``agentbed.results/1`` document: ``metrics`` holds the per-unit (``task/seed``) success values
the gate pairs; ``headline`` holds agentbed.summary headline entries (pass rate and pass^k with
bootstrap intervals); ``per_task`` holds each agent's pass array over seeds per task.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

from agentbed.executors import execute
from agentbed.results import episode_metrics, write_results
from agentbed.runner import EpisodeSpec
from environments.contracts.env import ContractEnv
from environments.contracts.report import build_summary, per_task_passes

AGENTS = ("oracle", "naive")
COMMAND = "python -m environments.contracts.baseline baselines/contracts.json --seeds {seeds}"


def make_baseline(path: Path, seeds: int = 5) -> dict[str, Any]:
    tasks = [t.id for t in ContractEnv.task_list()]
    specs = [EpisodeSpec("contracts", t, a, s, {"feedback": "off"}) for a in AGENTS for t in tasks for s in range(seeds)]
    with tempfile.TemporaryDirectory() as tmp:
        records = [r.to_dict() for r in execute(specs, tmp, executor="process")]
    records.sort(key=lambda r: (r["agent"], r["task"], r["seed"]))
    summary = build_summary(records, COMMAND.format(seeds=seeds))
    per_task = {a: per_task_passes([r for r in records if r["agent"] == a]) for a in AGENTS}
    write_results(path, episode_metrics(records), episodes=len(records), seeds=list(range(seeds)),
                  headline=summary["headline"], per_task=per_task, command=COMMAND.format(seeds=seeds))
    return summary


if __name__ == "__main__":
    args = sys.argv[1:]
    n = int(args[args.index("--seeds") + 1]) if "--seeds" in args else 5
    target = Path(next((a for a in args if not a.startswith("--") and not a.isdigit()), "baselines/contracts.json"))
    make_baseline(target, n)
    print(f"wrote {target}")
