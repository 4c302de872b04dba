"""A clean corpus whose entities may have several pages (issue #50 item 3, second round), and the
shape dress's titles chosen against a classifier on title kind and sharing."""

from collections import Counter

import numpy as np
import pytest

from attacks.graphrag.titles import SERIES, Titles, group_auc
from environments.graphrag.corpus import Document
from environments.graphrag.world import generate_world


def test_several_pages_add_second_pages_and_change_nothing_else():
    """``pages="several"``: the one-page world's facts, questions and pages, byte for byte, and
    second pages under about half the heads' names, stating only true facts."""
    one, several = generate_world(1000), generate_world(1000, pages="several")
    assert one.facts == several.facts and one.questions == several.questions
    n = len(one.documents)
    assert [(d.title, list(d.sentences)) for d in several.documents[:n]] == \
        [(d.title, list(d.sentences)) for d in one.documents]
    more = several.documents[n:]
    heads = {f.head for f in one.facts}
    assert {d.title for d in more} <= heads and len({d.title for d in more}) == len(more)
    assert 0.35 <= len(more) / len(heads) <= 0.65, (len(more), len(heads))
    true = set(one.facts)
    assert all(c.fact in true and not c.negated for d in more for _, c in d.claims)
    assert all(d.claims for d in more)


def test_group_auc_is_roc_auc_of_the_groups_attacker_share():
    from sklearn.metrics import roc_auc_score

    attack = Counter({(False, 2, 1): 3, (True, 2, 0): 2})
    total = Counter({(False, 2, 0): 10, (False, 2, 1): 8, (True, 2, 0): 7, (False, 1, 2): 3})
    y, p = [], []
    for g, n in total.items():
        y += [1] * attack[g] + [0] * (n - attack[g])
        p += [attack[g] / n] * n
    assert group_auc(attack, total) == pytest.approx(roc_auc_score(np.array(y), np.array(p)))
    assert group_auc(Counter(), total) == 0.5


def _corpus(entities, twice, series):
    docs = [Document(f"e{i}", f"Entity{i}", ["x."]) for i in range(entities)]
    docs += [Document(f"f{i}", f"Entity{i}", ["y."]) for i in range(twice)]
    return docs + [Document(f"s{i}", f"News {i}", ["z."]) for i in range(series)]


def _greedy(clean, added):
    """Title ``added`` attacker pages one by one, each the title (an entity's, or a new series
    number) a classifier on (kind, sharing) tells least; the AUC at the end."""
    titles = Titles(clean)
    names = sorted({d.title for d in clean if not SERIES.match(d.title)})
    for _ in range(added):
        best = min(names, key=titles.auc)
        if titles.auc(None, "News") < titles.auc(best):
            titles.series("News")
        else:
            titles.take(best)
    return group_auc(titles.attack, titles.total)


def test_titles_a_corpus_with_several_pages_per_entity_lets_the_attacker_hide_its_titles():
    """A world's shape (77 entity pages, 24 series pages, 60 attacker pages): with one page per
    entity no titling gets below :func:`suites.graphrag.tells.title_floor`'s 0.69 and the greedy
    choice stays at or above it; with half the entities on a second page the greedy choice
    reaches <= 0.6. New series numbers are never a clean title's."""
    from suites.graphrag.tells import title_floor

    floor, _ = title_floor(77, 24, 60)
    assert _greedy(_corpus(77, 0, 24), 60) >= floor - 1e-9
    assert _greedy(_corpus(77, 38, 24), 60) <= 0.6
    titles = Titles(_corpus(3, 0, 5))
    assert titles.series("News") == "News 5" and titles.series("News") == "News 6"


def test_the_suite_option_pages_reaches_the_dataset_and_the_index():
    """``-O pages=several`` (and ``agentbed graphrag grid --pages several``) indexes the corpus
    with second pages; the attack plan, and so the targeted questions, stay the same."""
    from suites.graphrag.scenarios import poisoned, task_ids

    def clean(pages):
        built = poisoned("world", 1000, "none", 5, 12, "louvain", pages=pages)
        return Counter(d.title for d in built.index.documents.values() if d.origin == "clean")

    assert max(clean("one").values()) == 1 and max(clean("several").values()) == 2
    options = {"dataset": "world", "worlds": 1}
    assert task_ids(options) == task_ids({**options, "pages": "several"})


def test_a_new_series_number_goes_to_the_series_whose_digits_tell_least():
    """A new page of a series takes an unused number: in a world's News 0-14 every new News
    number has two digits, which 5 of 15 clean News pages have (session 12's dress put 31 of 52
    series titles there against 20 of 96 clean ones; the title's characters alone told 0.61). The
    title's group counts its number's digits, and a new number goes to the series where that
    tells least: Letters and Office directory numbers keep one digit while they last."""
    clean = _corpus(77, 38, 15) + [Document(f"l{i}", f"Letters {i}", ["w."]) for i in range(6)]
    clean += [Document(f"o{i}", f"Office directory {i}", ["v."]) for i in range(3)]
    titles = Titles(clean)
    assert titles.auc(None, "News") > titles.auc(None, "Letters")  # "News 15" joins the 5 two-digit News pages
    taken = []
    for _ in range(12):
        name = titles.least_series()
        assert name is not None
        taken.append(titles.series(name))
    numbered = [SERIES.match(t) for t in taken]
    assert all(numbered) and len(taken) == 12
    # spread as the clean pages of the groups a new number can still reach (News 0-9 are spent):
    # 5 of 14 two-digit, against every one of the 12 when each went to News
    assert sum(len(m.group(2)) > 1 for m in numbered if m) <= 12 * 5 / 14 + 1
