"""Does a gain change between two settings? The interval of a difference of differences (issue 54 item 6).

The paper's claim "gains shrink when interventions are weak" compares the action-conditioned
controller's gain over a baseline at two intervention strengths (e.g. the expert's slip rate 0 and
0.25). Reading it from each setting's own interval leaves the comparison itself without one. Here

    gain(s)  = mean regret(baseline) - mean regret(controller)          (> 0: the controller gains)
    contrast = gain(first setting) - gain(second setting)               (> 0: the gain shrinks)

is estimated on the held-out checkpoints both settings share (same trajectory and step: the base
agent does not depend on the setting), so each checkpoint is paired with itself. The interval is
the learning curve's two-level percentile bootstrap (controllers/oversight/curve.py, ``two_level``):
each resample draws held-out games with replacement (cluster bootstrap; one draw of games for both
settings) and training draws with replacement, the same draw indices at both settings, because
draw d picks the same development games at both (``draw_units`` depends only on the games, the
size, the draw and the seed). Percentile intervals: Efron and Tibshirani, *An Introduction to the
Bootstrap* (1993), ch. 13; resampling whole clusters (here games): Davison and Hinkley, *Bootstrap
Methods and their Application* (1997), sec. 3.8.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agentbed.errors import UsageError
from controllers.oversight.checkpoints import Checkpoints
from controllers.oversight.curve import two_level

SHRINKS, GROWS, UNCLEAR = "gain shrinks", "gain grows", "no measurable change"


def shared_checkpoints(first: Checkpoints, second: Checkpoints) -> tuple[np.ndarray, np.ndarray]:
    """Indices into ``first`` and ``second`` of the checkpoints both hold (same trajectory and step),
    in ``first``'s order; a shared checkpoint must belong to the same game on both sides."""
    where = {key: i for i, key in enumerate(second.keys)}
    pairs = [(i, where[key]) for i, key in enumerate(first.keys) if key in where]
    if not pairs:
        raise UsageError("contrast: the two held-out datasets share no checkpoint (same trajectory and step); "
                         "they must branch the same games and base agents")
    a, b = (np.asarray(side, dtype=int) for side in zip(*pairs, strict=True))
    clash = [first.keys[i] for i, j in zip(a, b, strict=True) if first.games[i] != second.games[j]]
    if clash:
        raise UsageError(f"contrast: checkpoint {clash[0]} belongs to different games on the two sides")
    return a, b


def gain_contrast(first: dict[str, np.ndarray], second: dict[str, np.ndarray], groups: np.ndarray, *,
                  controller: str, baseline: str, resamples: int, seed: int) -> dict[str, Any]:
    """Gain of ``controller`` over ``baseline`` at each setting and their difference, with two-level
    intervals. ``first[name]`` / ``second[name]``: regret, draws x checkpoints, the columns the same
    held-out checkpoints in the same order (``groups``: their games), row d the fit on draw d."""
    draws = len(first[controller])
    shapes = {first[controller].shape, second[controller].shape, (draws, len(groups))}
    if len(shapes) != 1:
        raise ValueError("gain_contrast: both settings need the same draws and the same checkpoints")

    def gain(R: dict[str, np.ndarray], k: np.ndarray, i: np.ndarray) -> float:
        return float(R[baseline][np.ix_(k, i)].mean() - R[controller][np.ix_(k, i)].mean())

    bs = {"resamples": resamples, "seed": seed}  # one seed: all three from the same resamples
    contrast = two_level(lambda k, i: gain(first, k, i) - gain(second, k, i), draws, groups, **bs)
    return {"first": two_level(lambda k, i: gain(first, k, i), draws, groups, **bs),
            "second": two_level(lambda k, i: gain(second, k, i), draws, groups, **bs),
            "contrast": contrast, "verdict": verdict(contrast)}


def verdict(contrast: dict[str, float]) -> str:
    """The decision rule: the gain shrinks from the first setting to the second where the interval of
    the contrast lies above 0, grows where it lies below, otherwise no measurable change."""
    if contrast["low"] > 0:
        return SHRINKS
    if contrast["high"] < 0:
        return GROWS
    return UNCLEAR
