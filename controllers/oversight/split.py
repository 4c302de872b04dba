"""Where a controller's regret sits: the checkpoints where one prefix feature is positive, and the
rest (e.g. ALFWorld's ``holding_other``, an object of the wrong kind in hand, where the handcoded
expert as shipped fails).

For each controller: its mean regret on either side and the share of its total regret carried by
the flagged checkpoints, each with a cluster-bootstrap interval over games. The decisions are the
main evaluation's; nothing is refitted.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agentbed.errors import UsageError
from controllers.oversight.calibration import cluster_bootstrap, interval_dict
from controllers.oversight.checkpoints import Checkpoints


def feature_column(cps: Checkpoints, feature: str) -> np.ndarray:
    """The checkpoints' values of ``feature``; an unknown name is a one-line error listing the known."""
    if feature not in cps.feature_names:
        raise UsageError(f"--split-by: no feature {feature!r} in the dataset (features: {', '.join(cps.feature_names)})")
    return cps.X[:, cps.feature_names.index(feature)]


def regret_split(cps: Checkpoints, regrets: dict[str, np.ndarray], feature: str, *, resamples: int,
                 seed: int) -> dict[str, Any]:
    """Per controller: regret where ``feature`` > 0, regret elsewhere, and the flagged share of the total."""
    flagged = feature_column(cps, feature) > 0
    bs = {"resamples": resamples, "seed": seed}

    def mean_where(r: np.ndarray, mask: np.ndarray) -> Any:
        return lambda i: r[i][mask[i]].mean() if mask[i].any() else float("nan")

    def share(r: np.ndarray) -> Any:
        return lambda i: r[i][flagged[i]].sum() / r[i].sum() if r[i].sum() > 0 else float("nan")

    controllers = {}
    for name, r in regrets.items():
        controllers[name] = {
            "flagged": interval_dict(cluster_bootstrap(mean_where(r, flagged), cps.games, **bs)),
            "elsewhere": interval_dict(cluster_bootstrap(mean_where(r, ~flagged), cps.games, **bs)),
            "share": interval_dict(cluster_bootstrap(share(r), cps.games, **bs)),
        }
    return {"feature": feature, "checkpoints": int(flagged.sum()), "of": len(cps),
            "games": len(set(cps.games[flagged].tolist())), "controllers": controllers}
