"""Scalar-only controllers: every decision is a function of one risk score, on the full action menu.

A fair test of action-conditioned control ("Calibration Is Not Control", 2026) compares it
with the strongest controller that sees only the scalar score but may choose every action
(continue, each intervention, quit):

- :class:`ScalarRouting`: the paper's threshold routing, two actions (continue / the primary
  intervention); the score raw or recalibrated to P(failure if continuing) by Platt scaling
  (Platt, 1999) or isotonic regression (Zadrozny & Elkan, 2002); the threshold re-tuned on
  the training folds.
- :class:`BestFixed`: the one action of least training regret, whatever the score.
- :class:`BandRouter`: the score axis cut into at most K bands, one action per band; cuts and
  actions maximise training utility exactly (dynamic programming over the sorted scores, as
  in optimal 1-D segmentation, Bellman 1961), K chosen by grouped cross-validation inside the
  training games.
- :class:`ScalarOracle`: the best any function of the binned score can do on the evaluated
  checkpoints themselves (per bin the action of highest realized utility): a lower bound on
  the regret of every scalar-only policy with that binning, not a deployable controller.
- :class:`CostRule`: a decision rule fixed by the costs: the calibrated P(failure) plugged
  into the utility, against each action's mean success and length on the training folds (not
  functions of the score). Nothing is re-tuned after recalibration, so recalibrating the score
  can change decisions: the calibration decomposition's test that could fail.
"""

from __future__ import annotations

import numpy as np
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold

from controllers.oversight.checkpoints import Checkpoints
from controllers.oversight.utility import CONTINUE, Costs


class RiskScore:
    """A scalar score read as P(failure if the agent continues); ``raw`` uses the risk as is."""

    def __init__(self, method: str = "raw") -> None:
        if method not in {"raw", "platt", "isotonic"}:
            raise ValueError(f"unknown recalibration {method!r}")
        self.method = method
        self.model: LogisticRegression | IsotonicRegression | None = None
        self.constant = 0.5

    def fit(self, train: Checkpoints) -> RiskScore:
        if self.method == "raw":
            return self
        _, success, _, risk = train.rollout_rows(CONTINUE)
        failed = 1.0 - success
        if self.method == "platt":
            if len(set(failed)) < 2:
                self.model = None
                self.constant = float(failed.mean()) if failed.size else 0.5
                return self
            self.model = LogisticRegression(C=1e6).fit(risk.reshape(-1, 1), failed)
        else:
            self.model = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(risk, failed)
        return self

    def predict(self, risk: np.ndarray) -> np.ndarray:
        if self.method == "raw":
            return np.clip(risk, 0.0, 1.0)
        if self.model is None:
            return np.full(risk.shape, self.constant)
        if isinstance(self.model, LogisticRegression):
            return self.model.predict_proba(risk.reshape(-1, 1))[:, 1]
        return self.model.predict(risk)


def _suffix(calibration: str) -> str:
    return "" if calibration == "raw" else f"+{calibration}"


class ScoreController:
    """A controller that reads the scalar risk score alone, recalibrated on the training folds;
    ``prefix`` names it (``+platt``/``+isotonic`` is added for a recalibrated score)."""

    prefix = "score"

    def __init__(self, calibration: str = "raw") -> None:
        self.score = RiskScore(calibration)
        self.name = f"{self.prefix}{_suffix(calibration)}"

    def fit(self, train: Checkpoints) -> None:
        self.train = train
        self.score.fit(train)


class ScalarRouting(ScoreController):
    """Intervene when the (possibly recalibrated) risk score is at least a tuned threshold."""

    prefix = "scalar"

    def threshold(self, costs: Costs) -> float:
        """The threshold with the least mean training regret (ties: the lowest)."""
        u = self.train.utilities(costs)
        s = self.score.predict(self.train.risk)
        cont, inter = self.train.choices.index(CONTINUE), self.train.choices.index(self.train.primary)
        best_regret, best = np.inf, np.inf
        for theta in [*np.unique(s), np.inf]:
            picked = np.where(s >= theta, u[:, inter], u[:, cont])
            r = float(np.mean(u.max(axis=1) - picked))
            if r < best_regret - 1e-12:
                best_regret, best = r, float(theta)
        return best

    def choose(self, test: Checkpoints, costs: Costs) -> np.ndarray:
        theta = self.threshold(costs)
        s = self.score.predict(test.risk)
        return np.where(s >= theta, test.primary, CONTINUE).astype(object)


class BestFixed:
    """The single action (any of the menu, quit included) with the least training regret."""

    name = "best-fixed"

    def fit(self, train: Checkpoints) -> None:
        self.train = train

    def action(self, costs: Costs) -> str:
        return self.train.choices[int(np.argmax(self.train.utilities(costs).mean(axis=0)))]

    def choose(self, test: Checkpoints, costs: Costs) -> np.ndarray:
        return np.asarray([self.action(costs)] * len(test), dtype=object)


def fit_bands(score: np.ndarray, utilities: np.ndarray, max_bands: int,
              min_size: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Cuts and per-band action columns maximising the total utility of a band policy.

    Bands are contiguous in the score, hold at least ``min_size`` checkpoints and never split
    equal scores. Returns (cuts, actions): band ``b`` is ``cuts[b-1] <= s < cuts[b]``."""
    order = np.argsort(score, kind="stable")
    s, u = score[order], utilities[order]
    values, starts = np.unique(s, return_index=True)
    bounds = np.append(starts, len(s))  # group g holds rows bounds[g]:bounds[g+1]
    cum = np.vstack([np.zeros(u.shape[1]), np.cumsum(u, axis=0)])
    g = len(values)
    # gain[i, j]: the best one action's total utility over groups i..j-1
    sums = cum[bounds][None, :, :] - cum[bounds][:, None, :]
    gain, best_action = sums.max(axis=2), sums.argmax(axis=2)
    size = bounds[None, :] - bounds[:, None]
    gain = np.where((size >= min(min_size, len(s))) & (np.arange(g + 1)[None, :] > np.arange(g + 1)[:, None]),
                    gain, -np.inf)
    total = np.full((max_bands + 1, g + 1), -np.inf)
    total[0, 0] = 0.0
    cut_at = np.zeros((max_bands + 1, g + 1), dtype=int)
    for k in range(1, max_bands + 1):
        candidates = total[k - 1][:, None] + gain  # [i, j]: k-1 bands up to i, then band i..j
        cut_at[k] = candidates.argmax(axis=0)
        total[k] = candidates.max(axis=0)
    k = int(np.argmax(total[:, g]))
    cuts, actions, j = [], [], g
    while k > 0:
        i = cut_at[k, j]
        actions.append(int(best_action[i, j]))
        if i > 0:
            cuts.append(float((values[i - 1] + values[i]) / 2))
        j, k = i, k - 1
    return np.asarray(cuts[::-1]), np.asarray(actions[::-1], dtype=int)


BAND_CHOICES = (1, 2, 3, 4, 6)
BAND_RESOLUTION = 100  # candidate cuts of the routers without a minimum band: training percentiles


def coarsen(score: np.ndarray, groups: int | None) -> np.ndarray:
    """Each score replaced by the upper edge of its quantile bin (at most ``groups`` bins), so an
    exhaustive band fit considers at most that many cut points; None leaves the scores as they are."""
    if groups is None or len(np.unique(score)) <= groups:
        return score
    edges = np.unique(np.quantile(score, np.linspace(0, 1, groups + 1)[1:], method="inverted_cdf"))
    return edges[np.minimum(np.searchsorted(edges, score, side="left"), len(edges) - 1)]


class BandRouter(ScoreController):
    """Score bands mapped to actions (every action of the menu), fitted on the training folds."""

    prefix = "scalar-bands"

    def __init__(self, calibration: str = "raw", band_choices: tuple[int, ...] = BAND_CHOICES,
                 min_share: float = 0.05, inner_folds: int = 3, name: str = "", resolution: int | None = None) -> None:
        super().__init__(calibration)
        self.band_choices, self.min_share, self.inner_folds = band_choices, min_share, inner_folds
        self.name = name or self.name
        self.resolution = resolution  # None: cuts between any two scores; N: at N training percentiles
        self._fitted: dict[Costs, tuple[np.ndarray, np.ndarray, int]] = {}

    def fit(self, train: Checkpoints) -> None:
        super().fit(train)
        self._fitted = {}

    def _min_size(self, n: int) -> int:
        return max(1, int(self.min_share * n))

    def bands(self, costs: Costs) -> tuple[np.ndarray, np.ndarray, int]:
        """(cuts, action columns, K) for these costs; K by inner grouped CV (ties: fewer bands)."""
        if costs not in self._fitted:
            u, s = self.train.utilities(costs), coarsen(self.score.predict(self.train.risk), self.resolution)
            k = self._inner_choice(u, s)
            cuts, actions = fit_bands(s, u, k, self._min_size(len(s)))
            self._fitted[costs] = (cuts, actions, k)
        return self._fitted[costs]

    def _inner_choice(self, u: np.ndarray, s: np.ndarray) -> int:
        n_games = len(set(self.train.games.tolist()))
        if n_games < 2 or len(self.band_choices) == 1:
            return self.band_choices[0]
        splitter = GroupKFold(n_splits=min(self.inner_folds, n_games))
        losses = np.zeros(len(self.band_choices))
        for tr, te in splitter.split(s, groups=self.train.games):
            for j, k in enumerate(self.band_choices):
                cuts, actions = fit_bands(s[tr], u[tr], k, self._min_size(len(tr)))
                picked = actions[np.searchsorted(cuts, s[te], side="right")]
                losses[j] += float((u[te].max(axis=1) - u[te, picked]).sum())
        return self.band_choices[int(np.argmin(losses))]

    def choose(self, test: Checkpoints, costs: Costs) -> np.ndarray:
        cuts, actions, _ = self.bands(costs)
        picked = actions[np.searchsorted(cuts, self.score.predict(test.risk), side="right")]
        return np.asarray([self.train.choices[j] for j in picked], dtype=object)


class ScalarOracle:
    """Per bin of the score (``bins`` equal-frequency bins of the evaluated checkpoints) the
    action of highest realized utility there: the best any function of the binned score does."""

    def __init__(self, bins: int = 10) -> None:
        self.bins = bins
        self.name = "scalar-oracle"

    def fit(self, train: Checkpoints) -> None:
        pass

    def choose(self, test: Checkpoints, costs: Costs) -> np.ndarray:
        u = test.utilities(costs)
        edges = np.unique(np.quantile(test.risk, np.linspace(0, 1, self.bins + 1)[1:-1])) if len(test) else []
        which = np.searchsorted(edges, test.risk, side="right")
        chosen = np.empty(len(test), dtype=object)
        for b in np.unique(which):
            members = which == b
            chosen[members] = test.choices[int(np.argmax(u[members].mean(axis=0)))]
        return chosen


class CostRule(ScoreController):
    """The calibrated P(failure | continue) plugged into the utility; interventions valued by
    their mean success and length on the training folds. Thresholds follow from the costs:
    intervene with a when p > (1 - q_a) + (c_a + s * (m_a - m_continue)) / (1 + w)."""

    prefix = "cost-rule"

    def fit(self, train: Checkpoints) -> None:
        super().fit(train)
        self.q = {a: float(train.success_rate(a).mean()) for a in train.actions}
        self.m = {a: float(train.rollout_rows(a)[2].mean()) for a in train.actions}

    def expected(self, p: np.ndarray, costs: Costs) -> np.ndarray:
        """Expected utility per choice (columns: ``train.choices``) given P(failure | continue)."""
        w, cols = costs.fail_penalty, []
        for a in self.train.actions:
            fail = p if a == CONTINUE else np.full(p.shape, 1.0 - self.q[a])
            cols.append((1 - fail) - fail * w - costs.action_cost(a) - costs.step_cost(a) * self.m[a])
        cols.append(np.zeros(p.shape))  # quit
        return np.stack(cols, axis=1)

    def choose(self, test: Checkpoints, costs: Costs) -> np.ndarray:
        best = self.expected(self.score.predict(test.risk), costs).argmax(axis=1)
        return np.asarray([self.train.choices[j] for j in best], dtype=object)


    def segments(self, costs: Costs, points: int = 201) -> list[dict[str, float | str]]:
        """The rule's action as P(failure | continue) runs over [0, 1]: the calibration test is
        saturated when one action covers it all (no recalibration can then change a decision)."""
        p = np.linspace(0.0, 1.0, points)
        picked = [self.train.choices[j] for j in self.expected(p, costs).argmax(axis=1)]
        out: list[dict[str, float | str]] = []
        for value, action in zip(p.tolist(), picked, strict=True):
            if out and out[-1]["action"] == action:
                out[-1]["to"] = value
            else:
                out.append({"action": action, "from": value, "to": value})
        return out


def _bands_free(k: tuple[int, ...], name: str) -> BandRouter:
    """Band routers with no minimum band size (a band may be a single percentile of the score)."""
    return BandRouter("raw", band_choices=k, min_share=0.0, name=name, resolution=BAND_RESOLUTION)


def fitted_scalar_candidates(band_resolution: int | None = None) -> list:
    """Every fitted scalar-only controller, in table order (the two-action routing rows first).
    The scalar oracle is not among them: it is computed on all evaluated checkpoints at once.
    ``band_resolution`` coarsens the 5%-minimum band router too (inside the selection)."""
    return [ScalarRouting("raw"), ScalarRouting("platt"), ScalarRouting("isotonic"), BestFixed(),
            BandRouter("raw", resolution=band_resolution),
            _bands_free((3,), "scalar-bands-k3"), _bands_free(tuple(range(1, 9)), "scalar-bands-any"),
            CostRule("raw"), CostRule("platt"), CostRule("isotonic")]


class SelectedScalar:
    """The best scalar-only policy chosen on the training folds only: each fitted scalar-only
    controller is scored by grouped cross-validation inside the training games, and the one of
    least inner regret (ties: table order) is refitted on all of them and decides. This is the
    baseline a deployer could actually pick; "best on the evaluated checkpoints" cannot be.

    The choice is made at the first costs it is asked about after fitting (the evaluation's main
    costs) and kept for the cost sweep's other cells (the chosen controller still re-fits its
    thresholds or bands for each cell): selecting anew per cell would cost 25 nested searches.
    Inside the selection the band routers cut at training percentiles (``BAND_RESOLUTION``)."""

    name = "scalar-selected"

    def __init__(self, inner_folds: int = 3) -> None:
        self.inner_folds = inner_folds
        self._picked: dict[Costs, tuple[str, object]] = {}

    def fit(self, train: Checkpoints) -> None:
        self.train, self._picked = train, {}
        n_games = len(set(train.games.tolist()))
        self._inner = [] if n_games < 2 else list(GroupKFold(n_splits=min(self.inner_folds, n_games)).split(
            train.X, groups=train.games))
        self._inner_fits = []
        for tr, te in self._inner:
            fitted = fitted_scalar_candidates(BAND_RESOLUTION)
            for c in fitted:
                c.fit(train.subset(tr))
            self._inner_fits.append((te, fitted))
        self._full = fitted_scalar_candidates(BAND_RESOLUTION)
        for c in self._full:
            c.fit(train)

    def picked(self, costs: Costs) -> str:
        if self._picked and costs not in self._picked:
            self._picked[costs] = next(iter(self._picked.values()))
        if costs not in self._picked:
            losses = np.zeros(len(self._full))
            u = self.train.utilities(costs)
            for te, fitted in self._inner_fits:
                test = self.train.subset(te)
                for j, c in enumerate(fitted):
                    chosen = c.choose(test, costs)
                    cols = np.asarray([test.choices.index(a) for a in chosen], dtype=int)
                    losses[j] += float((u[te].max(axis=1) - u[te, cols]).sum())
            best = self._full[int(np.argmin(losses))]
            self._picked[costs] = (best.name, best)
        return self._picked[costs][0]

    def choose(self, test: Checkpoints, costs: Costs) -> np.ndarray:
        self.picked(costs)
        return self._picked[costs][1].choose(test, costs)


def scalar_controllers() -> list:
    """The fitted scalar-only controllers and the one selected among them on the training folds."""
    return [*fitted_scalar_candidates(), SelectedScalar()]


SCALAR_ONLY = ("scalar", "scalar+platt", "scalar+isotonic", "best-fixed", "scalar-bands", "scalar-bands-k3",
               "scalar-bands-any", "cost-rule", "cost-rule+platt", "cost-rule+isotonic", "scalar-selected",
               "scalar-oracle")
FITTED_SCALAR_ONLY = tuple(n for n in SCALAR_ONLY if n != "scalar-oracle")
