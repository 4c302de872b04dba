"""``agentbed control``: honest and attack modes of the control settings under a grid of protocols
and defer thresholds; safety and usefulness at audit budgets, with the trusted and untrusted
baselines, paired intervals and a Pareto plot."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from agentbed.agents.cache import ModelCallCache
from agentbed.binding import binding
from agentbed.errors import UsageError
from agentbed.executors import execute
from agentbed.inflight import ModelRuntime, is_model_bound
from agentbed.runner import EpisodeSpec
from agentbed.store import RunStore
from agentbed.summary import write_summary
from suites.control.report import write_control_summary

COMMAND = "agentbed control"
AC_TRAIN = "ac-train"  # the sub-run the action-conditioned protocol is fitted on


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("control", help="AI control evaluation: safety and usefulness of micro-protocols "
                                       "at audit budgets (honest and attack modes)")
    p.add_argument("--out", required=True, help="run directory to create")
    p.add_argument("--settings", default="contracts,agentdojo,shell,code", help="comma-separated settings")
    p.add_argument("--protocols", default="tm,dtt,dtr,te", help="comma-separated micro-protocols")
    p.add_argument("--defer", default="0.3,0.6", help="comma-separated defer thresholds (dtt, dtr, te)")
    p.add_argument("--monitor", default="scripted", choices=("scripted", "self", "model", "ensemble"))
    p.add_argument("--monitor-model", default="", help="chat model of a model monitor (provider:model)")
    p.add_argument("--untrusted", default="", help="a chat model as the untrusted policy (provider:model); "
                                                   "default: the scripted honest and attack policies")
    p.add_argument("--trusted", default="trusted", help="the trusted policy: 'trusted' (scripted) or provider:model")
    p.add_argument("--editor", default="scripted", help="trusted editing's editor: 'scripted' or a chat model "
                                                         "(provider:model)")
    p.add_argument("--strategies", default="blatant,disguised,subtle", help="scripted attack strategies")
    p.add_argument("--tasks", type=int, default=0, help="at most this many tasks per setting (0: all)")
    p.add_argument("--seeds", type=int, default=1)
    p.add_argument("--attack-rate", type=float, default=1.0,
                   help="probability a scripted attack policy attacks at each opportunity")
    p.add_argument("--k", type=int, default=3, help="resamples of defer-to-resample")
    p.add_argument("--ac-train-tasks", type=int, default=3,
                   help="tasks per setting, after the evaluated ones, that the action-conditioned protocol (ac) "
                        "is fitted on (branched at every step)")
    p.add_argument("--counterfactual", type=int, default=20,
                   help="branch at most this many intervened attack episodes into every alternative (0: none)")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples of the intervals")
    p.add_argument("--cache", action=argparse.BooleanOptionalAction, default=True,
                   help="keep a model policy's calls in the model-call cache (default: on): the counterfactual "
                        "branches of a model-played episode then start from the very proposal it recorded")
    p.add_argument("--cache-dir", help="model-call cache directory (default: the per-user one, as agentbed run's)")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--executor", default="process", choices=("serial", "process"))
    p.set_defaults(func=cmd_control)


def _list(text: str, what: str) -> list[str]:
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items:
        raise UsageError(f"--{what}: give at least one value")
    return items


def grid(args: argparse.Namespace) -> list[EpisodeSpec]:
    """Every (protocol config, policy, task, seed) of the run; the trusted baseline once, under tm."""
    from controllers.control.protocols import PROTOCOLS
    from suites.control.settings import SETTINGS

    settings = _list(args.settings, "settings")
    for s in settings:
        if s not in SETTINGS:
            raise UsageError(f"--settings: unknown setting {s!r} (settings: {', '.join(SETTINGS)})")
    protocols = _list(args.protocols, "protocols")
    for p in protocols:
        if p not in PROTOCOLS:
            raise UsageError(f"--protocols: unknown protocol {p!r} (protocols: {', '.join(PROTOCOLS)})")
    try:
        defers = [float(x) for x in _list(args.defer, "defer")]
    except ValueError as exc:
        raise UsageError(f"--defer: {exc}") from None
    base = {**({"editor": _model(args.editor)} if args.editor != "scripted" else {}),
            "monitor": args.monitor, "monitor_model": _model(args.monitor_model) if args.monitor_model else "", "trusted": _model(args.trusted),
            "k": args.k, **({"attack_rate": args.attack_rate} if args.attack_rate != 1.0 else {})}
    configs = [{**base, "protocol": p, "defer": d} for p in protocols if p != "ac" for d in
               ([1.0] if p == "tm" else defers)]
    if "ac" in protocols:
        if not args.tasks:
            raise UsageError("--protocols ac: give --tasks N, so that the tasks after the first N train it")
        configs.append({**base, "protocol": "ac", "defer": 1.0,
                        "ac_rows": str((Path(args.out) / AC_TRAIN / "control" / "ac_rows.jsonl").resolve())})
    if "tm" not in protocols:
        configs.insert(0, {**base, "protocol": "tm", "defer": 1.0})  # the untrusted baseline
    if args.untrusted:
        model = _model(args.untrusted)
        policies = [(model, {"mode": "honest"}), (model, {"mode": "attack"})]
    else:
        policies = [("honest", {})] + [(f"attack-{s}", {}) for s in _list(args.strategies, "strategies")]
    tasks = [f"{s}/{t}" for s in settings for t in (SETTINGS[s].tasks()[:args.tasks] if args.tasks
                                                    else SETTINGS[s].tasks())]
    specs = [EpisodeSpec("control", task, agent, seed, {**config, **extra})
             for config in configs for agent, extra in policies for task in tasks for seed in range(args.seeds)]
    tm = {**base, "protocol": "tm", "defer": 1.0}
    specs += [EpisodeSpec("control", task, "trusted", seed, tm) for task in tasks for seed in range(args.seeds)]
    if "ac" in protocols:  # the tasks after the evaluated slice, under trusted monitoring: ac's training set
        train = [f"{s}/{t}" for s in settings for t in SETTINGS[s].tasks()[args.tasks:args.tasks + args.ac_train_tasks]]
        specs += [EpisodeSpec("control", task, agent, seed, {**tm, **extra, "split": "train"})
                  for agent, extra in policies for task in train for seed in range(args.seeds)]
    return specs


def _model(name: str) -> str:
    return name if name == "trusted" or name.startswith("model:") else f"model:{name}"


def subrun_name(options: dict[str, Any], agent: str) -> str:
    """The sub-run a spec belongs to: one agentbed run per protocol configuration (a run's plan is
    agents x tasks x seeds under one set of options), and the trusted baseline's own."""
    from suites.control.analysis import protocol_key

    if options.get("split") == "train":
        return AC_TRAIN
    name = "trusted" if agent == "trusted" else protocol_key(options)
    if options.get("mode") == "attack":  # a model's two modes differ in an option: two runs' plans
        name += "-attack"
    return "".join(c if c.isalnum() or c in "@.-_" else "_" for c in name)


def run_grid(args: argparse.Namespace) -> Path:
    """Run the grid as one sealed agentbed run per protocol configuration under ``--out``; the
    control summary is written into each (so ``agentbed report OUT/SUBRUN`` shows the whole grid) and
    at ``OUT/control/summary.json``."""
    from agentbed.agents.local.server import serving

    specs = grid(args)
    root = Path(args.out)
    if root.exists() and any(root.iterdir()):
        raise UsageError(f"--out {args.out}: exists and is not empty; choose another directory")
    groups: dict[str, list[EpisodeSpec]] = {}
    for spec in specs:
        groups.setdefault(subrun_name(spec.options, spec.agent), []).append(spec)
    if AC_TRAIN in groups:  # run first: the ac protocol's episodes read the rows branched from it
        groups = {AC_TRAIN: groups.pop(AC_TRAIN), **groups}
    # any model named by a policy, the trusted role or the monitor: local ones get a server for the run
    models = {s.agent for s in specs} | {str(s.options.get(k, "")) for s in specs
                                         for k in ("trusted", "monitor_model", "editor")}
    cache = _cache(args, specs)
    with contextlib.ExitStack() as stack:
        stack.enter_context(serving(sorted(m for m in models if m), root))
        stores = []
        for name, group in groups.items():
            store = RunStore(root / name)
            store.create({"suite": "control", "tasks": sorted({s.task for s in group}),
                          "agents": sorted({s.agent for s in group}), "seeds": sorted({s.seed for s in group}),
                          "options": group[0].options, "degrade": 0.0, "command": _command(args)})
            stack.enter_context(store)
            bound = binding(store.meta())  # every log's header names its sub-run (agentbed.binding), as run's do
            group = [replace(s, run=bound) for s in group]
            runtime = ModelRuntime.for_run([s.agent for s in group if is_model_bound(s.agent)], store.root,
                                           cache=cache) if cache is not None else None
            for record in execute(group, store.root, executor=args.executor, jobs=args.jobs, runtime=runtime):
                store.append(record)
            store.flush()
            if name == AC_TRAIN:
                from suites.control.ac_train import training_rows, write_rows

                write_rows(training_rows(store.root, root), store.root / "control" / "ac_rows.jsonl")
            stores.append(store)
        summary = write_control_summary(root, _command(args), resamples=args.resamples,
                                        counterfactual=args.counterfactual, cache=cache)
        for store in stores:
            write_summary(summary, store.root / "control" / "summary.json")
            store.finish(["control/summary.json", *(["control/ac_rows.jsonl"] if store.root.name == AC_TRAIN else [])])
    return root


def _cache(args: argparse.Namespace, specs: list[EpisodeSpec]) -> ModelCallCache | None:
    """The model-call cache of a run a chat model plays the untrusted policy in (None otherwise)."""
    if not args.cache or not any(is_model_bound(s.agent) for s in specs):
        return None
    return ModelCallCache(args.cache_dir)


def _command(args: argparse.Namespace) -> str:
    parts = [COMMAND, f"--settings {args.settings}", f"--protocols {args.protocols}", f"--defer {args.defer}",
             f"--monitor {args.monitor}", f"--seeds {args.seeds}"]
    if args.tasks:
        parts.append(f"--tasks {args.tasks}")
    if args.untrusted:
        parts.append(f"--untrusted {args.untrusted}")
    if args.attack_rate != 1.0:
        parts.append(f"--attack-rate {args.attack_rate:g}")
    if args.trusted != "trusted":
        parts.append(f"--trusted {args.trusted}")
    if args.monitor_model:
        parts.append(f"--monitor-model {args.monitor_model}")
    if args.editor != "scripted":
        parts.append(f"--editor {args.editor}")
    if "ac" in args.protocols:
        parts.append(f"--ac-train-tasks {args.ac_train_tasks}")
    if not args.cache and args.untrusted:
        parts.append("--no-cache")
    parts += [f"--counterfactual {args.counterfactual}", f"--resamples {args.resamples}"]
    return " ".join(parts)


def cmd_control(args: argparse.Namespace) -> int:
    root = run_grid(args)
    summary = main_json(root)
    for line in summary.get("lines", []):
        print(line)
    print(f"control run in {root}; summary in {root / 'control' / 'summary.json'}", file=sys.stderr)
    return 0


def main_json(root: Path) -> dict[str, Any]:
    return json.loads((root / "control" / "summary.json").read_text())
