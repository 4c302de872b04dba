"""``agentbed list``: suites, their tasks, agents and options; and a suite's part of ``run SUITE --help``."""

from __future__ import annotations

import argparse
import json
from typing import Any

from agentbed.errors import UsageError
from agentbed.suite import Suite, SuiteError, broken_suites, get_suite, load_suites


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("list", help="list suites, their tasks and agents")
    p.add_argument("suite", nargs="?", help="show one suite in detail")
    p.add_argument("--json", action="store_true", help="print suites, tasks (with what the suite says of each) "
                   "and agents as one JSON document")
    p.add_argument("--all", action="store_true", help="print every task id, one a line, however many")
    # a suite's own options (--NAME VALUE, as for run) list its tasks at those values
    p.set_defaults(func=cmd_list, accepts_extra=True)


def suite_listing(suite: Suite, given: dict[str, Any] | None = None) -> dict[str, Any]:
    """One suite as ``agentbed list --json`` prints it, its tasks at the ``given`` suite options
    (``listed_with``: every option's value); tasks carry the suite's ``describe_task``."""
    options = suite.resolve_options(given or {})
    tasks = suite.task_ids(options)
    return {"name": suite.name, "description": suite.description, "default_agent": suite.default_agent,
            "agents": suite.agent_names(), "default_seeds": suite.default_seeds,
            "options": {k: {"default": o.default, "help": o.help,
                            "choices": list(o.choices) if o.choices is not None else None}
                        for k, o in suite.options.items()},
            "listed_with": options, "task_counts": counted_options(suite, options),
            "tasks": [{"id": t, "hidden": t in suite.hidden_tasks,
                       **(suite.describe_task(t) if suite.describe_task else {})} for t in tasks]}


def counted_options(suite: Suite, options: dict[str, Any]) -> dict[str, dict[str, int]]:
    """For each option the suite marks ``counted`` (it selects which tasks exist), the number of
    tasks at each of its choices, the other options as listed."""
    return {name: {str(choice): len(suite.task_ids({**options, name: choice})) for choice in option.choices or ()}
            for name, option in suite.options.items() if option.counted}


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


def _flag(name: str) -> str:
    return f"--{name.replace('_', '-')}"


def cmd_list(args: argparse.Namespace) -> int:
    from agentbed.cli_plan import parse_suite_options

    extra = list(getattr(args, "extra", None) or [])
    suites = load_suites()
    if extra and (not args.suite or args.suite not in suites):  # `list --opt V` reads V as the suite
        raise UsageError(f"{extra[0]}: a suite's options follow the suite: agentbed list SUITE {extra[0]} VALUE")
    given = parse_suite_options(extra)
    names = [args.suite] if args.suite else sorted(suites)
    if getattr(args, "json", False):
        doc = {"suites": [suite_listing(get_suite(name), given) for name in names],
               "unavailable": dict(sorted(broken_suites().items()))}
        print(json.dumps(doc, indent=1, default=str))
        return 0
    for name in names:
        suite = get_suite(name)
        options = suite.resolve_options(given)
        tasks = suite.task_ids(options)
        print(f"{suite.name}: {suite.description}")
        print(f"  agents: {', '.join(suite.agent_names())} (default {suite.default_agent}); any --model provider:model")
        if suite.options:
            opts = ", ".join(f"--{k} ({o.default})" for k, o in suite.options.items())
            print(f"  options: {opts}")
        # the values the tasks were listed at: those given, and always those of a counted option
        shown_at = {**{k: v for k, v in options.items() if suite.options[k].counted}, **given}
        at = "".join(f" {_flag(k)} {v}" for k, v in shown_at.items())
        at = f" at{at}" if at else ""
        if getattr(args, "all", False):
            print(f"  tasks ({len(tasks)}{at}):")
            for task in tasks:
                print(f"    {task}")
            continue
        shown = tasks if args.suite and len(tasks) <= MANY else tasks[:6]
        more = "" if len(shown) == len(tasks) else f" ... ({len(tasks)} in all{at}; --all or --json lists every id)"
        print(f"  tasks: {', '.join(shown)}{more}")
        if len(shown) < len(tasks):
            for line in task_counts(suite, tasks):
                print(f"    {line}")
        if args.suite:
            for key, counts in counted_options(suite, options).items():
                print(f"  tasks by {_flag(key)}: " + ", ".join(f"{v} {n}" for v, n in counts.items())
                      + f" (listed: {options[key]}; agentbed list {suite.name} {_flag(key)} VALUE lists another)")
    for name, why in sorted(broken_suites().items()):
        print(f"{name}: unavailable ({why})")
    return 0


