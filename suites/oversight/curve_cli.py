"""``agentbed oversight curve HELD --train DEV``: the learning curve over the development set's
size, repeated over training draws (controllers/oversight/curve.py), printed as one table."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from agentbed.errors import UsageError
from agentbed.summary import table, write_summary
from controllers.oversight.budget import parse_assignments, with_budgets
from controllers.oversight.curve import AC, CURVE_CONTROLLERS, RISK_AC, SELECTED, learning_curve
from controllers.oversight.dataset import Dataset
from controllers.oversight.evaluate import EvalConfig, _development_set, load_checkpoints
from controllers.oversight.policies import ForestSettings
from controllers.oversight.report import fmt_interval
from controllers.oversight.utility import Costs
from suites.oversight.seeds import check_fit, describe_seeds


def register(verbs: Any, positive: Any) -> None:
    curve = verbs.add_parser("curve", help="learning curve: fit on growing draws of the development set, score on "
                                           "the same held-out dataset, several draws per size")
    curve.add_argument("dataset", help="the held-out dataset")
    curve.add_argument("--train", required=True, help="the development dataset the draws come from")
    curve.add_argument("--sizes", required=True, help="comma-separated development sizes in units (games; "
                                                      "GraphRAG: questions), the largest at most all of them")
    curve.add_argument("--draws", type=positive, default=5, help="training draws per size (the full size: "
                                                                  "bootstrap resamples of the development units)")
    curve.add_argument("--trees", type=positive, default=ForestSettings.n_estimators)
    curve.add_argument("--resamples", type=positive, default=500, help="two-level bootstrap resamples")
    curve.add_argument("--budget", default="", metavar="ACTION=STEPS,...", help="as evaluate --budget")
    curve.add_argument("--json", default=None, help="write the curve")
    curve.add_argument("--summary", default=None, help="write the table in the report's summary format")
    curve.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from controllers.oversight.report import render_text

    try:
        sizes = [int(s) for s in args.sizes.split(",") if s]
    except ValueError:
        raise UsageError(f"--sizes: comma-separated integers, got {args.sizes!r}") from None
    budgets = parse_assignments(args.budget, "--budget", int)
    held, dev = (with_budgets(Dataset.load(p), budgets) for p in (args.dataset, args.train))
    check_fit(dev.provenance, f"curve: {args.train}", sorted({r["game"] for r in dev.rows}))
    recorded = dict((held.provenance.get("target_notes") or {}).get("action_step_costs") or {})
    config = EvalConfig(costs=Costs().with_action_steps(recorded), grid=False, resamples=args.resamples,
                        forest=ForestSettings(n_estimators=args.trees))
    test, _ = load_checkpoints(held)
    train = _development_set(dev, test)
    curve = learning_curve(train, test, sizes, args.draws, config,
                           progress=lambda m: print(m, file=sys.stderr, flush=True))
    command = "agentbed oversight curve " + shlex.join(sys.argv[3:])
    seeds = (f"fitted on draws of {describe_seeds(dev.provenance)}; evaluated on {describe_seeds(held.provenance)}")
    tab = curve_table(curve, command, seeds)
    print(render_text([tab]))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"command": command, "seeds": seeds, **curve}, indent=1) + "\n",
                                   encoding="utf-8")
    if args.summary:
        write_summary({"suite": "oversight", "title": "Prefix-branching oversight: learning curve", "headline": [],
                       "tables": [tab], "figures": [], "command": command}, args.summary)
    return 0


def curve_table(curve: dict[str, Any], command: str, seeds: str) -> dict[str, Any]:
    rows = []
    for p in curve["points"]:
        spread = [r for r in p["ratio_to_selected_per_draw"] if r == r]
        rows.append([p["size"], f"{p['draws']} ({p['distinct_training_sets']})",
                     *(fmt_interval(p["regret"][c]) for c in CURVE_CONTROLLERS),
                     fmt_interval(p["ratio"][SELECTED]), fmt_interval(p["difference"][SELECTED]),
                     f"{min(spread):.2f}-{max(spread):.2f}" if spread else "-"])
    columns = ["development units", "draws (distinct)", *(f"{c} regret" for c in CURVE_CONTROLLERS),
               f"ratio {AC} / {SELECTED}", f"difference {AC} - {SELECTED}", "ratio per draw (range)"]
    return table("Learning curve: held-out regret by development size", columns, rows,
                 f"{curve['held_out_checkpoints']} held-out checkpoints of {curve['held_out_units']} units, the same "
                 f"at every size; development draws from {curve['units']} units (below the full size without "
                 "replacement; at the full size bootstrap resamples). 95% two-level bootstrap intervals: training "
                 f"draws and held-out units both resampled. {RISK_AC}: the same forests on the score alone. "
                 f"{seeds}. Regenerate: {command}")
