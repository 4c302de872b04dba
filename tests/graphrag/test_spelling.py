"""Who writes a name decides nothing (session 20, found in session 19's Nations trace).

- The rule-based entity linker named an entity after the last page titled with it, so an attacker's
  page titled "Cuba" respelled the clean page's "cuba", and the reader's case-sensitive tie-break
  put "Cuba" before "china": the attacker's answer won on spelling alone. An entity's name is now a
  function of every title naming it (:func:`canonical_names`), whatever the pages' order, and
  every tie-break reads the case-folded name (:func:`name_key`).
- A retraction opening a page titled after no entity ("It is no longer the case that ...") was
  read with an empty head, and the empty entity ``''`` became a shared neighbour of every
  candidate it touched. A statement without both ends never enters the graph.
"""

from __future__ import annotations

from types import SimpleNamespace

from environments.graphrag.agents import answer_chain, best_supported
from environments.graphrag.corpus import Document, Statement, canonical_names, name_key
from environments.graphrag.globalsearch import Point, reduce_points
from environments.graphrag.kg import KnowledgeGraph, search_entities
from environments.graphrag.lexicon import LexiconExtractor
from environments.graphrag.nlp_named import gazetteer
from environments.graphrag.parse import link_entity

RELATIONS = ["boycottembargo", "expeldiplomats"]
CLEAN = [
    Document("a", "indonesia", ["indonesia is connected by expeldiplomats to china.",
                                "indonesia is connected by expeldiplomats to cuba."]),
    Document("b", "cuba", ["cuba is connected by boycottembargo to usa."]),
    Document("c", "china", ["china is connected by boycottembargo to usa."]),
    Document("u", "usa", ["usa is connected by boycottembargo to cuba."]),
]
ATTACK = Document("z", "Cuba", ["Cuba is a nation.", "Cuba is connected by boycottembargo to usa."])


def _rows(statements: list[Statement]) -> list[list[object]]:
    kg = KnowledgeGraph(statements)
    return [[i, s.head, s.relation, s.tail, s.chunk, s.dated, s.negated] for i, s in enumerate(kg.statements)]


def test_an_entitys_name_does_not_depend_on_which_page_came_last() -> None:
    extract = LexiconExtractor(RELATIONS)
    docs = [*CLEAN, ATTACK]
    forward = {(s.head, s.relation, s.tail, s.doc) for s in extract(docs)}
    backward = {(s.head, s.relation, s.tail, s.doc) for s in extract(docs[::-1])}
    assert forward == backward
    names = {e for h, _, t, _ in forward for e in (h, t)}
    assert len({name_key(n) for n in names}) == len(names)  # one spelling per entity
    # more pages spelled one way outvote fewer spelled another, in any order
    assert canonical_names([("k", "cuba"), ("k", "Cuba"), ("k", "cuba")]) == {"k": "cuba"}
    assert canonical_names([("k", "Cuba"), ("k", "cuba")]) == canonical_names([("k", "cuba"), ("k", "Cuba")])


def test_spacys_linker_names_an_entity_whatever_the_pages_order() -> None:
    def tokenize(text: str) -> list[SimpleNamespace]:
        return [SimpleNamespace(lower_=w.lower()) for w in text.split()]

    docs = [*CLEAN, ATTACK]
    assert gazetteer(docs, tokenize) == gazetteer(docs[::-1], tokenize)


def test_a_tie_is_broken_by_the_case_folded_name_not_by_its_spelling() -> None:
    """(indonesia, expeldiplomats) in {china, cuba}: one page each, one shared neighbour each (usa).
    Spelled "Cuba" by an attacker's title, cuba sorted before china; it must not."""
    for docs in ([*CLEAN, ATTACK], [ATTACK, *CLEAN]):
        rows = _rows(LexiconExtractor(RELATIONS)(docs))
        assert answer_chain(rows, "indonesia", ["expeldiplomats"]) == "china"
    rows = [[0, "x", "r", "Cuba", "d1#c0", "", False], [1, "x", "r", "china", "d2#c0", "", False]]
    assert best_supported(rows, "x", "r") == "china"
    assert reduce_points([Point("Cuba", 1.0, 0), Point("china", 1.0, 1)]) == "china"
    assert search_entities(KnowledgeGraph([Statement("Zeta", "r", "alpha", "d", "d#c0")]), "zeta alpha", k=1) \
        == ["alpha"]
    assert link_entity("is Ab or ab here", ["Ab", "ab"]) == link_entity("is Ab or ab here", ["ab", "Ab"])


def test_a_statement_without_a_head_never_enters_the_graph() -> None:
    """A retraction opening a chunk of a page titled after no entity has no subject to refer to."""
    report = Document("r", "Report on Indonesia", [
        "It is no longer the case that Indonesia is connected by expeldiplomats to Cuba.",
        "Indonesia is connected by boycottembargo to usa."])
    statements = LexiconExtractor(RELATIONS)([*CLEAN, report])
    assert all(s.head and s.tail for s in statements)
    headless = Statement("", "boycottembargo", "usa", "r", "r#c0", negated=True)
    kg = KnowledgeGraph([*statements, headless])
    assert "" not in kg.incident and all(s.head for s in kg.statements)
    assert "" not in KnowledgeGraph(statements).extended([headless]).incident
    # the empty entity was a shared neighbour: usa's page states (usa, boycottembargo, '') and an
    # attacker's (indonesia, ...) retraction gave indonesia '' too, which broke a tie for usa
    rows = [[0, "uk", "r", "usa", "d1#c0", "", False], [1, "uk", "r", "netherlands", "d2#c0", "", False],
            [2, "", "s", "usa", "d3#c0", "", True], [3, "", "s", "uk", "d3#c0", "", True]]
    assert best_supported([r for r in rows if r[1] and r[3]], "uk", "r") == "netherlands"
    assert answer_chain(_rows([Statement(str(r[1]), str(r[2]), str(r[3]), str(r[4]).split("#")[0], str(r[4]),
                                         bool(r[6])) for r in rows]), "uk", ["r"]) == "netherlands"
