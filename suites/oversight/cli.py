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
from pathlib import Path
from typing import Any

from agentbed.arguments import check_output_file
from agentbed.errors import UsageError
from agentbed.summary import write_summary
from controllers.oversight.budget import parse_assignments, with_budgets
from controllers.oversight.dataset import Dataset
from controllers.oversight.evaluate import EvalConfig, evaluate
from controllers.oversight.merge import only_flaws
from controllers.oversight.policies import ForestSettings
from controllers.oversight.utility import Costs
from suites.oversight import build_cli
from suites.oversight.benchmarks import TARGETS
from suites.oversight.build_cli import command_line, positive
from suites.oversight.seeds import check_split, describe_seeds


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("oversight", help="prefix-branching oversight: build datasets, evaluate controllers")
    verbs = parser.add_subparsers(dest="oversight_command", metavar="VERB", parser_class=type(parser))
    parser.set_defaults(func=lambda args: _no_verb(parser))

    listing = verbs.add_parser("benchmarks", help="list the benchmarks that can be branched")
    listing.set_defaults(func=_benchmarks)

    build_cli.register(verbs)

    held = verbs.add_parser("table", help="one held-out table over benchmarks from records written by "
                                          "'evaluate HELD --train DEV --record FILE'")
    held.add_argument("records", nargs="+", help="records (JSON) written by evaluate --record, one per benchmark")
    held.add_argument("--summary", default=None, help="also write the table in the report's summary format")
    held.set_defaults(func=_table)

    from suites.oversight import curve_cli

    curve_cli.register(verbs, positive)

    from suites.oversight import contrast_cli

    contrast_cli.register(verbs, positive)

    every = verbs.add_parser("all", help="build and evaluate every benchmark; one table of regret per controller "
                                          "per benchmark (summary.json for the report)")
    every.add_argument("--out", required=True, help="run directory (writes oversight/*.jsonl and oversight/summary.json)")
    every.add_argument("--alfworld-games", type=positive, default=20, help="ALFWorld games (default 20)")
    every.add_argument("--benchmarks", default="", help="comma-separated subset (default: alfworld, scienceworld, "
                                                         "suite:contracts, graphrag)")
    every.add_argument("--workers", type=positive, default=2, help="processes")
    every.add_argument("--resamples", type=positive, default=1000, help="bootstrap resamples")
    every.set_defaults(func=_all)

    merge = verbs.add_parser("merge", help="join datasets built in parts (same configuration, disjoint games)")
    merge.add_argument("datasets", nargs="+", help="files written by 'agentbed oversight build'")
    merge.add_argument("--out", required=True, help="dataset file to write")
    merge.set_defaults(func=_merge)

    swap = verbs.add_parser("swap", help="take one intervention's rows from a build that set only it differently")
    swap.add_argument("base", help="the dataset to keep (every action but ACTION)")
    swap.add_argument("other", help="a build of the same games and agents, e.g. with --interventions ACTION")
    swap.add_argument("--action", required=True, help="the intervention whose rows come from OTHER")
    swap.add_argument("--out", required=True, help="dataset file to write")
    swap.set_defaults(func=_swap)

    feats = verbs.add_parser("features", help="recompute a dataset's prefix features from its base trajectories")
    feats.add_argument("dataset", help="a file written by 'agentbed oversight build'")
    feats.add_argument("--out", required=True, help="dataset file to write (same rows, new features)")
    feats.add_argument("--workers", type=positive, default=1, help="processes")
    feats.set_defaults(func=_features)

    reg = verbs.add_parser("regimes", help="room for control of candidate intervention settings on development "
                                           "datasets, and the one the documented rule chooses")
    reg.add_argument("datasets", nargs="+", help="development datasets, one per build setting (e.g. slip rate)")
    reg.add_argument("--budgets", default="none,20,15,10,8,6", help="step budgets of the primary intervention")
    reg.add_argument("--step-costs", default="0,0.01,0.03", help="extra costs per step of the primary intervention")
    reg.set_defaults(func=_regimes)

    ev = verbs.add_parser("evaluate", help="cross-validate the controllers on a dataset and print the tables")
    ev.add_argument("dataset", nargs="+", help="a file written by 'agentbed oversight build', or its parts (builds of "
                                              "one configuration on disjoint games, joined as 'merge' would)")
    ev.add_argument("--folds", type=positive, default=5)
    ev.add_argument("--fail-penalty", type=float, default=Costs.fail_penalty, help="w: a failure is worth -w")
    ev.add_argument("--intervene-cost", type=float, default=Costs.intervene)
    ev.add_argument("--step-cost", type=float, default=Costs.step)
    ev.add_argument("--action-step-cost", default=None, metavar="ACTION=COST,...",
                    help="extra cost per step of an action's branch, e.g. expert=0.02 (default: what the dataset's "
                         "build recorded, --expert-step-cost; none otherwise)")
    ev.add_argument("--budget", default="", metavar="ACTION=STEPS,...",
                    help="give an intervention a step budget after the fact, e.g. expert=10: its branches that took "
                         "longer count as failed after that many steps (exactly what a build with that budget gives)")
    ev.add_argument("--dispersion-penalty", type=float, default=ForestSettings.dispersion_penalty,
                    help="lambda of the action-conditioned controller (default: chosen by inner grouped CV "
                         "on the training games of each fold)")
    ev.add_argument("--trees", type=positive, default=ForestSettings.n_estimators,
                    help="trees per action-conditioned success forest (default 200, as public reconstructions of the paper's controller have it)")
    ev.add_argument("--no-grid", action="store_true", help="skip the 5x5 cost sweep")
    ev.add_argument("--resamples", type=positive, default=1000, help="bootstrap resamples")
    ev.add_argument("--train", default=None, nargs="+", metavar="DEV",
                    help="held-out protocol: fit every controller on this development dataset (games disjoint "
                         "from DATASET's, e.g. another generator seed), or on its parts (builds of one "
                         "configuration on disjoint games, joined as 'merge' would), and evaluate on all of DATASET")
    ev.add_argument("--flaws", default="", help="evaluate only these base agents' checkpoints (comma-separated)")
    ev.add_argument("--split-by", default="", metavar="FEATURE",
                    help="also show where each controller's regret sits: checkpoints with FEATURE > 0 "
                         "(e.g. alfworld's holding_other) and the rest")
    ev.add_argument("--json", default=None, help="write the full evaluation (per-checkpoint advantage too)")
    ev.add_argument("--summary", default=None, help="write tables and figures in the report's summary format")
    ev.add_argument("--record", default=None, metavar="HEADLINE.json",
                    help="write the compact record the demo shows (the result, the evaluate command, each dataset's "
                         "file, sha256 and build command); the datasets must lie in its folder or below")
    ev.add_argument("--configuration", default="", help="with --record: the configuration's name and description "
                                                         "('NAME: DESCRIPTION')")
    ev.set_defaults(func=_evaluate)


def _no_verb(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _benchmarks(args: argparse.Namespace) -> int:
    for name in sorted(TARGETS):
        print(name)
    print("suite:NAME (any installed suite; --base-agents and --interventions name its agents)")
    return 0


def _table(args: argparse.Namespace) -> int:
    from controllers.oversight.report import render_text
    from suites.oversight.heldout_table import heldout_table, read_records

    tab = heldout_table(read_records(args.records), "agentbed oversight table " + shlex.join(args.records))
    print(render_text([tab]))
    if args.summary:
        write_summary({"suite": "oversight", "title": "Prefix-branching oversight: every benchmark held out",
                       "headline": [], "tables": [tab], "figures": [], "command": tab["note"]}, args.summary)
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


def _merge(args: argparse.Namespace) -> int:
    from controllers.oversight.merge import merge_datasets

    check_output_file(Path(args.out), "--out")
    dataset = merge_datasets([(name, Dataset.load(name)) for name in args.datasets])
    dataset.provenance["command"] = command_line()
    path = dataset.save(args.out)
    counts = dataset.provenance["counts"]
    print(f"wrote {path}: {len(dataset.rows)} rows, {counts['checkpoints']} checkpoints, "
          f"{len(dataset.provenance['games'])} games from {len(args.datasets)} parts")
    return 0


def _swap(args: argparse.Namespace) -> int:
    from controllers.oversight.merge import swap_action_rows

    base, other = Dataset.load(args.base), Dataset.load(args.other)
    dataset = swap_action_rows(base, other, args.action, (args.base, args.other))
    dataset.provenance["command"] = command_line()
    dataset.provenance["swapped"]["commands"] = [base.provenance.get("command", ""), other.provenance.get("command", "")]
    path = dataset.save(args.out)
    print(f"wrote {path}: {len(dataset.rows)} rows, the {args.action} rows from {args.other}")
    return 0


def _features(args: argparse.Namespace) -> int:
    from suites.oversight.refeature import refeature

    check_output_file(Path(args.out), "--out")  # before minutes of replaying, not after
    dataset = refeature(Dataset.load(args.dataset), workers=args.workers,
                        progress=lambda m: print(m, file=sys.stderr, flush=True))
    path = dataset.save(args.out)
    print(f"wrote {path}: {len(dataset.rows)} rows, {len(dataset.provenance['feature_names'])} features")
    return 0


def _regimes(args: argparse.Namespace) -> int:
    from controllers.oversight.regime import Candidate, choose, measure

    try:
        budgets = [None if b == "none" else int(b) for b in args.budgets.split(",") if b]
        step_costs = [float(c) for c in args.step_costs.split(",") if c]
    except ValueError:
        raise UsageError("--budgets: integers or 'none'; --step-costs: numbers (comma-separated)") from None
    measured = []
    for name in args.datasets:
        data = Dataset.load(name)
        check_split(data.provenance, f"regimes: {name}", "fit")  # a regime is chosen on development games only
        for b in budgets:
            for c in step_costs:
                measured.append(measure(data, Candidate(name, b, c)))
    print("dataset  budget  step cost  oracle U  defer U  defer/oracle  best fixed  its regret  room  oracle picks")
    for m in measured:
        picks = " ".join(f"{a}={v:.2f}" for a, v in m["oracle_actions"].items())
        print(f"{m['label']}  {m['budget'] or '-'}  {m['step_cost']:g}  {m['oracle_utility']:.3f}  "
              f"{m['defer_utility']:.3f}  {m['defer_share_of_oracle']:.2f}  {m['best_fixed']}  "
              f"{m['best_fixed_regret']:.3f}  {m['room']:.2f}  {picks}")
    chosen = choose(measured)
    print("chosen: " + ("none admissible" if chosen is None else
                        f"{chosen['label']} budget {chosen['budget'] or 'none'} step cost {chosen['step_cost']:g} "
                        f"(room {chosen['room']:.2f}, defer/oracle {chosen['defer_share_of_oracle']:.2f})"))
    return 0


def evaluation_config(args: argparse.Namespace, dataset: Dataset | None = None) -> EvalConfig:
    """The evaluation settings of the command line; per-action step costs default to the ones
    the dataset's build recorded (``target_notes.action_step_costs``)."""
    if args.fail_penalty < 0 or args.intervene_cost < 0 or args.step_cost < 0:
        raise UsageError("--fail-penalty, --intervene-cost and --step-cost must not be negative")
    recorded = dict((dataset.provenance.get("target_notes") or {}).get("action_step_costs") or {}) if dataset else {}
    extra = parse_assignments(args.action_step_cost, "--action-step-cost") if args.action_step_cost is not None \
        else recorded
    costs = Costs(args.fail_penalty, args.intervene_cost, args.step_cost).with_action_steps(extra)
    return EvalConfig(folds=max(2, args.folds), costs=costs,
                      grid=not args.no_grid, forest=ForestSettings(n_estimators=args.trees, dispersion_penalty=args.dispersion_penalty),
                      resamples=args.resamples, split_by=args.split_by)


def _evaluate(args: argparse.Namespace) -> int:
    from controllers.oversight.report import figures, headlines, render_text, tables

    budgets = parse_assignments(args.budget, "--budget", int)
    if args.action_step_cost is not None:  # bad costs fail before any file is read
        parse_assignments(args.action_step_cost, "--action-step-cost")
    from controllers.oversight.merge import load_parts

    dataset = with_budgets(load_parts(args.dataset), budgets)
    train = with_budgets(load_parts(args.train), budgets) if args.train else None
    if args.flaws:
        dataset = only_flaws(dataset, [f for f in args.flaws.split(",") if f])
    fitted_on = train if train is not None else dataset  # cross-validation fits on the dataset itself
    check_split(fitted_on.provenance, f"evaluate: {' '.join(args.train or args.dataset)}", "fit",
              sorted({r["game"] for r in fitted_on.rows}))
    if train is not None:  # a held-out evaluation scores held-out games only
        check_split(dataset.provenance, f"evaluate: {' '.join(args.dataset)}", "held out", sorted({r["game"] for r in dataset.rows}))
    config = evaluation_config(args, dataset)
    result = evaluate(dataset, config, train)
    command = "agentbed oversight evaluate " + shlex.join(sys.argv[3:] if len(sys.argv) > 3 else args.dataset)
    tabs = tables(result, command)
    print(render_text(tabs))
    seeds = describe_seeds(dataset.provenance, sorted({r["game"] for r in dataset.rows}))
    if train is not None:
        seeds = f"fitted on {describe_seeds(train.provenance, sorted({r['game'] for r in train.rows}))}; evaluated on {seeds}"
    else:
        seeds = f"cross-validated on {seeds}"
    print(f"\nseeds: {seeds}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result, indent=1, default=str), encoding="utf-8")
    if args.record:
        from suites.oversight.record import heldout_roles, training_roles, write_record

        write_record(args.record, result, command, {**heldout_roles(args.dataset), **training_roles(args.train or [])},
                     args.configuration, config, budgets, seeds)
    if args.summary:
        summary = {"suite": "oversight", "title": f"Prefix-branching oversight: {result['benchmark']}",
                   "episodes": result["rows"], "seeds": len(dataset.provenance["config"].get("flaws") or []) or None,
                   "headline": headlines(result), "tables": tabs, "figures": figures(result), "command": command}
        write_summary(summary, args.summary)
    return 0
