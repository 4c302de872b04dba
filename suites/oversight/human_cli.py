"""``agentbed oversight-human``: a person as one of the oversight controllers, compared with the
automated ones on the same checkpoints (controllers/oversight/human.py)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from agentbed.approval import TIMEOUT_POLICIES
from agentbed.errors import UsageError
from suites.oversight.seeds import check_split


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("oversight-human", help="a person decides at each checkpoint of an oversight dataset; "
                       "their regret beside every automated controller's")
    p.add_argument("dataset", help="a branched dataset (agentbed oversight build)")
    p.add_argument("--decisions", required=True, help="the person's decisions (JSON Lines; read, and appended to)")
    p.add_argument("--approvals", metavar="DIR", help="ask for the checkpoints not yet decided here (the terminal "
                   "and `agentbed view --approvals DIR` answer); without it every checkpoint must be decided")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds a question waits (default 300)")
    p.add_argument("--timeout-policy", choices=TIMEOUT_POLICIES, default="reject",
                   help="the answer when nobody answers (default reject: quit)")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--resamples", type=int, default=1000)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_human)


def cmd_human(args: argparse.Namespace) -> int:
    from controllers.oversight.dataset import Dataset
    from controllers.oversight.evaluate import EvalConfig, cross_validate, load_checkpoints
    from controllers.oversight.human import HumanReview, compare_with_controllers

    if not args.timeout > 0:
        raise UsageError(f"--timeout must be a positive number of seconds, not {args.timeout}")
    config = EvalConfig(folds=args.folds, grid=False, resamples=args.resamples)
    dataset = Dataset.load(args.dataset)
    # the controllers beside the person are cross-validated on this dataset: development games only
    check_split(dataset.provenance, f"oversight-human: {args.dataset}", "fit", sorted({r["game"] for r in dataset.rows}))
    cps, _ = load_checkpoints(dataset)
    human = HumanReview(Path(args.decisions), Path(args.approvals) if args.approvals else None,
                        timeout=args.timeout, on_timeout=args.timeout_policy)
    human.choose(cps, config.costs)  # the person first (or the one-line error), then the slower fitting
    chosen = {name: slots[0] for name, slots in cross_validate(cps, config, [config.costs])["chosen"].items()}
    result = compare_with_controllers(cps, human, chosen, config.costs, resamples=args.resamples, seed=config.seed)
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    h = result["human"]["regret"]
    print(f"{result['checkpoints']} checkpoints; regret per checkpoint (lower is better), 95% cluster-bootstrap "
          f"intervals over games")
    print(f"  {'human':<24} {h['estimate']:.3f} [{h['low']:.3f}, {h['high']:.3f}]")
    for name, row in sorted(result["controllers"].items()):
        r, d = row["regret"], row["human_minus_controller"]
        print(f"  {name:<24} {r['estimate']:.3f} [{r['low']:.3f}, {r['high']:.3f}]   human - it: "
              f"{d['estimate']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}]")
    return 0
