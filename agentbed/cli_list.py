"""``agentbed list``: suites, their tasks, agents and options; and a suite's part of ``run SUITE --help``."""

from __future__ import annotations

import argparse
import json
from typing import Any

from agentbed.suite import Suite, SuiteError, broken_suites, get_suite, load_suites


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("list", help="list suites, their tasks and agents")
    p.add_argument("suite", nargs="?", help="show one suite in detail")
    p.add_argument("--json", action="store_true", help="print suites, tasks (with what the suite says of each) "
                   "and agents as one JSON document")
    p.add_argument("--all", action="store_true", help="print every task id, one a line, however many")
    p.set_defaults(func=cmd_list)


def suite_listing(suite: Suite) -> dict[str, Any]:
    """One suite as ``agentbed list --json`` prints it; tasks carry the suite's ``describe_task``."""
    tasks = suite.task_ids(suite.resolve_options({}))
    return {"name": suite.name, "description": suite.description, "default_agent": suite.default_agent,
            "agents": suite.agent_names(), "default_seeds": suite.default_seeds,
            "options": {k: {"default": o.default, "help": o.help,
                            "choices": list(o.choices) if o.choices is not None else None}
                        for k, o in suite.options.items()},
            "tasks": [{"id": t, "hidden": t in suite.hidden_tasks,
                       **(suite.describe_task(t) if suite.describe_task else {})} for t in tasks]}


def suite_options_help(name: str) -> str:
    """The epilog of ``agentbed run SUITE --help``: the suite's agents and options (or why it cannot load)."""
    try:
        suite = get_suite(name)
    except SuiteError as exc:
        return f"suite {name!r}: {exc}"
    lines = [f"suite {suite.name}: {suite.description}",
             f"  agents: {', '.join(suite.agent_names())} (default {suite.default_agent}); any --model provider:model",
             f"  seeds: {suite.default_seeds} by default; tasks: agentbed list {suite.name}"]
    if suite.options:
        lines.append(f"options of suite {suite.name} (--NAME VALUE):")
        for key, option in suite.options.items():
            choices = f" {{{','.join(map(str, option.choices))}}}" if option.choices is not None else ""
            lines.append(f"  --{key.replace('_', '-')}{choices}  {option.help} (default: {option.default})")
    else:
        lines.append(f"suite {suite.name} has no options of its own")
    return "\n".join(lines)


MANY = 50  # more tasks than this are counted, not listed (unless --all)
FEW = 12  # a task property with at most this many values is counted by value


def task_counts(suite: Suite, tasks: list[str]) -> list[str]:
    """Counts of tasks by each property the suite describes them with that takes few values
    (AgentDojo's task suite and attack), in order of first appearance."""
    if suite.describe_task is None:
        return []
    described = [suite.describe_task(t) for t in tasks]
    lines = []
    for key in described[0] if described else {}:
        counts: dict[str, int] = {}
        for d in described:
            value = "none" if d.get(key) is None else str(d.get(key))
            counts[value] = counts.get(value, 0) + 1
        if 1 < len(counts) <= FEW:
            lines.append(f"by {key}: " + ", ".join(f"{v} {n}" for v, n in counts.items()))
    return lines


def cmd_list(args: argparse.Namespace) -> int:
    suites = load_suites()
    names = [args.suite] if args.suite else sorted(suites)
    if getattr(args, "json", False):
        doc = {"suites": [suite_listing(get_suite(name)) for name in names],
               "unavailable": dict(sorted(broken_suites().items()))}
        print(json.dumps(doc, indent=1, default=str))
        return 0
    for name in names:
        suite = get_suite(name)
        tasks = suite.task_ids(suite.resolve_options({}))
        print(f"{suite.name}: {suite.description}")
        print(f"  agents: {', '.join(suite.agent_names())} (default {suite.default_agent}); any --model provider:model")
        if suite.options:
            opts = ", ".join(f"--{k} ({o.default})" for k, o in suite.options.items())
            print(f"  options: {opts}")
        if getattr(args, "all", False):
            print(f"  tasks ({len(tasks)}):")
            for task in tasks:
                print(f"    {task}")
            continue
        shown = tasks if args.suite and len(tasks) <= MANY else tasks[:6]
        more = "" if len(shown) == len(tasks) else f" ... ({len(tasks)} in all; --all or --json lists every id)"
        print(f"  tasks: {', '.join(shown)}{more}")
        if len(shown) < len(tasks):
            for line in task_counts(suite, tasks):
                print(f"    {line}")
    for name, why in sorted(broken_suites().items()):
        print(f"{name}: unavailable ({why})")
    return 0


