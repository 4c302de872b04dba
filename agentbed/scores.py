"""The scores an episode's outcome shows beside ``success``: one definition for every surface
(replay, branch, the viewer), so they never disagree on what an episode's outcome was."""

from __future__ import annotations

from typing import Any

# Scores an outcome's metrics may hold beside ``success``, shown side by side with it wherever an
# episode's outcome is shown (AgentDojo's utility and attack success: success is utility without the attack)
OUTCOME_SCORES = ("utility", "attack_success")


def outcome_scores(metrics: Any) -> dict[str, Any]:
    """The :data:`OUTCOME_SCORES` an episode's metrics hold, in that order (empty for other suites)."""
    if not isinstance(metrics, dict):
        return {}
    return {k: metrics[k] for k in OUTCOME_SCORES if k in metrics}


def scores_text(metrics: Any) -> str:
    """``utility True  attack_success False`` (two spaces apart), or "" when there are none."""
    return "  ".join(f"{k} {v}" for k, v in outcome_scores(metrics).items())
