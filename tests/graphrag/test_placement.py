"""The entity placement (``dress="entity"``, issue #50 item 3): an attack's claims on pages titled
after the entities they name, one page per entity with at most one clean page, none lost."""

import random
from collections import Counter
from functools import lru_cache

import pytest

from attacks.graphrag import ATTACKS
from attacks.graphrag.camouflage import camouflage
from attacks.graphrag.placement import entity_pages
from attacks.graphrag.scenario import attack_plan
from attacks.graphrag.targets import AttackBudget
from attacks.graphrag.titles import SERIES
from environments.graphrag.corpus import Fact
from environments.graphrag.lexicon import LexiconExtractor
from environments.graphrag.world import generate_world


@lru_cache(maxsize=4)
def _attacked(attack):
    data = generate_world(0, pages="several")
    poisoning = ATTACKS[attack](data, attack_plan(data, 12, 0), random.Random(0), budget=AttackBudget.of(5))
    return data, poisoning.added


def _said(docs):
    return {(c.fact, c.negated) for d in docs for _, c in d.claims}


@pytest.mark.parametrize("attack", ["gragpoison", "copy"])
def test_every_claim_lands_on_a_page_of_an_entity_it_names_or_stays_on_the_attackers_own(attack):
    data, added = _attacked(attack)
    pages, hosts = entity_pages(added, data)
    clean = Counter(d.title for d in data.documents if d.origin == "clean")
    assert _said(pages) == _said(added)  # nothing lost, nothing new
    placed = [(d, e) for d, e in zip(pages, hosts, strict=True) if e is not None]
    assert placed and len({e for _, e in placed}) == len(placed)  # one attacker page per entity
    for doc, entity in placed:
        assert doc.title == entity and clean[entity] <= 1 and not SERIES.match(entity)
        assert all(entity in (c.fact.head, c.fact.tail) for _, c in doc.claims)
    # the attacker's own pages keep only claims no entity page could take, and come last
    ids = {d.id for d in added}
    assert all(e is None for d, e in zip(pages, hosts, strict=True) if d.id in ids)
    assert hosts[:len(placed)] == [e for _, e in placed]


def test_the_entity_dress_titles_its_pages_after_their_claims_and_adds_only_true_statements():
    """Dressed, an entity page keeps its title (no "Update on X", never a third copy of a title)
    and what the extractor reads on it beyond the attacker's claims is true."""
    data, added = _attacked("gragpoison")
    dressed = camouflage(added, data, random.Random("camouflage-0"), "entity")
    _, hosts = entity_pages(added, data)
    titles = Counter(d.title for d in data.documents if d.origin == "clean") + Counter(d.title for d in dressed)
    assert not any(d.title.startswith("Update") for d in dressed)
    assert all(titles[d.title] <= 2 for d, e in zip(dressed, hosts, strict=True) if e is not None)
    extract, true = LexiconExtractor(sorted(data.table.phrases)), set(data.facts)

    def read(doc):
        return {(Fact(s.head, s.relation, s.tail), s.negated) for s in extract([doc], context=[*data.documents, doc])}

    own = _said(added) | {c for doc in added for c in read(doc)}  # what the attacker wrote, as written or read
    for doc in dressed:
        wrong = {(f, negated) for f, negated in read(doc) - own if negated or f not in true}
        assert not wrong, (doc.title, doc.text(), wrong)
