"""The on-title floor (suites/graphrag/tellfloor.py): what share of an attack's pages any dress
could title after an entity its claims name, and the AUC no dress gets that column under."""

from __future__ import annotations

import functools

import numpy as np

from attacks.graphrag.scenario import poisoned_index
from environments.graphrag.corpus import Document, Fact
from environments.graphrag.pipeline import build_index
from environments.graphrag.world import generate_world
from suites.graphrag.tellfloor import Scored, able_pages, matching, on_title, on_title_floor
from suites.graphrag.tells import Attacked, attack_claims, attack_pages


def _scored(item: Attacked) -> Scored:
    return item.index, item.claims, attack_pages(item.index, item.claims)


@functools.cache
def _attacked(pages: int, unread: int = 0) -> tuple[Attacked, Fact]:
    """World 0 (one page per entity) with ``pages`` attacker pages, each stating one fake claim
    (a person's employer) in the same words, titled as series pages, and ``unread`` more pages
    stating it in words the rule extractor does not read ("X counts Y among its staff")."""
    data = generate_world(0)
    real = next(f for f in data.facts if f.relation == "works_for")
    fake = next(f.tail for f in data.facts if f.relation == "works_for" and f.tail != real.tail)
    claim = Fact(real.head, "works_for", fake)
    added = [Document(f"a{k}", f"Bulletin {k}", [data.table.sentence(claim, variant=2 if k < pages else 0)], "poison")
             for k in range(pages + unread)]
    index = build_index([*data.documents, *added], data.table, community_method="none")
    return Attacked(index, frozenset({(claim, False)})), claim


def test_each_entity_its_claims_name_titles_one_page_at_most():
    """Every page states the same claim, so two entities (its subject and its object, one clean
    page each) can title two of them on their claim, never more: a maximum matching."""
    for pages, able in ((1, 1), (5, 2)):
        item, claim = _attacked(pages)
        kg = item.index.kg
        assert sum((s.head, s.relation, s.tail) == (claim.head, claim.relation, claim.tail) for s in kg.statements) == pages
        flags = able_pages(_scored(item))
        assert flags.sum() == able
        assert all(d.origin != "clean" for d, f in zip(item.index.documents.values(), flags, strict=True) if f)


def test_the_flag_reads_titles_and_what_the_graph_holds():
    """A clean entity page stating only facts on its entity carries the flag; a series title never
    does; the attacker's series-titled pages do not."""
    item, claim = _attacked(5)
    flags = on_title(item.index)
    docs = list(item.index.documents.values())
    assert not any(f for d, f in zip(docs, flags, strict=True) if d.origin != "clean")
    assert not any(f for d, f in zip(docs, flags, strict=True) if d.title.startswith("News "))
    page = next(k for k, d in enumerate(docs) if d.origin == "clean" and d.title == claim.head)
    stated = [item.index.kg.statements[i] for i in item.index.kg.by_doc[docs[page].id]]
    assert flags[page] == (bool(stated) and all(claim.head in (s.head, s.tail) for s in stated))


def test_the_floor_is_under_the_column_as_published_and_follows_the_pages_an_attack_can_title():
    """On development worlds 0-1 (several pages, the shape dress): the floor never exceeds the
    flag's AUC as the dress published the pages (a lower bound), and an attack with five claim pages
    per target on two entities (`gragpoison`) has a floor over issue #50's goal of 0.6, where
    `bridged`'s bridge pages can take their bridge entities' titles (measured 0.65-0.66 and 0.50-0.52)."""
    floors = {}
    for attack in ("gragpoison", "bridged"):
        items = []
        for s in (0, 1):
            data = generate_world(s, pages="several")
            p = poisoned_index(data, attack, targets=12, seed=s, community_method="none", dress="shape")
            items.append(Attacked(p.index, attack_claims(data, p.plan, p.index)))
        floors[attack] = on_title_floor([_scored(i) for i in items], resamples=100)
        floor, low, high = floors[attack].auc
        assert low <= floor <= high and floor <= floors[attack].flag_auc + 1e-9
        assert 0.5 < floors[attack].clean_share < 0.75
    assert floors["gragpoison"].auc[1] > 0.6
    assert floors["bridged"].auc[0] < 0.56 < floors["gragpoison"].auc[0]


def test_no_scored_attacker_page_leaves_the_attacker_side_unmeasured():
    """With no attacker page scored (one class), the column's AUC and the attacker's share are NaN,
    not the 0.5 of a column that tells nothing: the table would print that as a measured figure."""
    item, _ = _attacked(5)
    floor = on_title_floor([(item.index, item.claims, np.zeros(len(item.index.documents), dtype=bool))],
                           resamples=10)
    assert np.isnan(floor.flag_auc) and np.isnan(floor.attacker_share) and 0 < floor.clean_share < 1


def test_an_unread_claim_leaves_its_page_free_to_take_any_title():
    """A page whose claim the extractor does not read holds nothing that ties its title: any dress
    could title it on the flag, so it counts as able whatever else is taken."""
    item, _ = _attacked(5, 1)
    scored = np.array([d.origin != "clean" for d in item.index.documents.values()])
    assert scored.sum() == 6 and able_pages(_scored(item)).sum() == 3


def test_the_matching_is_maximum_and_the_same_every_time():
    """A greedy pass would give the first page the first entity and leave the second without one;
    augmenting paths move the first page to its other entity. The pages covered depend only on
    the options' order (the floor's interval resamples them)."""
    options = {0: ["a", "b"], 1: ["a"], 2: ["a"], 3: []}
    assert matching(options) == {0, 1}
    assert matching({2: ["a"], 0: ["a", "b"], 1: ["a"], 3: []}) == {0, 1}
    assert matching({k: ["x", "y", "z"] for k in range(5)}) == {0, 1, 2}
