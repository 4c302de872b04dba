"""The oversight workload's entry into the engine.

``agentbed run oversight`` runs the ALFWorld base agents (the trajectories the protocol
branches); ``agentbed demo`` shows the committed held-out measurement (suites/oversight/data,
checked by sha256) and rebuilds one of its games live to check that the rows are the committed
ones. ALFWorld is imported lazily so the suite loads without the extra.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from agentbed.agents.base import Agent
from agentbed.env import ToolEnv
from agentbed.factories import EpisodeSetup
from agentbed.runner import Budget
from agentbed.suite import Option, Suite
from suites.oversight.benchmarks.alfworld import BASE_FLAWS

FULL = {"resamples": 1000}
GATED_ACTIONS = ("continue", "expert", "planner", "reflect")
# The action-conditioned / scalar routing regret on ALFWorld as the paper's abstract states it
# ("substantially reduces regret ... from 0.506 to 0.110 on ALFWorld"). Public reconstructions'
# "recalibration leaves regret unchanged (0.318)" is not shown at all: the paper does not state
# that figure (issue 54).
PAPER_RATIO = "0.22 (0.110 / 0.506, the paper's abstract)"
DATA = Path(__file__).resolve().parent / "data"
HEADLINE = DATA / "headline.json"  # written by `agentbed oversight evaluate ... --record`


def _tasks(options: dict[str, Any]) -> list[str]:
    from suites.alfworld.suite import select_tasks

    return select_tasks({"games": options["games"], "split": "all", "task_type": "all"})


def _make_env(task: str, options: dict[str, Any]) -> ToolEnv:
    from environments.alfworld.env import AlfworldEnv

    return AlfworldEnv(task)


def _base_agent(flaw: str) -> Any:
    def factory(setup: EpisodeSetup) -> Agent:
        from environments.alfworld.agents import make_base_agent

        return make_base_agent(flaw, setup.spec.seed)

    return factory


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_headline(path: Path = HEADLINE) -> dict[str, Any]:
    """The committed held-out measurement, its datasets checked against their recorded sha256."""
    from agentbed.errors import UsageError

    record = json.loads(path.read_text(encoding="utf-8"))
    for role, data in record["datasets"].items():
        file = path.parent / data["file"]
        if not file.is_file() or sha256_of(file) != data["sha256"]:
            raise UsageError(f"{file}: missing or not the {role} dataset the headline was measured on "
                             f"(sha256 {data['sha256']})")
    return record


def live_slice(record: dict[str, Any], out: Path, games: int = 1) -> tuple[Any, dict[str, Any]]:
    """Rebuild the first ``games`` games of the committed held-out dataset with its own build
    configuration and compare the rows: they must be the committed ones, byte for byte."""
    from controllers.oversight.dataset import Dataset
    from suites.oversight.build import build_dataset, recorded_config

    committed = Dataset.load(HEADLINE.parent / record["datasets"]["heldout"]["file"])
    config = recorded_config(committed.provenance, games=games, skip_games=0, workers=2)
    live = build_dataset(config)
    live.save(out)
    wanted = set(committed.provenance["games"][:games])
    expected = [r for r in committed.rows if r["game"] in wanted]
    same = sum(json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
               for a, b in zip(live.rows, expected, strict=False))
    return live, {"games": sorted(wanted), "rows": len(live.rows), "expected": len(expected), "identical": same,
                  "verified": same == len(expected) == len(live.rows),
                  "base_seeding": config.target_options.get("base_seeding", "")}


def demo(out_dir: Path, settings: dict[str, Any] | None = None, benchmark: str = "alfworld",
         full: bool = False) -> dict[str, Any]:
    """Show the committed held-out measurement (its datasets checked by sha256), rebuild one of
    its games live and check that the rows are the committed ones, gate the live rows. With
    ``full`` the committed measurement is re-evaluated from its datasets (minutes)."""
    from agentbed import progress
    from agentbed.errors import UsageError
    from agentbed.results import write_results
    from agentbed.summary import write_summary
    from controllers.oversight.budget import with_budgets
    from controllers.oversight.evaluate import EvalConfig, evaluate
    from controllers.oversight.merge import load_parts
    from controllers.oversight.policies import ForestSettings
    from controllers.oversight.report import tables
    from suites.oversight.record import heldout_files, training_files

    if benchmark != "alfworld":
        raise UsageError(f"the oversight demo shows the ALFWorld headline; got benchmark {benchmark!r}")
    record = load_headline()
    where = Path(out_dir) / "oversight"
    with progress.steps("oversight: rebuilding a held-out game live", 1) as done:
        live, check = live_slice(record, where / "alfworld-live.jsonl", **(settings or {}))
        done(f"{check['identical']} of {check['expected']} rows as committed")
    tabs: list[dict[str, Any]] = []
    if full:
        with progress.steps("oversight: re-evaluating the committed held-out measurement", 1) as done:
            budgets = record["eval_config"]["budgets"]
            held = with_budgets(load_parts([str(HEADLINE.parent / f) for f in heldout_files(record)]), budgets)
            dev = with_budgets(load_parts([str(HEADLINE.parent / f) for f in training_files(record)]), budgets)
            config = EvalConfig(costs=_costs(record), forest=ForestSettings(**record["eval_config"]["forest"]),
                                grid=False, resamples=FULL["resamples"])
            again = evaluate(held, config, dev)
            tabs = tables(again, record["command"])
            done()
    costs = _costs(record)
    summary = {"suite": "oversight", "title": f"Prefix-branching oversight (ALFWorld, {record['configuration']['name']})",
               "episodes": check["rows"], "seeds": 1, "headline": [], "tables": tabs or _record_tables(record),
               "figures": [], "command": record["command"], "findings": findings(record, check)}
    write_summary(summary, where / "summary.json")
    budgeted = with_budgets(live, record["eval_config"]["budgets"])  # as evaluated: the budget applied after the build
    write_results(where / "results.json", gate_metrics(budgeted, costs), command=record["command"], suite="oversight",
                  config={"configuration": record["configuration"], "live": check, "costs": costs.to_dict()})
    return summary


def _costs(record: dict[str, Any]) -> Any:
    from controllers.oversight.utility import Costs

    c = dict(record["eval_config"]["costs"])
    return Costs(c["fail_penalty"], c["intervene"], c["step"], c.get("continue_", 0.0)).with_action_steps(
        c.get("action_steps") or {})


def _record_tables(record: dict[str, Any]) -> list[dict[str, Any]]:
    from agentbed.summary import table
    from controllers.oversight.report import fmt_interval

    r = record["result"]
    rows = [[name, fmt_interval(iv)] for name, iv in r["regret"].items()]
    rows += [[f"ratio action-conditioned / {k}", fmt_interval(v)] for k, v in r["ratios"].items()]
    files = "; ".join(f"{k}: {d['file']} sha256 {d['sha256']} (built by: {d['command']})"
                      for k, d in record["datasets"].items())
    return [table("Held-out regret (committed measurement)", ["controller", "regret [95% CI]"], rows,
                  f"{record['configuration']['description']}. {files}. Evaluated by: {record['command']}")]


def _over_draws(record: dict[str, Any]) -> str:
    """The same ratio over training draws, from the committed curve drawn from the same development
    datasets and scored on the same held-out one (by sha256)."""
    path = DATA / "curve-alfworld.json"
    if not path.is_file():
        return ""
    curve = json.loads(path.read_text(encoding="utf-8"))
    if _sha256s(curve.get("datasets", {})) != _sha256s(record["datasets"]):  # same held-out and training data
        return ""
    full = curve["points"][-1]
    iv, diff = full["ratio"]["scalar-selected"], full["difference"]["scalar-selected"]
    verdict = "gain" if diff["high"] < 0 else "loss" if diff["low"] > 0 else "no significant gain"
    return (f"; over {full['draws']} bootstrap draws of the {full['size']} development games "
            f"{iv['estimate']:.2f} [{iv['low']:.2f}, {iv['high']:.2f}], difference {diff['estimate']:+.3f} "
            f"[{diff['low']:+.3f}, {diff['high']:+.3f}]: {verdict} ({path.name})")


def _sha256s(datasets: dict[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
    """The sets of a record's held-out datasets (or parts) and of its training datasets, by sha256."""
    held = {role for role in datasets if role == "heldout" or role.startswith("heldout-")}
    return (frozenset(datasets[role]["sha256"] for role in held),
            frozenset(d["sha256"] for role, d in datasets.items() if role not in held))


def findings(record: dict[str, Any], check: dict[str, Any]) -> list[dict[str, Any]]:
    """The one-screen lines: the held-out headline (the comparison the paper makes beside the
    paper's number, and ours against the scalar policy chosen on training folds), whether there was
    room for control, the calibration test, and the live rebuild."""
    from agentbed.stats import Interval
    from agentbed.summary import finding

    def iv(d: dict[str, float]) -> Interval:
        return Interval(d["estimate"], d["low"], d["high"], int(d.get("n", 0)))

    r = record["result"]
    name = record["configuration"]["name"]
    where = f"{name}; {r['checkpoints']} held-out checkpoints, {r['games']} games of a held-out generator seed (suites/oversight/seeds.py)"
    base = ("scripted base agents" if check.get("base_seeding") != "legacy" else
            "scripted base agents, their flaws and risk noise seeded without the game (built before that fix)")
    spread = r["spread"]
    verdict = "verified" if check["verified"] else "DIFFERS"
    return [
        finding("held out: ratio AC / two-action routing", iv(r["ratios"]["scalar"]), paper=PAPER_RATIO,
                note=f"the paper's comparison; {where}; {base}"),
        finding("held out: ratio AC / scalar-only chosen on training folds", iv(r["ratios"]["selected_scalar_only"]),
                paper="none (the paper compares with threshold routing)",
                note=f"regime: {r['regime']}{_over_draws(record)}"),
        finding("room for control: always-defer utility / oracle's", iv(spread["defer_to_oracle_utility"]),
                note=f"best action is not defer at {spread['share_best_not_primary']['estimate']:.2f} of checkpoints"),
        finding("cost-derived rule: regret Platt - raw", iv(r["calibration"]["cost-rule+platt - cost-rule"]),
                note=r["calibration"]["saturation"]),
        finding("live rebuild of the committed data", f"{verdict}: {check['identical']} of {check['expected']} rows",
                note=f"game {', '.join(check['games'])}; dataset sha256 "
                     f"{record['datasets']['heldout']['sha256'][:12]}..."),
    ]


def gate_metrics(live: Any, costs: Any, tolerance: float = 0.05) -> list[dict[str, Any]]:
    """Per checkpoint of the live rebuild, the realized utility of each action (mean over its
    rollouts), in the gate's results format (higher is better): a change in ALFWorld, the agents
    or the interventions moves them."""
    from controllers.oversight.utility import branch_utility

    per: dict[str, dict[str, list[float]]] = {}
    for row in live.rows:
        unit = f"{row['game']}/{row['trajectory']}@{row['checkpoint']}"
        per.setdefault(row["action"], {}).setdefault(unit, []).append(
            branch_utility(row["action"], row["success"], row["steps"], costs))
    return [{"suite": "oversight", "agent": action, "metric": "utility", "higher_is_better": True,
             "tolerance": tolerance, "values": {u: sum(v) / len(v) for u, v in sorted(per[action].items())}}
            for action in GATED_ACTIONS if action in per]


SUITE = Suite(
    name="oversight",
    description="Prefix-branching oversight: base agents on ALFWorld, branched and scored by controllers.",
    tasks=_tasks,
    make_env=_make_env,
    agents={f"base-{flaw}": _base_agent(flaw) for flaw in BASE_FLAWS},
    default_agent="base-noisy",
    options={"games": Option(4, "use the first N generated ALFWorld games", type=int)},
    budget=Budget(max_steps=50),
    demo=demo,
)
