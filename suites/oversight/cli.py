"""``agentbed oversight``: build a branching dataset, evaluate controllers, print and plot tables.

    agentbed oversight benchmarks
    agentbed oversight build alfworld --games 40 --rollouts 2 --out runs/oversight/alfworld.jsonl
    agentbed oversight evaluate runs/oversight/alfworld.jsonl --summary runs/oversight/alfworld-summary.json
    agentbed oversight features runs/oversight/alfworld.jsonl --out runs/oversight/alfworld-v2.jsonl
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from agentbed.errors import UsageError
from agentbed.summary import write_summary
from controllers.oversight.dataset import BuildConfig, Dataset, only_flaws
from controllers.oversight.evaluate import EvalConfig, evaluate
from controllers.oversight.policies import ForestSettings
from controllers.oversight.utility import Costs
from suites.oversight.benchmarks import TARGETS
from suites.oversight.build import build_dataset


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("oversight", help="prefix-branching oversight: build datasets, evaluate controllers")
    verbs = parser.add_subparsers(dest="oversight_command", metavar="VERB", parser_class=type(parser))
    parser.set_defaults(func=lambda args: _no_verb(parser))

    listing = verbs.add_parser("benchmarks", help="list the benchmarks that can be branched")
    listing.set_defaults(func=_benchmarks)

    build = verbs.add_parser("build", help="branch base-agent trajectories into a dataset file")
    build.add_argument("benchmark", help=f"one of: {', '.join(sorted(TARGETS))}, or suite:NAME for any suite")
    build.add_argument("--out", required=True, help="dataset file to write (JSON Lines)")
    build.add_argument("--games", type=_positive, default=None, help="use the first N games (default: all)")
    build.add_argument("--skip-games", "--offset", dest="skip_games", type=_nonnegative, default=0,
                       help="game offset: leave out the first N games (e.g. games never looked at while designing)")
    build.add_argument("--games-seed", type=_nonnegative, default=0,
                       help="alfworld: the game generator's seed (another seed gives games the controllers never saw)")
    build.add_argument("--fix-expert-bookkeeping", action="store_true",
                       help="alfworld: the expert learns that 'move O to R' put O down (ALFWorld's own does not)")
    build.add_argument("--flaws", default="", help="comma-separated scripted base agents (default: all, or none with --model)")
    build.add_argument("--model", default="", help="branch a chat model as base agent (provider:model); alone unless --flaws names scripted ones")
    build.add_argument("--server-threads", type=_positive, default=None,
                       help="a local: model's llama.cpp server threads (default: every core; 1 leaves a core to others)")
    build.add_argument("--seeds", type=_positive, default=1, help="base trajectories per game and flaw")
    build.add_argument("--rollouts", type=_positive, default=2, help="rollouts per candidate action")
    build.add_argument("--checkpoints", type=_positive, default=3, help="checkpoints per trajectory")
    build.add_argument("--first", type=_nonnegative, default=2, help="step of the first checkpoint")
    build.add_argument("--every", type=_positive, default=4, help="steps between checkpoints")
    build.add_argument("--max-steps", type=_positive, default=None,
                       help="step cap per episode and branch (default: the benchmark's, ALFWorld 50)")
    build.add_argument("--method", choices=("auto", "snapshot", "replay"), default="auto")
    build.add_argument("--workers", type=_positive, default=1, help="processes")
    build.add_argument("--base-agents", default="", help="suite:NAME only: comma-separated base agents")
    build.add_argument("--interventions", default="", help="suite:NAME only: comma-separated handover agents")
    build.add_argument("--logs", default=None, help="directory for one trajectory log per branch")
    build.set_defaults(func=_build)

    every = verbs.add_parser("all", help="build and evaluate every benchmark; one table of regret per controller "
                                          "per benchmark (summary.json for the report)")
    every.add_argument("--out", required=True, help="run directory (writes oversight/*.jsonl and oversight/summary.json)")
    every.add_argument("--alfworld-games", type=_positive, default=20, help="ALFWorld games (default 20)")
    every.add_argument("--benchmarks", default="", help="comma-separated subset (default: alfworld, scienceworld, "
                                                         "suite:contracts, graphrag)")
    every.add_argument("--workers", type=_positive, default=2, help="processes")
    every.add_argument("--resamples", type=_positive, default=1000, help="bootstrap resamples")
    every.set_defaults(func=_all)

    merge = verbs.add_parser("merge", help="join datasets built in parts (same configuration, disjoint games)")
    merge.add_argument("datasets", nargs="+", help="files written by 'agentbed oversight build'")
    merge.add_argument("--out", required=True, help="dataset file to write")
    merge.set_defaults(func=_merge)

    feats = verbs.add_parser("features", help="recompute a dataset's prefix features from its base trajectories")
    feats.add_argument("dataset", help="a file written by 'agentbed oversight build'")
    feats.add_argument("--out", required=True, help="dataset file to write (same rows, new features)")
    feats.add_argument("--workers", type=_positive, default=1, help="processes")
    feats.set_defaults(func=_features)

    ev = verbs.add_parser("evaluate", help="cross-validate the controllers on a dataset and print the tables")
    ev.add_argument("dataset", help="a file written by 'agentbed oversight build'")
    ev.add_argument("--folds", type=_positive, default=5)
    ev.add_argument("--fail-penalty", type=float, default=Costs.fail_penalty, help="w: a failure is worth -w")
    ev.add_argument("--intervene-cost", type=float, default=Costs.intervene)
    ev.add_argument("--step-cost", type=float, default=Costs.step)
    ev.add_argument("--dispersion-penalty", type=float, default=ForestSettings.dispersion_penalty,
                    help="lambda of the action-conditioned controller (default: chosen by inner grouped CV "
                         "on the training games of each fold)")
    ev.add_argument("--trees", type=_positive, default=ForestSettings.n_estimators,
                    help="trees per action-conditioned success forest (default: the paper's 200)")
    ev.add_argument("--no-grid", action="store_true", help="skip the 5x5 cost sweep")
    ev.add_argument("--resamples", type=_positive, default=1000, help="bootstrap resamples")
    ev.add_argument("--train", default=None,
                    help="held-out protocol: fit every controller on this development dataset (games disjoint "
                         "from DATASET's, e.g. another generator seed) and evaluate on all of DATASET")
    ev.add_argument("--flaws", default="", help="evaluate only these base agents' checkpoints (comma-separated)")
    ev.add_argument("--split-by", default="", metavar="FEATURE",
                    help="also show where each controller's regret sits: checkpoints with FEATURE > 0 "
                         "(e.g. alfworld's holding_other) and the rest")
    ev.add_argument("--json", default=None, help="write the full evaluation (per-checkpoint advantage too)")
    ev.add_argument("--summary", default=None, help="write tables and figures in the report's summary format")
    ev.set_defaults(func=_evaluate)


def _no_verb(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value


def _nonnegative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative")
    return value


def _benchmarks(args: argparse.Namespace) -> int:
    for name in sorted(TARGETS):
        print(name)
    print("suite:NAME (any installed suite; --base-agents and --interventions name its agents)")
    return 0


def _build(args: argparse.Namespace) -> int:
    if args.benchmark not in TARGETS and not args.benchmark.startswith("suite:"):
        raise UsageError(f"benchmark: unknown {args.benchmark!r}; benchmarks: {', '.join(sorted(TARGETS))}, suite:NAME")
    options: dict[str, Any] = {}
    if args.benchmark == "alfworld":
        options = {"games": args.skip_games + args.games} if args.games else {}
        options.update({"games_seed": args.games_seed} if args.games_seed else {})
        options.update({"fix_expert_bookkeeping": True} if args.fix_expert_bookkeeping else {})
    elif args.games_seed:
        raise UsageError(f"--games-seed: {args.benchmark} has no game generator (alfworld has)")
    elif args.fix_expert_bookkeeping:
        raise UsageError(f"--fix-expert-bookkeeping: {args.benchmark} has no ALFWorld expert (alfworld has)")
    if args.benchmark.startswith("suite:"):
        options = {"base": args.base_agents, "interventions": args.interventions}
    config = BuildConfig(benchmark=args.benchmark, games=args.games, skip_games=args.skip_games,
                         flaws=[f for f in args.flaws.split(",") if f] + ([f"model:{args.model}"] if args.model else []),
                         seeds=args.seeds, first=args.first,
                         every=args.every, checkpoints=args.checkpoints, rollouts=args.rollouts, method=args.method,
                         workers=args.workers, target_options=options, max_steps=args.max_steps)
    with _local_server(args.model, Path(args.out).parent, args.server_threads):
        dataset = build_dataset(config, log_dir=args.logs, progress=lambda m: print(m, file=sys.stderr, flush=True))
    path = dataset.save(args.out)
    counts = dataset.provenance["counts"]
    print(f"wrote {path}: {len(dataset.rows)} rows, {counts['checkpoints']} checkpoints, "
          f"{counts['replay_mismatches']} replay mismatches and {counts['branch_errors']} branch errors discarded")
    return 0


def _all(args: argparse.Namespace) -> int:
    from controllers.oversight.report import render_text
    from suites.oversight.everything import plans, run_all

    only = [b for b in args.benchmarks.split(",") if b]
    known = [p.benchmark for p in plans()]
    if any(b not in known for b in only):
        raise UsageError(f"--benchmarks: unknown {next(b for b in only if b not in known)!r}; known: {', '.join(known)}")
    out = run_all(Path(args.out), alfworld_games=args.alfworld_games, workers=args.workers,
                  resamples=args.resamples, only=only or None,
                  log=lambda m: print(m, file=sys.stderr, flush=True))
    print(render_text(out["summary"]["tables"][:1]))
    print(f"wrote {Path(args.out) / 'oversight' / 'summary.json'} (agentbed report {args.out} renders it)")
    return 0


def _local_server(model: str, run_dir: Path, threads: int | None = None) -> Any:
    """A ``local:`` model needs its llama.cpp server for the build (workers find it through the
    environment); any other model, none. On a shared small CPU one thread can be faster than
    every core: llama.cpp's threads wait for each other, so one preempted thread stalls them all."""
    if not model.startswith("local:"):
        return nullcontext()
    from agentbed.agents.local.server import ServerSettings, serving

    run_dir.mkdir(parents=True, exist_ok=True)
    return serving([model], run_dir, ServerSettings(threads=threads))


def _merge(args: argparse.Namespace) -> int:
    from controllers.oversight.merge import merge_datasets

    dataset = merge_datasets([(name, Dataset.load(name)) for name in args.datasets])
    path = dataset.save(args.out)
    counts = dataset.provenance["counts"]
    print(f"wrote {path}: {len(dataset.rows)} rows, {counts['checkpoints']} checkpoints, "
          f"{len(dataset.provenance['games'])} games from {len(args.datasets)} parts")
    return 0


def _features(args: argparse.Namespace) -> int:
    from suites.oversight.refeature import refeature

    dataset = refeature(Dataset.load(args.dataset), workers=args.workers,
                        progress=lambda m: print(m, file=sys.stderr, flush=True))
    path = dataset.save(args.out)
    print(f"wrote {path}: {len(dataset.rows)} rows, {len(dataset.provenance['feature_names'])} features")
    return 0


def evaluation_config(args: argparse.Namespace) -> EvalConfig:
    if args.fail_penalty < 0 or args.intervene_cost < 0 or args.step_cost < 0:
        raise UsageError("--fail-penalty, --intervene-cost and --step-cost must not be negative")
    return EvalConfig(folds=max(2, args.folds), costs=Costs(args.fail_penalty, args.intervene_cost, args.step_cost),
                      grid=not args.no_grid, forest=ForestSettings(n_estimators=args.trees, dispersion_penalty=args.dispersion_penalty),
                      resamples=args.resamples, split_by=args.split_by)


def _evaluate(args: argparse.Namespace) -> int:
    from controllers.oversight.report import figures, headlines, render_text, tables

    dataset = Dataset.load(args.dataset)
    train = Dataset.load(args.train) if args.train else None
    if args.flaws:
        dataset = only_flaws(dataset, [f for f in args.flaws.split(",") if f])
    config = evaluation_config(args)
    result = evaluate(dataset, config, train)
    command = "agentbed oversight evaluate " + shlex.join(sys.argv[3:] if len(sys.argv) > 3 else [args.dataset])
    tabs = tables(result, command)
    print(render_text(tabs))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result, indent=1, default=str), encoding="utf-8")
    if args.summary:
        summary = {"suite": "oversight", "title": f"Prefix-branching oversight: {result['benchmark']}",
                   "episodes": result["rows"], "seeds": len(dataset.provenance["config"].get("flaws") or []) or None,
                   "headline": headlines(result), "tables": tabs, "figures": figures(result), "command": command}
        write_summary(summary, args.summary)
    return 0
