"""Tables and figures of an oversight evaluation, in the engine's summary format and as text."""

from __future__ import annotations

from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 - the backend must be chosen first
import numpy as np  # noqa: E402

from agentbed.stats import Interval  # noqa: E402
from agentbed.summary import figure_from_matplotlib, fmt, headline, table  # noqa: E402
from controllers.oversight.utility import GRID_FAIL_PENALTY, GRID_INTERVENE  # noqa: E402


def _iv(d: dict[str, float]) -> Interval:
    return Interval(d["estimate"], d["low"], d["high"], int(d.get("n", 0)))


def _f(d: dict[str, float], digits: int = 3) -> str:
    return fmt(_iv(d), digits)


def tables(result: dict[str, Any], command: str) -> list[dict[str, Any]]:
    b = result["benchmark"]
    where = (f"{b}: {result['checkpoints']} checkpoints from {result['games']} games, {result['rows']} branched rows, "
             f"{result['folds']}-fold cross-validation holding out whole games; 95% cluster-bootstrap intervals "
             f"over games. Regenerate: {command}")
    out = [table(f"Regret per controller ({b})", ["controller", "regret", *[f"chose {a}" for a in result["actions"]]],
                 [[name, _f(c["regret"]), *[f"{c['actions'][a]:.2f}" for a in result["actions"]]]
                  for name, c in result["controllers"].items()], where)]
    diff_rows = [[name, _f(d)] for name, d in result["differences"].items()]
    diff_rows.append(["ratio action-conditioned / scalar", _f(result["ratio_action_conditioned_to_scalar"])])
    lambdas = result.get("dispersion_penalty_per_fold") or []
    chosen = f" Action-conditioned dispersion penalty per fold: {', '.join(f'{v:g}' for v in lambdas)}." if lambdas else ""
    out.append(table(f"Paired regret differences ({b})", ["comparison", "estimate [95% CI]"], diff_rows,
                     f"Regime: {result['regime']}. Negative differences favour the first controller.{chosen} {where}"))
    out.append(table(f"Calibration decomposition ({b})", ["score", "AUROC", "Brier", "ECE", "routing regret"],
                     [[c["score"], _f(c["auroc"]), _f(c["brier"]), _f(c["ece"]), _f(c["regret"])]
                      for c in result["calibration"]],
                     "The scalar risk read as P(failure if continuing), out of fold; recalibration by Platt "
                     f"scaling or isotonic regression fitted on the training folds. {where}"))
    out.append(table(f"Intervention advantage tau(h) ({b})",
                     ["intervention", "mean tau", "share tau>0 (CI)", "share tau<0 (CI)", "Spearman(risk, tau)"],
                     [[a, _f(s["mean"]), f"{s['share_positive']:.2f}", f"{s['share_negative']:.2f}",
                       f"{s['spearman_risk_tau']:.2f}"] for a, s in result["advantage"].items()],
                     f"tau = E[U|intervene] - E[U|continue] per checkpoint, intervals over rollouts. "
                     f"Spearman(risk, P(failure|continue)) = {result['spearman_risk_failure']:.2f}. {where}"))
    if result["cost_sweep"]:
        grid = {(c["costs"]["intervene"], c["costs"]["fail_penalty"]): c["regret"] for c in result["cost_sweep"]}
        rows = [[f"c={ci}", *[_ratio(grid[(ci, w)]) for w in GRID_FAIL_PENALTY]] for ci in GRID_INTERVENE]
        out.append(table(f"Cost sweep: regret action-conditioned / scalar ({b})",
                         ["intervention cost", *[f"w={w}" for w in GRID_FAIL_PENALTY]], rows,
                         f"Each cell: mean regret of the action-conditioned controller and of scalar routing "
                         f"(step cost {result['costs']['step']}). {where}"))
    rep = result["replay"]
    out.append(table(f"Branch accounting ({b})", ["branches", "prefix replays", "replay mismatches (discarded)",
                                                   "branch errors (discarded)", "incomplete checkpoints dropped"],
                     [[rep["branches"], rep["replays"], rep["replay_mismatches"], rep["branch_errors"],
                       result["dropped_checkpoints"]]], where))
    return out


def _ratio(regrets: dict[str, float]) -> str:
    ac, sc = regrets["action-conditioned"], regrets["scalar"]
    return f"{ac:.3f} / {sc:.3f}"


def figures(result: dict[str, Any]) -> list[dict[str, Any]]:
    b = result["benchmark"]
    names = list(result["controllers"])
    est = np.asarray([result["controllers"][n]["regret"]["estimate"] for n in names])
    lo = np.asarray([result["controllers"][n]["regret"]["low"] for n in names])
    hi = np.asarray([result["controllers"][n]["regret"]["high"] for n in names])
    fig, ax = plt.subplots(figsize=(6.5, 3))
    ax.bar(names, est, yerr=[est - lo, hi - est], capsize=3, color="#4c72b0")
    ax.set_ylabel("regret")
    ax.tick_params(axis="x", rotation=30)
    figs = [figure_from_matplotlib(f"Regret per controller with 95% intervals ({b})", fig)]
    plt.close(fig)
    if result["cost_sweep"]:
        grid = {(c["costs"]["intervene"], c["costs"]["fail_penalty"]): c["regret"] for c in result["cost_sweep"]}
        mat = np.asarray([[grid[(c, w)]["action-conditioned"] - grid[(c, w)]["scalar"] for w in GRID_FAIL_PENALTY]
                          for c in GRID_INTERVENE])
        fig, ax = plt.subplots(figsize=(4.5, 3.5))
        bound = max(1e-9, float(np.abs(mat).max()))
        im = ax.imshow(mat, cmap="RdBu_r", vmin=-bound, vmax=bound)
        ax.set_xticks(range(len(GRID_FAIL_PENALTY)), [str(w) for w in GRID_FAIL_PENALTY])
        ax.set_yticks(range(len(GRID_INTERVENE)), [str(c) for c in GRID_INTERVENE])
        ax.set_xlabel("failure penalty w")
        ax.set_ylabel("intervention cost")
        fig.colorbar(im, ax=ax, label="regret AC - scalar")
        figs.append(figure_from_matplotlib(f"Cost sweep: regret difference, action-conditioned minus scalar ({b})", fig))
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
    ratio = result["ratio_action_conditioned_to_scalar"]
    if np.isfinite(ratio["estimate"]):  # undefined when scalar routing has no regret at all
        out.append(headline("regret_ratio_ac_to_scalar", _iv(ratio), higher_is_better=False, benchmark=b))
    return out


def render_text(tabs: list[dict[str, Any]]) -> str:
    """Plain-text tables for the terminal."""
    chunks = []
    for t in tabs:
        rows = [t["columns"], *[[str(c) for c in r] for r in t["rows"]]]
        widths = [max(len(str(r[i])) for r in rows) for i in range(len(t["columns"]))]
        lines = [t["title"], "  ".join(str(c).ljust(w) for c, w in zip(rows[0], widths, strict=True))]
        lines.append("  ".join("-" * w for w in widths))
        lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows[1:]]
        chunks.append("\n".join(lines))
    return "\n\n".join(chunks)
