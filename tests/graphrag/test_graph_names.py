"""A real graph is read through its own relations, whatever names it shares with the world
schema (issue #51 item 2): GeoNames' ``located_in``, and a graph a test registers whose names
are all world relation names with other meanings."""

import json

import pytest

from agentbed.runner import EpisodeSpec, run_episode
from controllers.graphrag.candidates import interpret_query
from environments.graphrag.agents import ReaderAgent, answer_chain
from environments.graphrag.corpus import Fact
from environments.graphrag.env import GraphRAGEnv, Scenario, is_correct, parse_task_id
from environments.graphrag.kg import local_search
from environments.graphrag.parse import SIGNATURES, interpret_plan
from environments.graphrag.pipeline import Query, build_index, poison_labels
from environments.graphrag.real import GRAPHS, RealGraph, load_real, register_graph

# A river network: every name is a world relation's, meaning something else here.
RIVERS = [("Alder", "Bexwater"), ("Bexwater", "Corrin"), ("Corrin", "Delmouth"), ("Esk", "Corrin"),
          ("Fenn", "Bexwater"), ("Gale", "Esk"), ("Harrow", "Delmouth"), ("Ivel", "Harrow")]
SOURCES = {"Alder": "Mount Kel", "Bexwater": "Lake Orm", "Corrin": "Mount Pryd", "Esk": "Lake Sull",
           "Fenn": "Mount Tarn", "Gale": "Lake Uth", "Harrow": "Mount Vey", "Ivel": "Lake Wend"}
REGION = {"Mount Kel": "Norland", "Lake Orm": "Norland", "Mount Pryd": "Sudmark", "Lake Sull": "Sudmark",
          "Mount Tarn": "Norland", "Lake Uth": "Sudmark", "Mount Vey": "Westfold", "Lake Wend": "Westfold"}


def river_facts():
    facts = [Fact(a, "located_in", b) for a, b in RIVERS]  # flows into
    facts += [Fact(r, "born_in", s) for r, s in SOURCES.items()]  # rises at
    facts += [Fact(s, "works_for", g) for s, g in REGION.items()]  # is administered by
    return sorted(facts, key=lambda f: (f.head, f.relation, f.tail))


RIVER_GRAPH = RealGraph(
    "rivers", river_facts,
    templates={"located_in": ("the river {x} flows into", "the river fed by {x}"),
               "born_in": ("the source of {x}", "where {x} rises"),
               "works_for": ("the region administering {x}", "the authority over {x}")},
    frames=("What is {np}?", "Name {np}."),
    glosses={"located_in": "flows|flow|fed|feeds tributary|river", "born_in": "source|rises|rise|spring",
             "works_for": "region|administering|administered|authority"})


@pytest.fixture
def rivers():
    register_graph(RIVER_GRAPH)
    yield load_real("rivers", seed=0, questions=12)
    GRAPHS.pop("rivers", None)


def _builder(data):
    index = build_index(data.documents, data.table, community_method="none")
    scenario = Scenario(data, index, poison_labels(index, data), {})
    return lambda task: scenario


def _episode_answers(data):
    """Per question: (the reader's answer through the environment, as a user's run gives it, is
    correct; the same index answered along the gold topic and plan is). They differ only where
    the reader misreads the question: extraction errors cost both alike."""
    builder = _builder(data)
    kg = builder(None).index.kg
    out = []
    for q in data.questions:
        env = GraphRAGEnv(parse_task_id(f"{data.name}-0-{q.id}"), builder=builder)
        rec = run_episode(env, ReaderAgent(), EpisodeSpec("graphrag", q.id, "reader", 0, {}))
        rows = [[i, s.head, s.relation, s.tail, s.chunk, s.dated, s.negated]
                for i in local_search(kg, q.topic, q.plan) for s in [kg.statements[i]]]
        out.append((bool(rec.metrics.get("correct")), is_correct(answer_chain(rows, q.topic, q.plan) or "", q)))
    return out


def test_a_registered_graph_that_reuses_world_names_is_read_by_its_own_glosses(rivers):
    assert set(SIGNATURES) >= {f.relation for f in rivers.facts}  # every name is a typed world name
    relations = sorted({f.relation for f in rivers.facts})
    index = build_index(rivers.documents, rivers.table, community_method="none")
    assert index.kg.glosses == RIVER_GRAPH.glosses
    for q in rivers.questions:
        assert interpret_plan(q.text, q.topic, relations, glosses=rivers.table.glosses) == q.plan, q.text
        reading = interpret_query(index.kg, Query(q.text))  # a defense's own reading
        assert reading is not None and (reading.topic, reading.plan) == (q.topic, q.plan), q.text
    # the world schema's typed reading of the same names gets them wrong: the test can fail
    wrong = sum(interpret_plan(q.text, q.topic, relations) != q.plan for q in rivers.questions)
    assert wrong >= len(rivers.questions) // 2


def test_the_reader_answers_a_registered_graph_through_the_environment(rivers):
    obs = json.loads(GraphRAGEnv(parse_task_id("rivers-0-rivers-q0"), builder=_builder(rivers)).reset(seed=0)[0])
    assert obs["glosses"] == {r: RIVER_GRAPH.glosses[r] for r in obs["schema"] if r in RIVER_GRAPH.glosses}
    answers = _episode_answers(rivers)
    assert all(reader == gold for reader, gold in answers), answers
    assert sum(reader for reader, _ in answers) >= len(answers) // 2


def test_geonames_located_in_is_read_as_the_gazetteer_describes_it():
    """GeoNames shares ``located_in`` with the world schema (issue #51: 12 of 20 plans came out
    empty or short through the typed parser)."""
    data = load_real("geonames", seed=0)
    assert "located_in" in {f.relation for f in data.facts} and "located_in" in SIGNATURES
    relations = sorted({f.relation for f in data.facts})
    own = sum(interpret_plan(q.text, q.topic, relations, glosses=data.table.glosses) == q.plan for q in data.questions)
    typed = sum(interpret_plan(q.text, q.topic, relations) == q.plan for q in data.questions)
    assert own == len(data.questions) and typed < 0.7 * len(data.questions), (own, typed)
    answers = _episode_answers(load_real("geonames", seed=0, questions=10))
    assert all(reader == gold for reader, gold in answers), answers


def test_the_held_out_gazetteer_is_geonames_other_continents_read_by_its_own_glosses():
    """``gazetteer`` (session 18, held out from development): GeoNames' relations over the countries
    of Africa and Asia, none of the development graph's countries; its questions parse through its
    own descriptions (only parsed here: no attack or defense runs on it in a test)."""
    held, dev = load_real("gazetteer", seed=0), load_real("geonames", seed=0)
    continents = {f.tail for f in held.facts if f.relation == "in_continent"}
    assert continents == {"Africa", "Asia"} and GRAPHS["gazetteer"].glosses == GRAPHS["geonames"].glosses
    countries = {f.head for f in held.facts if f.relation == "in_continent"}
    assert countries and not countries & {f.head for f in dev.facts if f.relation == "in_continent"}
    relations = sorted({f.relation for f in held.facts})
    own = sum(interpret_plan(q.text, q.topic, relations, glosses=held.table.glosses) == q.plan for q in held.questions)
    assert own == len(held.questions) == 40, own


def test_a_graph_cannot_take_the_world_name():
    with pytest.raises(ValueError):
        register_graph(RealGraph("world", list, {}, (), {}))


def test_a_graph_whose_name_starts_with_g_is_not_a_global_question():
    """Task ids of a real graph carry its name ("geonames-q0"); only "g<digits>" is global."""
    from suites.graphrag.scenarios import is_global

    assert is_global("g0") and is_global("g12")
    assert not is_global("geonames-q0") and not is_global("q3")


def test_the_held_out_periodic_table_is_read_through_its_own_schema():
    """``periodic`` (session 19, held out from development): mendeleev's periodic table, in relations
    no other graph here uses (its ``elements`` table's fields); every question parses through its
    own descriptions (only parsed here: no attack or defense runs on it in a test)."""
    from agentbed.testing import require
    from environments.graphrag.elements import FETCH_COMMAND
    from environments.graphrag.real import available

    require(available("periodic"), "mendeleev's elements database", f"run {FETCH_COMMAND}")
    held = load_real("periodic", seed=0)
    relations = sorted({f.relation for f in held.facts})
    assert relations == sorted(GRAPHS["periodic"].glosses)
    others = {r for name in GRAPHS if name != "periodic" for r in GRAPHS[name].glosses} | set(SIGNATURES)
    assert not set(relations) & others  # an unseen schema
    assert {f.tail for f in held.facts if f.head == "Sodium"} >= {"s-block", "Period 3", "Group 1", "Alkali metals"}
    own = [interpret_plan(q.text, q.topic, relations, glosses=held.table.glosses) for q in held.questions]
    assert own == [q.plan for q in held.questions] and len(own) == 40
    assert len({q.plan for q in held.questions}) == len(relations)  # every relation is asked about
