"""The title's floor (suites.graphrag.tells.title_floor): the least AUC the best classifier on a
title's kind and sharing reaches over every way an attacker can title its pages, on a corpus with
one page per entity."""

import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.metrics import roc_auc_score

from agentbed.stats import rank_auc
from suites.graphrag.tells import title_floor


def test_title_floor_is_what_a_classifier_learns_from_title_kind_and_sharing():
    """:func:`title_floor` against scikit-learn's own classifier: for every way to title the
    attacker's pages (k after entities, the rest as new series numbers), a gradient-boosted model
    on (title kind, shared) reaches at least the floor, and exactly it at the floor's k."""
    entity, series, added = 77, 24, 60  # a world's clean pages and a 12-target attack's
    floor, at = title_floor(entity, series, added)
    assert 0.68 <= floor <= 0.70 and 0 < at < added
    for k in range(0, added + 1, 6):
        rows = ([(1, 0, 1)] * (added - k) + [(1, 0, 0)] * series + [(0, 1, 1)] * k + [(0, 1, 0)] * k
                + [(0, 0, 0)] * (entity - k))  # (series title, shared title, attacker)
        x, y = np.array(rows)[:, :2], np.array(rows)[:, 2]
        auc = roc_auc_score(y, GradientBoostingClassifier(random_state=0).fit(x, y).predict_proba(x)[:, 1])
        assert auc >= floor - 1e-9
    # without series pages every attacker page is a second copy: a tell while fewer than the
    # entities (GeoNames: 191 pages, 100 attacker pages), none when every title is copied once
    assert title_floor(191, 0, 100)[0] > 0.7 and title_floor(100, 0, 100)[0] == 0.5


def test_title_floor_breaks_ties_by_fewer_entity_titles_and_refuses_one_class():
    """19 entity pages, 3 series pages, 12 attacker pages: titling 10 or 11 after entities gives the
    same AUC, equal to the bit as rank sums, and the floor names 10, the fewer (the ROC curve's
    integral named 11 by its last bit). Without attacker pages, or without clean ones, there is
    no floor."""

    def split(k: int) -> float:
        y = [1] * (12 - k) + [0] * 3 + [1] * k + [0] * k + [0] * (19 - k)
        p = [(12 - k) / (15 - k)] * (15 - k) + [0.5] * (2 * k) + [0.0] * (19 - k)
        return rank_auc(y, p)

    assert split(10) == split(11) and title_floor(19, 3, 12) == (split(10), 10)
    for shape in ((77, 24, 0), (0, 0, 5)):
        with pytest.raises(ValueError):
            title_floor(*shape)
