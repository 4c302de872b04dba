"""Nothing but content tells poison from clean: ids, publication order, lengths and dates.

A classifier trained on development worlds' metadata alone (no words) must not separate poison
from clean documents on held-out worlds (AUC <= 0.6) for any attack; ids depend on a
document's own text, never on when it was added or by whom.
"""

import re
from functools import lru_cache

import pytest

from attacks.graphrag import ATTACKS
from attacks.graphrag.scenario import poisoned_corpus, poisoned_index
from environments.graphrag.corpus import Document, publish
from environments.graphrag.real import load_real
from environments.graphrag.world import generate_world
from suites.graphrag.tells import tell_auc

# Development worlds train the classifier; it is scored on the four evaluation worlds of the
# attack table. On Nations (14 clean pages per seed) eight seeds each way: 112 clean pages held out.
DEV, HELD_OUT = (0, 1, 2, 3), (1000, 1001, 1002, 1003)
NATIONS_TRAIN, NATIONS_HELD_OUT = tuple(range(1, 9)), tuple(range(101, 109))


@lru_cache(maxsize=32)
def _index(seed, attack):
    return poisoned_index(generate_world(seed), attack, targets=12, seed=seed, community_method="none").index


@lru_cache(maxsize=32)
def _data(dataset, seed):
    return generate_world(seed) if dataset == "world" else load_real(dataset, seed=seed)


@lru_cache(maxsize=256)
def _published(dataset, seed, attack):
    data = _data(dataset, seed)
    targets = 12 if dataset == "world" else 20
    return tuple(publish(poisoned_corpus(data, attack, targets=targets, seed=seed).documents, seed))


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_metadata_alone_does_not_separate_poison_from_clean(attack):
    """``adaptive`` runs without its white-box surrogate here (its first mix)."""
    auc = tell_auc([_published("world", s, attack) for s in DEV], [_published("world", s, attack) for s in HELD_OUT])
    assert auc <= 0.6, f"{attack}: metadata AUC {auc:.3f}"


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_metadata_alone_does_not_separate_poison_from_clean_on_nations(attack, nations_available):
    """A real graph's pages are long and few (Nations: 14 per seed, beside 60-95 attacker
    documents), so the classifier trains on eight seeds and is scored on eight others."""
    train = [_published("nations", s, attack) for s in NATIONS_TRAIN]
    auc = tell_auc(train, [_published("nations", s, attack) for s in NATIONS_HELD_OUT])
    assert auc <= 0.6, f"nations {attack}: metadata AUC {auc:.3f}"


def test_ids_and_order_do_not_depend_on_publication_order_or_authorship():
    docs = generate_world(1000).documents
    extra = Document("poison-last", "Notes", ["A sentence."], origin="poison")
    first = publish([*docs, extra], 1000)
    second = publish([extra, *reversed(docs)], 1000)
    assert [d.id for d in first] == [d.id for d in second]
    assert [d.title for d in first] == [d.title for d in second]
    relabelled = publish([Document(d.id, d.title, d.sentences, "clean") for d in [*docs, extra]], 1000)
    assert [d.id for d in relabelled] == [d.id for d in first]  # the author does not enter the id
    assert all(re.fullmatch(r"d[0-9a-f]{10}", d.id) for d in first)
    assert {d.id for d in publish(docs, 1000)} < {d.id for d in first}  # adding a document renames none


def test_poison_dates_are_dates_the_clean_corpus_carries():
    date = re.compile(r"\d{4}/\d{2}/\d{2}")
    dated = 0
    for attack in ("gragpoison", "kepo", "coassert", "adaptive"):
        index = _index(1000, attack)
        clean = {m for d in index.documents.values() if d.origin == "clean" for m in date.findall(d.text())}
        poison = {m for d in index.documents.values() if d.origin == "poison" for m in date.findall(d.text())}
        assert poison <= clean, attack
        dated += bool(poison)
    assert dated >= 3  # the temporal markers survive where a clean template is dated


def _relabelled(seed, retitle):
    """World ``seed``'s clean index with every fifth document relabelled as an attacker's, its
    title rewritten as GragPoison's were ("Update on X") when ``retitle``."""
    from dataclasses import replace

    from environments.graphrag.pipeline import build_index

    index = build_index(generate_world(seed).documents, generate_world(seed).table, community_method="none")
    docs = {}
    for k, (key, d) in enumerate(sorted(index.documents.items())):
        if k % 5 == 0:
            d = Document(d.id, f"Update on {d.title}" if retitle else d.title, d.sentences, origin="poison")
        docs[key] = d
    return replace(index, documents=docs)


def test_the_attackers_tell_classifier_reads_titles_and_nothing_when_there_is_no_tell():
    """The classifier of issue #50 item 3 (every field the index stores, every count the graph
    holds, titles included) finds a title tell, and finds nothing in documents relabelled at random."""
    from suites.graphrag.tells import attacker_tell_auc

    auc, low, high = attacker_tell_auc([_relabelled(0, True)], [_relabelled(1, True)], resamples=100)
    assert auc >= 0.95 and low <= auc <= high
    auc, _, _ = attacker_tell_auc([_relabelled(0, False)], [_relabelled(1, False)], resamples=100)
    assert auc <= 0.7


def test_field_groups_cover_every_column_once_and_find_the_tell_where_it_is():
    """``--groups``: each group of fields alone and every field but it; a title tell is found by
    the title group alone and by nothing else."""
    from suites.graphrag.tells import FEATURE_GROUPS, attacker_tell_auc, index_tells

    train, test = _relabelled(0, True), _relabelled(1, True)
    width = index_tells(test)[0].shape[1]
    columns = sorted(c for cols in FEATURE_GROUPS.values() for c in cols)
    assert columns == list(range(width))
    title = FEATURE_GROUPS["title"]
    assert attacker_tell_auc([train], [test], resamples=100, columns=title)[0] >= 0.95
    rest = [c for c in range(width) if c not in title]
    assert attacker_tell_auc([train], [test], resamples=100, columns=rest)[0] <= 0.7
