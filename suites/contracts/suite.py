"""The contracts suite's entry into the engine: tasks, agents (oracle, naive, corruption wrappers),
the ``--feedback`` option and the demo for the README's main command."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import environments.contracts  # noqa: F401 - registers agentbed/contracts-v0
from agentbed.runner import Budget
from agentbed.suite import Option, Suite
from attacks.contracts.agents import ParameterDriftAgent, corrupting
from attacks.contracts.corruptions import CORRUPTIONS
from environments.contracts.agents import naive, oracle, work_first
from environments.contracts.catalog import describe
from environments.contracts.env import ContractEnv
from environments.contracts.report import build_summary


def _tasks(options: dict[str, Any]) -> list[str]:
    return [t.id for t in ContractEnv.task_list()]


def _make_env(task: str, options: dict[str, Any]) -> ContractEnv:
    return ContractEnv(task, feedback=options.get("feedback") == "on")


def _corrupt_factory(name: str) -> Any:
    return lambda setup: corrupting(oracle(), name)


AGENTS = {"oracle": lambda setup: oracle(), "naive": lambda setup: naive(), "work-first": lambda setup: work_first(),
          "param-drift": lambda setup: ParameterDriftAgent(oracle()),
          **{f"corrupt-{name}": _corrupt_factory(name) for name in CORRUPTIONS}}


def _summarize(records: list[dict[str, Any]], options: dict[str, Any]) -> dict[str, Any]:
    mode = " --feedback on" if options.get("feedback") == "on" else ""
    agents = ",".join(sorted({r["agent"] for r in records}))
    seeds = len({r["seed"] for r in records})
    return build_summary(records, f"agentbed run contracts --agent {agents} --seeds {seeds}{mode}")


def _demo(out_dir: Path) -> dict[str, Any]:
    from suites.contracts.demo import run_demo

    return run_demo(out_dir)


SUITE = Suite(
    name="contracts",
    description="Observation contracts: presigned URLs, tokens, signatures used in time and byte-exact "
                "(real issuers, virtual clock).",
    tasks=_tasks,
    make_env=_make_env,
    agents=AGENTS,
    default_agent="oracle",
    options={"feedback": Option("off", "on a failed attempt, give the agent the label and restart (2 attempts)",
                                choices=("off", "on"))},
    default_seeds=5,
    budget=Budget(max_steps=80),
    summarize=_summarize,
    describe_task=describe,
    demo=_demo,
)
