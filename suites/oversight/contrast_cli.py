"""``agentbed oversight contrast HELD --train DEV --versus HELD2 --versus-train DEV2``: does the
action-conditioned controller's gain over the scalar-only policy chosen on development change
between two settings (two expert slip rates: two builds; two step budgets: the same build with
``--budget`` and ``--versus-budget``)? The interval of the difference of the two gains on the shared
held-out checkpoints (controllers/oversight/contrast.py)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from agentbed.errors import UsageError
from agentbed.summary import table
from controllers.oversight.budget import parse_assignments
from controllers.oversight.contrast import gain_contrast, shared_checkpoints
from controllers.oversight.curve import AC, SELECTED, once_regrets, size_regrets
from controllers.oversight.evaluate import EvalConfig
from controllers.oversight.policies import ForestSettings
from controllers.oversight.report import fmt_interval
from suites.oversight.curve_cli import Side, load_side
from suites.oversight.record import heldout_roles, name_datasets, training_roles


def register(verbs: Any, positive: Any) -> None:
    contrast = verbs.add_parser("contrast", help="the AC's gain over the chosen scalar-only policy at two settings, "
                                                 "and the interval of their difference on the shared held-out checkpoints")
    contrast.add_argument("dataset", nargs="+", help="the held-out dataset of the first setting, or its parts")
    contrast.add_argument("--train", required=True, nargs="+", metavar="DEV", help="its development dataset (parts)")
    contrast.add_argument("--versus", required=True, nargs="+", metavar="HELD",
                          help="the held-out dataset of the second setting: the same games and base agents")
    contrast.add_argument("--versus-train", required=True, nargs="+", metavar="DEV",
                          help="its development dataset: the same games as --train's, so training draws pair")
    contrast.add_argument("--labels", default="first,second", help="the two settings' names, comma-separated")
    contrast.add_argument("--draws", type=positive, default=5, help="bootstrap draws of all development units")
    contrast.add_argument("--trees", type=positive, default=ForestSettings.n_estimators)
    contrast.add_argument("--resamples", type=positive, default=500, help="two-level bootstrap resamples")
    contrast.add_argument("--budget", default="", metavar="ACTION=STEPS,...",
                          help="as evaluate --budget: the first setting's (and the second's unless --versus-budget)")
    contrast.add_argument("--versus-budget", default=None, metavar="ACTION=STEPS,...|none",
                          help="the second setting's budgets, when the settings differ by them (e.g. the expert's step "
                               "budget on the same builds); 'none': no budget")
    contrast.add_argument("--json", default=None, help="write the result")
    contrast.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from controllers.oversight.report import render_text

    labels = [s.strip() for s in args.labels.split(",")]
    if len(labels) != 2 or not all(labels):
        raise UsageError(f"--labels: two names, comma-separated, got {args.labels!r}")
    budgets = parse_assignments(args.budget, "--budget", int)
    versus_budgets = budgets if args.versus_budget is None else (
        {} if args.versus_budget.strip() == "none" else parse_assignments(args.versus_budget, "--versus-budget", int))
    first = load_side(args.dataset, args.train, budgets, "contrast")
    second = load_side(args.versus, args.versus_train, versus_budgets, "contrast")
    units = sorted(set(first.train.games.tolist()))
    if units != sorted(set(second.train.games.tolist())):
        raise UsageError("--versus-train: the two development sets must hold the same games, so that each training "
                         "draw picks the same games at both settings")
    if first.costs != second.costs:
        raise UsageError("--versus: the two held-out builds record different per-step action costs")
    roles = {**heldout_roles(args.dataset), **training_roles(args.train),
             **{f"versus-{k}": v for k, v in {**heldout_roles(args.versus), **training_roles(args.versus_train)}.items()}}
    files = name_datasets(Path(args.json or "."), roles, "--json", anywhere=True)
    config = EvalConfig(costs=first.costs, grid=False, resamples=args.resamples,
                        forest=ForestSettings(n_estimators=args.trees))
    result = contrast(first, second, len(units), args.draws, config)
    command = "agentbed oversight contrast " + shlex.join(sys.argv[3:])
    record = {"command": command, "labels": labels, "seeds": [first.seeds, second.seeds], "datasets": files,
              "budgets": [budgets, versus_budgets],
              "development_units": len(units), **result}
    print(render_text([contrast_table(record)]))
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return 0


def contrast(first: Side, second: Side, n: int, draws: int, config: EvalConfig) -> dict[str, Any]:
    """Fit both settings on the same draws of their ``n`` development units (and once on all), score
    on each held-out set, and contrast the gains on the checkpoints both share."""
    a, b = shared_checkpoints(first.test, second.test)
    groups = first.test.games[a]
    out: dict[str, Any] = {"held_out_checkpoints": [len(first.test), len(second.test)], "shared_checkpoints": len(a),
                           "held_out_units": len(set(groups.tolist())), "draws": draws,
                           "controller": AC, "baseline": SELECTED}

    def progress(m: str) -> None:
        print(m, file=sys.stderr, flush=True)

    fits = {}
    for name, side, idx in (("first", first, a), ("second", second, b)):
        R, _ = size_regrets(side.train, side.test, n, draws, config, progress)
        once = once_regrets(side.train, side.test, config)
        fits[name] = ({k: v[:, idx] for k, v in R.items()}, {k: v[:, idx] for k, v in once.items()})
    for key, n_fit in (("over_draws", 0), ("one_fit", 1)):
        out[key] = gain_contrast(fits["first"][n_fit], fits["second"][n_fit], groups, controller=AC, baseline=SELECTED,
                                 resamples=config.resamples, seed=config.seed)
    return out


def contrast_table(record: dict[str, Any]) -> dict[str, Any]:
    first, second = record["labels"]
    rows = [[label, fmt_interval(r["first"]), fmt_interval(r["second"]), fmt_interval(r["contrast"]), r["verdict"]]
            for label, r in ((f"{record['draws']} bootstrap draws of {record['development_units']} units",
                              record["over_draws"]), (f"one fit on all {record['development_units']}", record["one_fit"]))]
    columns = ["fits", f"gain at {first}", f"gain at {second}", f"gain at {first} - gain at {second}", "verdict"]
    return table(f"Gain of {record['controller']} over {record['baseline']}: {first} against {second}", columns, rows,
                 f"gain = regret({record['baseline']}) - regret({record['controller']}) on held-out checkpoints (> 0: "
                 f"the controller gains); {record['shared_checkpoints']} checkpoints of {record['held_out_units']} "
                 "held-out units shared by both settings, each paired with itself. 95% two-level percentile "
                 "intervals: held-out units resampled (one draw for both settings) and training draws resampled "
                 "(the same draws at both: draw d is the same development units). Verdict: the gain shrinks from "
                 f"{first} to {second} where the interval of the difference lies above 0, grows where below. "
                 f"Seeds: {first}: {record['seeds'][0]}; {second}: {record['seeds'][1]}.{_budgets_note(record)} "
                 f"Regenerate: {record['command']}")


def _budgets_note(record: dict[str, Any]) -> str:
    """The two settings' step budgets, when they differ (older records name none: the same on both)."""
    budgets = record.get("budgets")
    if not budgets or budgets[0] == budgets[1]:
        return ""
    first, second = record["labels"]

    def words(b: dict[str, int]) -> str:
        return ", ".join(f"{a} gives up after {n} steps" for a, n in sorted(b.items())) or "no step budget"

    return f" Budgets: {first}: {words(budgets[0])}; {second}: {words(budgets[1])}."
