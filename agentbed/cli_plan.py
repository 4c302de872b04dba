"""What ``agentbed run`` will run: the episodes of a plan, checked before anything is recorded.

The agents of a run are the scripted ones named by ``--agent`` and the chat models named by
``--model`` (each a comma list, each repeatable), in the order given: one run directory, one
summary, one report and one gate for all of them. The reference agent (``--reference``, default
the first) is the one every other agent's paired difference is measured against
(:func:`agentbed.summary_pairs.paired_table`). Every model string is checked up front: its form
(``provider:model``), a provider LangChain knows, its knobs, and, unless a Ray node serves it,
that its chat model can be built with the run's generation settings: without importing the
provider's client where :mod:`agentbed.agents.precheck` can tell, else by building it.
"""

from __future__ import annotations

import argparse
import fnmatch
import shlex
import sys
from collections.abc import Sequence
from typing import Any

from agentbed.agents.precheck import checked_without_client
from agentbed.errors import UsageError, printable
from agentbed.factories import add_controller_option, controllers_of
from agentbed.planned import Planned
from agentbed.provenance import provenance
from agentbed.runner import EpisodeSpec
from agentbed.schemas import seeds_text
from agentbed.suite import Suite, SuiteError, is_suite_reference

MAX_SEEDS = 100_000  # seeds per task in one run
MAX_SEED = 2**32 - 1  # the largest seed numpy's generators take


class Roster(argparse.Action):
    """``--agent`` and ``--model``: comma lists, repeatable, kept in the order given (``args.roster``
    holds ``agent:NAME`` / ``model:PROVIDER:MODEL`` ids); ``args.agent``/``args.model`` say whether each was given."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        roster = list(getattr(namespace, "roster", None) or [])
        names = [v.strip() for v in str(values).split(",")]
        if not all(names):
            raise UsageError(f"{option_string} {values!r}: an empty name in the list")
        odd = next((n for n in names if not n.isprintable()), None)
        if odd is not None:  # it would be printed in every table, log header and report (session 18's probe)
            raise UsageError(f"{option_string} {printable(odd)!r}: a name with a control or invisible character")
        prefix = "model:" if self.dest == "model" else ""
        roster += [prefix + n for n in names]
        namespace.roster = roster
        setattr(namespace, self.dest, [*(getattr(namespace, self.dest, None) or []), *names])


def add_plan_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--task", action="append", help="task id or shell-style pattern, quoted ('banking.*');"
                   " repeatable; default: all")
    p.add_argument("--agent", action=Roster, metavar="NAMES",
                   help="scripted agent name(s), comma-separated, repeatable (default: the suite's default); "
                        "module:Class or path/to/file.py:Class is your own agent (docs/extending.md)")
    p.add_argument("--model", action=Roster, metavar="MODELS",
                   help="provider:model for the LangChain chat agent, e.g. openai:gpt-4o-mini; comma-separated,"
                        " repeatable, combines with --agent; local:gemma-3-270m or local:FILE.gguf serves a local"
                        " model for the run")
    p.add_argument("--reference", metavar="AGENT",
                   help="the agent every other one is compared with, paired by task and seed (default: the first)")
    p.add_argument("--seeds", type=int, help="number of seeds per task (default: the suite's)")
    p.add_argument("--seed-start", type=int, default=0, help="first seed (default 0)")
    p.add_argument("--limit", type=int, metavar="N",
                   help="run only the first N planned episodes (in plan order: agent, task, seed)")
    add_controller_option(p)
    p.set_defaults(roster=None)


def parse_suite_options(extra: list[str]) -> dict[str, str]:
    options: dict[str, str] = {}
    i = 0
    while i < len(extra):
        item = extra[i]
        if not item.startswith("--") or item == "--":
            raise UsageError(f"unexpected argument {item!r}")
        name, eq, value = item[2:].partition("=")
        if not eq:
            if i + 1 >= len(extra) or extra[i + 1].startswith("--"):
                raise UsageError(f"option --{name} needs a value")
            value, i = extra[i + 1], i + 1
        options[name.replace("-", "_")] = value
        i += 1
    return options


def check_model_string(model: str) -> None:
    """The form of a ``--model`` string: ``provider:model`` with a provider LangChain knows;
    ``?knobs`` only for ``local:`` models, each a knob of the compact profile."""
    provider, colon, name = model.partition(":")
    if not colon or not provider or not name.split("?", 1)[0]:
        raise UsageError(f"--model {model!r}: expected provider:model, e.g. openai:gpt-4o-mini")
    if provider == "local":
        from agentbed.agents.local.profile import LocalProfile

        LocalProfile.from_model(model)  # every knob known and well-typed
        return
    if "?" in model:
        raise UsageError(f"--model {model!r}: '?KNOB=VALUE' is for local: models only; give a provider's "
                         "generation settings with --temperature, --max-tokens-per-call or -M KEY=VALUE")
    from agentbed.agents.precheck import builtin_providers

    known = builtin_providers()  # read from LangChain's source: importing it takes seconds
    if not known:  # a LangChain whose table is laid out otherwise: ask it
        from langchain.chat_models import base

        known = getattr(base, "_BUILTIN_PROVIDERS", None) or getattr(base, "_SUPPORTED_PROVIDERS", None) or {}
    if known and provider not in known:
        raise UsageError(f"--model {model!r}: unknown provider {provider!r} (LangChain's providers: "
                         f"{', '.join(sorted(known))})")


def expand_task_patterns(given: list[str], known: list[str], suite: str) -> list[str]:
    """``--task`` values, a shell-style pattern (``'banking.*'``, ``'*.user_task_1?'``) standing for
    every known task it matches, in the suite's order; a pattern that matches none is an error."""
    out: list[str] = []
    for value in given:
        if not any(c in value for c in "*?["):
            out.append(value)
            continue
        matched = [t for t in known if fnmatch.fnmatchcase(t, value)]
        if not matched:
            raise SuiteError(f"--task {value!r}: matches no task of suite {suite!r} (see: agentbed list {suite})")
        out.extend(t for t in matched if t not in out)
    return out


def plan(suite: Suite, args: argparse.Namespace, generation: dict[str, Any] | None = None,
         ) -> tuple[Planned, dict[str, Any]]:
    options = suite.resolve_options(parse_suite_options(args.extra))
    known = suite.task_ids(options)
    tasks = expand_task_patterns(args.task, known, suite.name) if args.task else \
        [t for t in known if t not in suite.hidden_tasks]
    refuse_duplicates("--task", tasks)
    for task in tasks:
        if task not in known:
            raise SuiteError(f"suite {suite.name!r} has no task {task!r} (see: agentbed list {suite.name})")
    if suite.check_tasks is not None:
        suite.check_tasks(tasks, options)
    agents = list(args.roster or [suite.default_agent])
    refuse_duplicates("--agent/--model", agents)
    models = [a.removeprefix("model:") for a in agents if a.startswith("model:")]
    for model in models:
        check_model_string(model)
    for agent in agents:
        if not agent.startswith("model:") and not suite.has_agent(agent):
            raise SuiteError(f"suite {suite.name!r} has no agent {agent!r} (agents: {', '.join(suite.agent_names())})")
    reference = reference_of(args.reference, agents)
    generation = dict(generation or {})
    if generation and not models:
        raise UsageError("--temperature, --max-tokens-per-call and -M set a chat model's generation: give --model")
    for agent in agents:  # a missing provider package, key or bad setting: an error before anything runs
        served_on_nodes = args.executor == "ray" and agent.startswith("model:local:")
        if agent.startswith("model:") and not served_on_nodes:
            if suite.model_agent is None and checked_without_client(agent.removeprefix("model:"), generation):
                continue  # its client is imported at the run's first call, after the plan is shown
            suite.make_agent(EpisodeSpec(suite.name, tasks[0], agent, 0, options, generation=generation))
    n = args.seeds if args.seeds is not None else suite.default_seeds
    if not 1 <= n <= MAX_SEEDS:
        raise UsageError(f"--seeds must be between 1 and {MAX_SEEDS}, not {n}")
    if args.seed_start + n - 1 > MAX_SEED:  # what numpy's generators take
        raise UsageError(f"--seed-start {args.seed_start} with --seeds {n}: seeds must stay at most {MAX_SEED}")
    seeds = range(args.seed_start, args.seed_start + n)  # run.json lists them; held as a range, never a list
    degrade = 0.0 if args.degrade is None else args.degrade
    if not 0.0 <= degrade <= 1.0:  # also refuses nan
        raise UsageError(f"--degrade must be between 0 and 1, not {degrade}")
    controllers = controllers_of(args)
    specs = Planned(EpisodeSpec(suite.name, "", "", 0, options, degrade, generation, controllers),
                    tuple(agents), tuple(tasks), seeds)  # made one at a time, as the run reaches them
    # an id ends ".s<seed>" (characters kept as they are), so two ids can be one only at the same seed
    refuse_colliding_ids(Planned(specs.template, specs.agents, specs.tasks, specs.seeds[:1]))
    meta = {"suite": suite.name, "tasks": tasks, "agents": agents, "seeds": seeds, "options": options,
            "degrade": degrade, "reference": reference,
            "command": "agentbed " + shlex.join(sys.argv[1:] if sys.argv[0].endswith("agentbed") else []),
            "provenance": provenance([suite.name])}
    if controllers:
        meta["controllers"] = list(controllers)
    if is_suite_reference(args.suite):
        meta["suite_ref"] = args.suite
    if generation:
        meta["generation"] = generation
    return specs, meta


def refuse_colliding_ids(specs: Sequence[EpisodeSpec]) -> None:
    """Two planned episodes with one episode id would share one log (the id rewrites characters
    a file name cannot hold: ``reset/a`` and ``reset_a`` both become ``reset_a``): refused,
    naming both, before anything runs."""
    seen: dict[str, EpisodeSpec] = {}
    for spec in specs:
        other = seen.setdefault(spec.episode_id, spec)
        if other is not spec:
            raise UsageError(f"episodes {_described(other)} and {_described(spec)} would both be logged as "
                             f"{spec.episode_id!r}; rename a task, agent or option value so their ids differ "
                             "(docs/cli.md, episode ids)")


def _described(spec: EpisodeSpec) -> str:
    opts = ",".join(f"{k}={v}" for k, v in sorted(spec.options.items()))
    return f"(task {spec.task!r}, agent {spec.agent!r}{f', options {opts}' if opts else ''}, seed {spec.seed})"


def reference_of(given: str | None, agents: list[str]) -> str:
    """The reference agent: ``--reference`` (an agent name or a model string), else the first agent."""
    if given is None:
        return agents[0]
    for candidate in (given, f"model:{given}"):
        if candidate in agents:
            return candidate
    raise UsageError(f"--reference {given!r}: not an agent of this run (agents: {', '.join(agents)})")


def refuse_duplicates(option: str, names: list[str]) -> None:
    seen = set()
    for name in names:
        if name in seen:
            raise UsageError(f"{option}: {name!r} is given twice (each episode would be run and counted twice)")
        seen.add(name)


def limited(specs: Sequence[EpisodeSpec], limit: int | None) -> Sequence[EpisodeSpec]:
    """The first ``limit`` planned episodes (all when None)."""
    if limit is None:
        return specs
    if limit < 1:
        raise UsageError(f"--limit must be at least 1, not {limit}")
    return specs[:limit]


def resume_plan(suite: Suite, meta: dict[str, Any], args: argparse.Namespace, where: str,
                generation: dict[str, Any] | None = None) -> Planned:
    """The recorded plan, after checking it against the suite and against every argument the
    user gave: an argument that contradicts run.json is an error naming both, never ignored."""
    given = None
    if any(v is not None for v in (args.task, args.agent, args.model, args.seeds, args.degrade)) \
            or args.seed_start != 0 or args.extra:
        given, _ = plan(suite, args, meta.get("generation") if args.roster else None)
    checks = (("--task", args.task is not None, "tasks", lambda s: s.task),
              ("--agent/--model", args.agent is not None or args.model is not None, "agents", lambda s: s.agent),
              ("--seeds/--seed-start", args.seeds is not None or args.seed_start != 0, "seeds", lambda s: s.seed))
    for option, passed, name, part in checks:
        mine = sorted({part(s) for s in given}) if given else []
        if passed and mine != sorted(meta[name]):
            recorded, wanted = (seeds_text(meta[name]), seeds_text(mine)) if name == "seeds" else (meta[name], mine)
            raise UsageError(f"{option} contradicts {where}: field {name!r} is {recorded}, not {wanted}")
    if args.degrade is not None and args.degrade != meta.get("degrade", 0.0):
        raise UsageError(f"--degrade contradicts {where}: field 'degrade' is {meta.get('degrade', 0.0)}")
    if generation and generation != meta.get("generation", {}):
        raise UsageError(f"--temperature/--max-tokens-per-call/-M contradict {where}: field 'generation' is "
                         f"{meta.get('generation', {})}, not {generation}")
    for name in parse_suite_options(args.extra):
        if given and given[0].options.get(name) != meta["options"].get(name):
            raise UsageError(f"--{name} contradicts {where}: field 'options.{name}' is {meta['options'].get(name)!r}")
    try:
        # a default run.json recorded (cocoder's --repo '') was given by no one: not checked as a value
        recorded = {k: v for k, v in meta["options"].items() if k not in suite.options or v != suite.options[k].default}
        known = suite.task_ids(suite.resolve_options(recorded))
    except SuiteError as exc:
        raise UsageError(f"{where}: field 'options': {exc}") from None
    for task in meta["tasks"]:
        if task not in known:
            raise UsageError(f"{where}: field 'tasks' names {task!r}, which suite {suite.name!r} does not have")
    for agent in meta["agents"]:
        if not agent.startswith("model:") and not suite.has_agent(agent):
            raise UsageError(f"{where}: field 'agents' names {agent!r}, which suite {suite.name!r} does not have")
    controllers = tuple(meta.get("controllers") or ())
    if getattr(args, "controller", None) and tuple(args.controller) != controllers:
        raise UsageError(f"--controller contradicts {where}: field 'controllers' is {list(controllers)}")
    for ref in controllers:
        from agentbed.factories import load_controller

        load_controller(ref)
    recorded = dict(meta.get("generation") or {})
    return Planned(EpisodeSpec(suite.name, "", "", 0, meta["options"], meta.get("degrade", 0.0), recorded, controllers),
                   tuple(meta["agents"]), tuple(meta["tasks"]),
                   meta["seeds"] if isinstance(meta["seeds"], range) else tuple(meta["seeds"]))  # read as a range
