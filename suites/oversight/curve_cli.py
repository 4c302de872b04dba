"""``agentbed oversight curve HELD --train DEV``: the learning curve over the development set's
size, repeated over training draws (controllers/oversight/curve.py), printed as one table."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentbed.errors import UsageError
from agentbed.summary import table, write_summary
from controllers.oversight.budget import parse_assignments, with_budgets
from controllers.oversight.checkpoints import Checkpoints
from controllers.oversight.curve import AC, BASELINES, CLAIM_PAIRS, RISK_AC, SELECTED, learning_curve
from controllers.oversight.evaluate import EvalConfig, _development_set, load_checkpoints
from controllers.oversight.merge import load_parts
from controllers.oversight.policies import ForestSettings
from controllers.oversight.report import fmt_interval
from controllers.oversight.utility import Costs
from suites.oversight.record import heldout_roles, name_datasets, training_roles
from suites.oversight.seeds import check_split, describe_seeds


def register(verbs: Any, positive: Any) -> None:
    curve = verbs.add_parser("curve", help="learning curve: fit on growing draws of the development set, score on "
                                           "the same held-out dataset, several draws per size")
    curve.add_argument("dataset", nargs="+", help="the held-out dataset, or its parts (as --train's)")
    curve.add_argument("--train", required=True, nargs="+", metavar="DEV",
                       help="the development dataset the draws come from, or its parts (builds of one "
                            "configuration on disjoint games, joined as 'oversight merge' would)")
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
    if sizes != sorted(set(sizes)):
        raise UsageError(f"--sizes: increasing and distinct, got {args.sizes!r}")
    side = load_side(args.dataset, args.train, parse_assignments(args.budget, "--budget", int), "curve")
    config = EvalConfig(costs=side.costs, grid=False, resamples=args.resamples,
                        forest=ForestSettings(n_estimators=args.trees))
    files = name_datasets(Path(args.json or "."), {**heldout_roles(args.dataset), **training_roles(args.train)}, "--json",
                          anywhere=True)  # as read, before the long fit
    curve = learning_curve(side.train, side.test, sizes, args.draws, config,
                           progress=lambda m: print(m, file=sys.stderr, flush=True))
    command = "agentbed oversight curve " + shlex.join(sys.argv[3:])
    seeds = side.seeds
    tabs = [curve_table(curve, command, seeds), claims_table(curve), changes_table(curve)]
    print(render_text(tabs))
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"command": command, "seeds": seeds, "datasets": files, **curve}, indent=1) + "\n",
                        encoding="utf-8")
    if args.summary:
        write_summary({"suite": "oversight", "title": "Prefix-branching oversight: learning curve", "headline": [],
                       "tables": tabs, "figures": [], "command": command}, args.summary)
    return 0


@dataclass
class Side:
    """A held-out dataset and the development set fitted on for it, as checkpoints."""

    test: Checkpoints
    train: Checkpoints
    costs: Costs  # the default costs with the held-out build's recorded per-step action costs
    seeds: str  # which generator seeds each side used, in words


def load_side(held_paths: list[str], dev_paths: list[str], budgets: dict[str, int], verb: str) -> Side:
    """Load a held-out dataset and its development set (each possibly in parts), with ``budgets``
    applied, refusing to fit on a held-out seed or to score on a development one."""
    held = with_budgets(load_parts(held_paths), budgets)
    dev = with_budgets(load_parts(dev_paths), budgets)
    check_split(dev.provenance, f"{verb}: {' '.join(dev_paths)}", "fit", sorted({r["game"] for r in dev.rows}))
    check_split(held.provenance, f"{verb}: {' '.join(held_paths)}", "held out", sorted({r["game"] for r in held.rows}))
    recorded = dict((held.provenance.get("target_notes") or {}).get("action_step_costs") or {})
    test, _ = load_checkpoints(held)
    return Side(test, _development_set(dev, test), Costs().with_action_steps(recorded),
                f"fitted on draws of {describe_seeds(dev.provenance)}; evaluated on {describe_seeds(held.provenance)}")


def _with_once(points: list[dict[str, Any]]) -> list[tuple[str, str, dict[str, Any]]]:
    """(size label, draws label, point) per row: every size, and the full size fitted once."""
    rows = []
    for p in points:
        rows.append((str(p["size"]), f"{p['draws']} ({p['distinct_training_sets']})", p))
        if "all_once" in p:
            rows.append((f"{p['size']} (all, once)", "1 (1)", {**p["all_once"], "size": p["size"]}))
    return rows


def curve_table(curve: dict[str, Any], command: str, seeds: str) -> dict[str, Any]:
    rows = []
    for size, draws, p in _with_once(curve["points"]):
        spread = [r for r in p["ratio_to_selected_per_draw"] if r == r]
        rows.append([size, draws,
                     *(fmt_interval(p["regret"][c]) for c in (AC, *BASELINES)),
                     fmt_interval(p["ratio"][SELECTED]), fmt_interval(p["difference"][SELECTED]),
                     f"{min(spread):.2f}-{max(spread):.2f}" if spread else "-"])
    columns = ["development units", "draws (distinct)", *(f"{c} regret" for c in (AC, *BASELINES)),
               f"ratio {AC} / {SELECTED}", f"difference {AC} - {SELECTED}", "ratio per draw (range)"]
    return table("Learning curve: held-out regret by development size", columns, rows,
                 f"{curve['held_out_checkpoints']} held-out checkpoints of {curve['held_out_units']} units, the same "
                 f"at every size; development draws from {curve['units']} units (below the full size without "
                 "replacement; at the full size bootstrap resamples, and 'all, once': every unit, one fit, "
                 "its interval over held-out units only). 95% two-level bootstrap intervals: training "
                 f"draws and held-out units both resampled. {RISK_AC}: the same forests on the score alone. "
                 f"{seeds}. Regenerate: {command}")


CLAIM_BASELINES = ("scalar", SELECTED, "scalar-bands", "scalar-bands-any", RISK_AC)


def claims_table(curve: dict[str, Any]) -> dict[str, Any]:
    """The paper's claims per development size, each over the same training draws: the AC against
    two-action routing and against the full-menu scalar-only routers, and recalibration (Platt -
    raw) under the cost-derived rule and under the re-tuned threshold."""
    rows = [[size, *(fmt_interval(p["ratio"][b]) for b in CLAIM_BASELINES),
             *(fmt_interval(p["claims"][f"{a} - {b}"]) for a, b in CLAIM_PAIRS)]
            for size, _, p in _with_once(curve["points"])]
    columns = ["development units", *(f"ratio {AC} / {b}" for b in CLAIM_BASELINES),
               *(f"regret {a} - {b}" for a, b in CLAIM_PAIRS)]
    return table("The paper's claims over the training draws", columns, rows,
                 "The same fits as the learning curve; 95% two-level bootstrap intervals (training draws and "
                 "held-out units). scalar: two-action score routing (the paper's baseline); cost-rule: the "
                 "threshold fixed by the costs; scalar+platt: the threshold re-tuned after recalibration.")


def changes_table(curve: dict[str, Any]) -> dict[str, Any]:
    """Whether the curve has flattened: the change from each size to the next, with intervals."""
    rows = [[f"{c['from']} -> {c['to']}", *(fmt_interval(c["regret"][k]) for k in (AC, SELECTED, RISK_AC)),
             fmt_interval(c["ratio_to_selected"])] for c in curve["changes"]]
    columns = ["development units", *(f"change of {k} regret" for k in (AC, SELECTED, RISK_AC)),
               f"change of ratio {AC} / {SELECTED}"]
    return table("Learning curve: change between consecutive sizes", columns, rows,
                 "Later minus earlier size, on the same held-out checkpoints; each size's training draws resampled "
                 "on their own and the held-out units jointly (95% percentile intervals). An interval "
                 "containing 0 says the step is not measurable at this held-out size, not that it is 0.")
