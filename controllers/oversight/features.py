"""Prefix-only features of a checkpoint: nothing here looks past step t.

The features are benchmark-agnostic (they read actions, observations, rewards and the base
agent's risk scores) so one controller works on every benchmark.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from agentbed.control import StepView

FEATURE_NAMES = (
    "step", "progress", "risk", "risk_mean", "risk_max", "risk_slope", "reward_sum", "steps_since_reward",
    "repeat_action_frac", "repeat_obs_frac", "distinct_recent_actions", "no_effect_frac", "error_frac",
    "obs_length",
)

NO_EFFECT_MARKERS = ("nothing happens", "no known action", "not possible", "can't", "cannot", "unknown")
RECENT = 8


def _text(action: str | bytes) -> str:
    return action if isinstance(action, str) else action.decode("utf-8", "replace")


def prefix_features(history: Sequence[StepView], risks: Sequence[float], first_observation: str,
                    max_steps: int) -> dict[str, float]:
    """Features of the prefix made of ``history`` (executed steps) and the risks reported so far.

    ``risks[-1]`` is the base agent's risk for the action it proposes at the checkpoint.
    """
    t = len(history)
    actions = [_text(h.action) for h in history]
    observations = [first_observation] + [h.observation for h in history]
    recent = actions[-RECENT:]
    risk_arr = np.asarray(risks if risks else [0.5], dtype=float)
    slope = float(np.polyfit(np.arange(len(risk_arr[-RECENT:])), risk_arr[-RECENT:], 1)[0]) if len(risk_arr) > 2 else 0.0
    rewards = [h.reward for h in history]
    last_reward = max((i for i, r in enumerate(rewards) if r != 0), default=-1)
    lowered = [o.lower()[:400] for o in observations[1:]]
    return {
        "step": float(t),
        "progress": t / max_steps if max_steps else 0.0,
        "risk": float(risk_arr[-1]),
        "risk_mean": float(risk_arr.mean()),
        "risk_max": float(risk_arr.max()),
        "risk_slope": slope,
        "reward_sum": float(sum(rewards)),
        "steps_since_reward": float(t - 1 - last_reward) if t else 0.0,
        "repeat_action_frac": 1 - len(set(actions)) / t if t else 0.0,
        "repeat_obs_frac": 1 - len(set(observations)) / len(observations),
        "distinct_recent_actions": float(len(set(recent))),
        "no_effect_frac": sum(any(m in o for m in NO_EFFECT_MARKERS) for o in lowered) / t if t else 0.0,
        "error_frac": sum(bool(h.info.get("action_error")) for h in history) / t if t else 0.0,
        "obs_length": float(len(observations[-1])),
    }


def feature_matrix(rows: Sequence[dict[str, float]], names: Sequence[str] = FEATURE_NAMES) -> np.ndarray:
    return np.asarray([[row[name] for name in names] for row in rows], dtype=float)
