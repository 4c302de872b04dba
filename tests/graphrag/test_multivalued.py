"""Multi-valued relations in clean data: a company has offices in several cities. Every true
value is clean evidence a defense must not delete, and any one of them answers the question."""

import json
import re

from agentbed.runner import EpisodeSpec, run_episode
from attacks.graphrag.scenario import poisoned_index
from environments.graphrag.corpus import gold_statements
from environments.graphrag.env import GraphRAGEnv, Scenario, is_correct
from environments.graphrag.extract import extraction_quality
from environments.graphrag.lexicon import LexiconExtractor
from environments.graphrag.pipeline import Query, Verdict
from suites.graphrag.report import run_cell
from suites.graphrag.scenarios import build_scenario, make_env, task_ids
from suites.graphrag.suite import SUITE
from tests.graphrag.test_no_leak import CHUNK_ID, TELL_TALES, Recording


def _set_questions(world):
    return [q for q in world.questions if q.also]


def test_world_states_several_offices_per_company_in_prose(world):
    pairs = world.multi_valued_pairs()
    assert len(pairs) >= 10 and {r for _, r in pairs} == {"office_in"}
    lines = [s for d in world.documents for s in d.sentences
             if any(c.fact.relation == "office_in" for c in getattr(s, "claims", ()))]
    assert any(len(s.claims) >= 3 for s in lines)  # a list in one sentence
    assert any(s.startswith(("It ", "He ", "She ")) or " also " in s for s in lines)  # split, by pronoun or alias
    docs_per_fact: dict = {}
    for s in gold_statements(world.documents):
        if s.relation == "office_in":
            docs_per_fact.setdefault(s.fact(), set()).add(s.doc)
    counts = [len(d) for d in docs_per_fact.values()]
    assert min(counts) == 1 and max(counts) >= 2  # one source for some values, several for others
    assert len({s.split(" in ")[0].split()[-1] for s in lines}) >= 3  # several surface forms


def test_extractor_recovers_the_offices(world):
    """Measured on world 1000: precision 0.95, recall 0.95 on the office triples."""
    gold = [s for s in gold_statements(world.documents) if s.relation == "office_in"]
    got = [s for s in LexiconExtractor(world.table.relations)(world.documents) if s.relation == "office_in"]
    q = extraction_quality(got, gold)
    assert q.gold >= 40 and q.precision >= 0.85 and q.recall >= 0.85


def test_set_questions_cross_the_relation_and_accept_any_gold_value(world):
    qs = _set_questions(world)
    assert len(qs) >= 6 and all(world.crosses_conflict(q) for q in qs)
    assert {q.plan for q in qs} == {("office_in",), ("works_for", "office_in"), ("office_in", "located_in")}
    for q in qs:
        assert all(is_correct(a, q) for a in q.accepted) and not is_correct("Nowhere City", q)
    opts = SUITE.resolve_options({"questions": "conflict", "worlds": 1})
    assert {f"world-1000-{q.id}" for q in qs} <= set(task_ids(opts))


def test_reader_answers_set_questions_and_tdp_removes_true_values():
    cells = {d: run_cell("world", "none", d, worlds=1, questions="conflict") for d in ("none", "tdp")}
    multi = {f"world-1000-{q.id}" for q in _set_questions(build_scenario(
        make_env("world-1000-q0", {}).task).dataset)}
    for defense, cell in cells.items():
        recs = [r for r in cell.records if r.task in multi]
        assert len(recs) == len(multi)
        assert sum(r.metrics["correct"] for r in recs) >= 0.7 * len(recs), defense
    assert sum(r.metrics["removed_clean"] for r in cells["tdp"].records if r.task in multi) > 0  # true offices deleted


def test_an_attack_adds_a_fake_value_beside_the_true_ones(world):
    built = poisoned_index(world, "gragpoison", seed=1000, community_method="none", aim="conflict")
    by_id = {q.id: q for q in world.questions}
    aimed = [(t, q) for t in built.plan.targets for q in t.questions if by_id[q].also]
    assert aimed
    for target, qid in aimed:
        assert target.answers[qid] not in by_id[qid].accepted  # the fake is never a true value
    opts = SUITE.resolve_options({"questions": "conflict", "attack": "gragpoison", "worlds": 1})
    cell = run_cell("world", "gragpoison", "none", worlds=1, questions="conflict")
    hit = [r for r in cell.records if r.task.rsplit("-", 1)[1] in {q for _, q in aimed}]
    assert sum(r.metrics["attack_success"] for r in hit) >= len(hit) / 2, opts


def test_no_gold_value_reaches_the_reader_or_a_defense(world):
    opts = SUITE.resolve_options({"questions": "conflict", "attack": "gragpoison", "defense": "tdp", "worlds": 1})
    multi = {q.id for q in _set_questions(world)}
    calls = []

    def spy(kg, query, retrieved):
        calls.append(query)
        return Verdict()

    for task in [t for t in task_ids(opts) if t.rsplit("-", 1)[1] in multi][:4]:
        env, agent = make_env(task, opts), Recording()
        run_episode(env, agent, EpisodeSpec("graphrag", task, "reader", 0, opts), budget=SUITE.budget)
        q = env.scenario.question(env.task.params["question"])
        first = json.loads(agent.seen[0])
        assert set(first) == {"question", "schema", "instructions"} and first["question"] == q.text
        for value in q.accepted:
            assert not re.search(rf"(?<![\w]){re.escape(value)}(?![\w])", agent.seen[0], re.IGNORECASE)
        for obs in agent.seen:
            assert not any(t in obs for t in (*TELL_TALES, "\"also\"", "accepted")), obs[:200]
            for row in json.loads(obs).get("statements", []):
                assert CHUNK_ID.match(row[4]), row

        def builder(spec, real=env.builder):
            s = real(spec)
            return Scenario(s.dataset, s.index, s.poison, s.attacker_answers, spy)

        run_episode(GraphRAGEnv(env.task, builder=builder), Recording(),
                    EpisodeSpec("graphrag", task, "reader", 0, opts), budget=SUITE.budget)
        assert calls and all(type(c) is Query and c == Query(q.text) for c in calls)
        calls.clear()


def test_tdp_set_keeps_values_a_source_lists_together():
    """tdp-set leaves a losing value in documents that also assert the winner (a listing), so
    it deletes fewer true offices than tdp, answering the same."""
    multi = lambda r: r.metrics["multi_valued"]  # noqa: E731
    cells = {d: run_cell("world", "none", d, worlds=1, questions="conflict") for d in ("tdp", "tdp-set")}
    removed = {d: sum(r.metrics["removed_clean"] for r in c.records if multi(r)) for d, c in cells.items()}
    assert 0 < removed["tdp-set"] < removed["tdp"]
    assert [r.metrics["correct"] for r in cells["tdp"].records] == [r.metrics["correct"] for r in cells["tdp-set"].records]
