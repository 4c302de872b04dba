"""Tables and figures of an oversight evaluation, in the engine's summary format and as text."""

from __future__ import annotations

import textwrap
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 - the backend must be chosen first
import numpy as np  # noqa: E402

from agentbed.report.plots import BarRow, interval_bars  # noqa: E402
from agentbed.stats import Interval  # noqa: E402
from agentbed.summary import figure_from_matplotlib, fmt, headline, table  # noqa: E402
from controllers.oversight.utility import GRID_FAIL_PENALTY, GRID_INTERVENE  # noqa: E402


def _iv(d: dict[str, float]) -> Interval:
    return Interval(d["estimate"], d["low"], d["high"], int(d.get("n", 0)))


def _f(d: dict[str, float], digits: int = 3) -> str:
    """An estimate and its interval; an infinite upper end (a ratio whose denominator's interval
    touches 0) reads "unbounded", an undefined estimate "undefined"."""
    iv = _iv(d)
    if np.isfinite(iv.estimate) and np.isfinite(iv.low) and np.isfinite(iv.high):
        return fmt(iv, digits)
    def one(v: float) -> str:
        return f"{v:.{digits}f}" if np.isfinite(v) else ("unbounded" if v > 0 else "undefined")
    return f"{one(iv.estimate)} [{one(iv.low)}, {one(iv.high)}]"


fmt_interval = _f


def tables(result: dict[str, Any], command: str) -> list[dict[str, Any]]:
    b = result["benchmark"]
    where = (f"{b}: {result['checkpoints']} checkpoints from {result['games']} games, {result['rows']} branched rows, "
             f"{result.get('protocol', 'grouped cross-validation')}; 95% cluster-bootstrap intervals over games. "
             f"Regenerate: {command}")
    best, fitted = result["best_scalar_only"], result["best_fitted_scalar_only"]
    rows = []
    for name, c in result["controllers"].items():
        kind = "scalar-only" if c.get("scalar_only") else ""
        if name == "scalar-selected":
            kind += " (chosen on training folds: the baseline)"
        elif name == best:
            kind += " (best on these checkpoints)"
        elif name == fitted:
            kind += " (best fitted on these checkpoints)"
        rows.append([name, kind.strip(), _f(c["regret"]), *[f"{c['actions'][a]:.2f}" for a in result["actions"]]])
    out = [table(f"Regret per controller ({b})", ["controller", "kind", "regret",
                                                  *[f"chose {a}" for a in result["actions"]]], rows,
                 f"Scalar-only controllers see only the risk score but may choose every action; scalar-oracle is "
                 f"the best function of the binned score on these very checkpoints (a bound). {where}")]
    diff_rows = [[name, _f(d)] for name, d in result["differences"].items()]
    labels = (("selected_scalar_only", "scalar-only selected on training folds"),
              ("best_scalar_only", "best scalar-only on these checkpoints"),
              ("best_fitted_scalar_only", "best fitted scalar-only on these checkpoints"))
    for key, label in labels:
        if key in result["ratios"]:
            r = result["ratios"][key]
            picked = f"; picked per fold: {', '.join(map(str, r['picked_per_fold']))}" if r.get("picked_per_fold") else ""
            diff_rows.append([f"ratio action-conditioned / {label} ({r['baseline']}{picked})", _f(r)])
    diff_rows.append(["ratio action-conditioned / scalar (two-action routing)",
                      _f(result["ratio_action_conditioned_to_scalar"])])
    lambdas = result.get("dispersion_penalty_per_fold") or []
    chosen = f" Action-conditioned dispersion penalty per fold: {', '.join(f'{v:g}' for v in lambdas)}." if lambdas else ""
    out.append(table(f"Paired regret differences ({b})", ["comparison", "estimate [95% CI]"], diff_rows,
                     f"Regime: {result['regime']} (against the scalar-only policy selected on the training folds; "
                     f"against the best on these checkpoints, {best}: "
                     f"{result.get('regime_against_best_on_evaluated', result['regime'])}). Negative differences "
                     f"favour the first controller.{chosen} {where}"))
    cal = result["calibration"]
    out.append(table(f"Calibration decomposition ({b})",
                     ["score", "AUROC", "Brier", "ECE", "regret, threshold re-tuned", "regret, cost-derived rule"],
                     [[c["score"], _f(c["auroc"]), _f(c["brier"]), _f(c["ece"]), _f(c["regret"]),
                       _f(c["regret_cost_rule"])] for c in cal["rows"]]
                     + [[f"difference {name}", "", "", "", *((_f(d), "") if name.startswith("scalar") else ("", _f(d)))]
                        for name, d in cal["differences"].items()],
                     "The scalar risk read as P(failure if continuing), out of fold; recalibration by Platt scaling "
                     "or isotonic regression fitted on the training folds. Re-tuned: two-action threshold routing "
                     "with the threshold re-fitted on the recalibrated score (monotone maps cannot change its "
                     "decisions). Cost-derived: the score plugged into the utility against each action's training "
                     "success rate, nothing re-tuned, so recalibration can change decisions. ECE: median and "
                     f"percentiles of one bootstrap distribution. {cost_rule_segments(result)}{where}"))
    out.append(table(f"Intervention advantage tau(h) ({b})",
                     ["intervention", "mean tau", "share tau>0 (CI)", "share tau<0 (CI)", "Spearman(risk, tau)"],
                     [[a, _f(s["mean"]), f"{s['share_positive']:.2f}", f"{s['share_negative']:.2f}",
                       f"{s['spearman_risk_tau']:.2f}"] for a, s in result["advantage"].items()],
                     f"tau = E[U|intervene] - E[U|continue] per checkpoint, intervals over rollouts. "
                     f"Spearman(risk, P(failure|continue)) = {result['spearman_risk_failure']:.2f}. {where}"))
    if result.get("spread"):
        out.append(spread_table(result, where))
    if result["cost_sweep"]:
        grid = {(c["costs"]["intervene"], c["costs"]["fail_penalty"]): c["regret"] for c in result["cost_sweep"]}
        rows = [[f"c={ci}", *[_ratio(grid[(ci, w)]) for w in GRID_FAIL_PENALTY]] for ci in GRID_INTERVENE]
        out.append(table(f"Cost sweep: regret action-conditioned / best scalar-only / scalar ({b})",
                         ["intervention cost", *[f"w={w}" for w in GRID_FAIL_PENALTY]], rows,
                         f"Each cell: mean regret of the action-conditioned controller, of the best scalar-only "
                         f"policy in that cell and of two-action routing (step cost {result['costs']['step']}). {where}"))
    if len(result.get("per_flaw", {})) > 1:
        out.append(per_flaw_table(result, command))
    if result.get("split"):
        out.append(split_table(result, where))
    out.append(accounting_table(result, where))
    return out


def cost_rule_segments(result: dict[str, Any]) -> str:
    """What the raw cost-derived rule does as P(failure | continue) runs over [0, 1], per fold: the
    calibration test is saturated when one action covers all of it."""
    parts = []
    for fold, notes in enumerate(result.get("scalar_fits_per_fold") or []):
        segments = notes.get("cost_rule_raw")
        if segments:
            parts.append(f"fold {fold}: " + ", ".join(f"{s['action']} for p in [{s['from']:.2f}, {s['to']:.2f}]"
                                                       for s in segments))
    if not parts:
        return ""
    saturated = all(len(n.get("cost_rule_raw") or [0]) == 1 for n in result["scalar_fits_per_fold"])
    verdict = "saturated: one action for every p, recalibration cannot change a decision" if saturated else \
        "not saturated: the decision depends on p"
    return f"The cost-derived rule on the raw score ({verdict}): {'; '.join(parts[:5])}. "


def spread_table(result: dict[str, Any], where: str) -> dict[str, Any]:
    """How much the best action depends on the prefix (evaluate.advantage_spread)."""
    sp = result["spread"]
    rows = [[a, f"{t['p10']:.3f}", f"{t['p25']:.3f}", f"{t['median']:.3f}", f"{t['p75']:.3f}", f"{t['p90']:.3f}",
             f"{t['std']:.3f}"] for a, t in sp["tau"].items()]
    oracle = ", ".join(f"{a} {v:.2f}" for a, v in sp["oracle_actions"].items())
    return table(f"Spread of the intervention advantage across prefixes ({result['benchmark']})",
                 ["intervention", "tau p10", "p25", "median", "p75", "p90", "std"], rows,
                 f"Share of checkpoints whose best action is not {result['primary_intervention']} (defer): "
                 f"{_f(sp['share_best_not_primary'], 2)}; always deferring's utility / the oracle's: "
                 f"{_f(sp['defer_to_oracle_utility'], 2)} (oracle {sp['oracle_utility']:.3f}, defer "
                 f"{sp['defer_utility']:.3f} per checkpoint); the oracle's actions: {oracle}. Target error (pairs of "
                 f"checkpoints in one risk decile whose best actions differ): "
                 f"{_f(sp['target_error'], 2) if 'target_error' in sp else 'not recorded'}. {where}")


def split_table(result: dict[str, Any], where: str) -> dict[str, Any]:
    """Each controller's regret where one prefix feature is positive, elsewhere, and the share of its
    regret the flagged checkpoints carry (``evaluate --split-by FEATURE``)."""
    split = result["split"]
    feature = split["feature"]
    rows = [[name, _f(c["flagged"]), _f(c["elsewhere"]), _f(c["share"], 2)] for name, c in split["controllers"].items()]
    return table(f"Regret where {feature} > 0 ({result['benchmark']}: {split['checkpoints']} of {split['of']} "
                 f"checkpoints, {split['games']} games)",
                 ["controller", f"regret where {feature} > 0", "regret elsewhere", "share of its regret"], rows,
                 f"{split['checkpoints']} of {split['of']} checkpoints ({split['games']} games) have {feature} > 0. "
                 f"Same decisions as above; intervals resample games. {where}")


def per_flaw_table(result: dict[str, Any], command: str) -> dict[str, Any]:
    """One row per base agent: its checkpoints, the best scalar-only policy there and the regret
    ratio against it (the main evaluation's decisions, not refitted)."""
    rows = []
    for flaw, r in result["per_flaw"].items():
        best, ratios = r["best_scalar_only"], r["ratios"]
        selected = _f(ratios["selected_scalar_only"]) if "selected_scalar_only" in ratios else "n/a"
        rows.append([flaw, r["checkpoints"], r["games"], _f(r["regret"]["action-conditioned"]), selected, best,
                     _f(r["regret"][best]), _f(ratios["best_scalar_only"]),
                     f"{_f(ratios['best_fitted_scalar_only'])} ({ratios['best_fitted_scalar_only']['baseline']})",
                     _f(ratios["scalar"])])
    return table(f"Regret ratio per base agent ({result['benchmark']})",
                 ["base agent", "checkpoints", "games", "action-conditioned regret",
                  "ratio AC / scalar-selected", "best scalar-only", "its regret",
                  "ratio AC / best scalar-only", "ratio AC / best fitted scalar-only", "ratio AC / scalar"], rows,
                 "Each base agent's checkpoints apart, with the decisions of the main evaluation (controllers "
                 "fitted on every base agent's training checkpoints; the scalar oracle keeps the bins of all "
                 "checkpoints). A ratio whose denominator's interval touches 0 has no upper bound (unbounded). "
                 f"Regenerate: {command}")


ACCOUNTING_COLUMNS = (("checkpoints_built", "checkpoints built"), ("checkpoints_evaluated", "evaluated"),
                      ("dropped_missing_an_action", "dropped: an action lost every branch"),
                      ("dropped_without_any_branch", "dropped: every branch lost"),
                      ("evaluated_with_a_lost_branch", "evaluated with a lost rollout"),
                      ("branches", "branches"), ("replay_mismatches", "replay mismatches (discarded)"),
                      ("branch_errors", "branch errors (discarded)"), ("base_agent_crashes", "base-agent crashes"),
                      ("missing_confidence_checkpoints", "checkpoints without a stated confidence"),
                      ("missing_confidence_steps", "base-agent steps without a stated confidence"))


def accounting_table(result: dict[str, Any], where: str) -> dict[str, Any]:
    acc = result["accounting"]
    return table(f"Branch accounting ({result['benchmark']})", [label for _, label in ACCOUNTING_COLUMNS],
                 [["n/a" if acc.get(key) is None else acc[key] for key, _ in ACCOUNTING_COLUMNS]],
                 "built = evaluated + dropped. A step without a stated confidence carries the last stated one "
                 f"forward (0.5 before any) and is counted here; n/a: not recorded by this dataset. {where}")


def _ratio(regrets: dict[str, float]) -> str:
    return f"{regrets['action-conditioned']:.3f} / {regrets['best scalar-only']:.3f} / {regrets['scalar']:.3f}"


def figures(result: dict[str, Any]) -> list[dict[str, Any]]:
    b = result["benchmark"]
    rows = [BarRow(name, (("", iv["estimate"], iv["low"], iv["high"]),))
            for name, iv in ((n, c["regret"]) for n, c in result["controllers"].items())]
    figs = [{"title": f"Regret per controller with 95% intervals ({b})",
             "svg": interval_bars(rows, axis_label="regret (lower is better)", label_chars=36)}]
    if result["cost_sweep"]:
        grid = {(c["costs"]["intervene"], c["costs"]["fail_penalty"]): c["regret"] for c in result["cost_sweep"]}
        mat = np.asarray([[grid[(c, w)]["action-conditioned"] - grid[(c, w)]["best scalar-only"]
                           for w in GRID_FAIL_PENALTY]
                          for c in GRID_INTERVENE])
        fig, ax = plt.subplots(figsize=(4.5, 3.5))
        bound = max(1e-9, float(np.abs(mat).max()))
        im = ax.imshow(mat, cmap="RdBu_r", vmin=-bound, vmax=bound)
        ax.set_xticks(range(len(GRID_FAIL_PENALTY)), [str(w) for w in GRID_FAIL_PENALTY])
        ax.set_yticks(range(len(GRID_INTERVENE)), [str(c) for c in GRID_INTERVENE])
        ax.set_xlabel("failure penalty w")
        ax.set_ylabel("intervention cost")
        fig.colorbar(im, ax=ax, label="regret AC - best scalar-only")
        figs.append(figure_from_matplotlib(
            f"Cost sweep: regret difference, action-conditioned minus the best scalar-only policy ({b})", fig))
        plt.close(fig)
    per = result["advantage_per_checkpoint"].get(result["primary_intervention"], [])
    if per:
        fig, ax = plt.subplots(figsize=(5, 3.2))
        ax.scatter([p["risk"] for p in per], [p["tau"] for p in per], s=10, alpha=0.6)
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_xlabel("base agent's risk score")
        ax.set_ylabel(f"tau ({result['primary_intervention']} - continue)")
        figs.append(figure_from_matplotlib(f"Same risk, different advantage: tau(h) against risk ({b})", fig))
        plt.close(fig)
    return figs


def headlines(result: dict[str, Any]) -> list[dict[str, Any]]:
    b = result["benchmark"]
    out = [headline("regret", _iv(result["controllers"][name]["regret"]), higher_is_better=False, benchmark=b,
                    controller=name) for name in ("scalar", "scalar+platt", "action-conditioned")]
    pairs = [("regret_ratio_ac_to_scalar", result["ratio_action_conditioned_to_scalar"]),
             ("regret_ratio_ac_to_best_scalar_only", result["ratios"]["best_scalar_only"])]
    if "selected_scalar_only" in result["ratios"]:
        pairs.append(("regret_ratio_ac_to_selected_scalar_only", result["ratios"]["selected_scalar_only"]))
    for key, ratio in pairs:
        if np.isfinite(ratio["estimate"]) and np.isfinite(ratio["high"]):  # undefined or unbounded: no headline
            out.append(headline(key, _iv(ratio), higher_is_better=False, benchmark=b,
                                baseline=ratio.get("baseline", "scalar")))
    return out


def render_text(tabs: list[dict[str, Any]]) -> str:
    """Plain-text tables for the terminal, each followed by its note (the spread, the saturation
    verdict, the protocol): what the JSON and the report say, the terminal says too."""
    chunks = []
    for t in tabs:
        rows = [t["columns"], *[[str(c) for c in r] for r in t["rows"]]]
        widths = [max(len(str(r[i])) for r in rows) for i in range(len(t["columns"]))]
        lines = [t["title"], "  ".join(str(c).ljust(w) for c, w in zip(rows[0], widths, strict=True))]
        lines.append("  ".join("-" * w for w in widths))
        lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows[1:]]
        if t.get("note"):
            lines += textwrap.wrap(f"Note: {t['note']}", width=110, break_on_hyphens=False)
        chunks.append("\n".join(lines))
    return "\n\n".join(chunks)
