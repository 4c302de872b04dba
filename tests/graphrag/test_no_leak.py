"""Honest inputs: the reader and every defense see only what a real one would.

No gold relation plan, topic or answer reaches them; a defense judges only what the agent
retrieved; the agent's task names no attack or defense; chunk ids are opaque; poison and clean
statements are interleaved, so neither an id nor a position tells them apart.
"""

import dataclasses
import json
import re

import pytest

from agentbed.agents.base import Action, Agent
from agentbed.runner import EpisodeSpec, run_episode
from agentbed.tools import make_action
from attacks.graphrag import ATTACKS
from attacks.graphrag.scenario import poisoned_index
from environments.graphrag.agents import ReaderAgent
from environments.graphrag.env import GraphRAGEnv, Scenario
from environments.graphrag.kg import local_search
from environments.graphrag.pipeline import Query, Verdict
from suites.graphrag.defenses import DEFENSES
from suites.graphrag.scenarios import make_env, task_ids
from suites.graphrag.suite import SUITE

CHUNK_ID = re.compile(r"^d[0-9a-f]{10}#c\d+$")
TELL_TALES = ("grag", "kepo", "prag", "comm0", "page0", "news0", "poison", "origin", "\"topic\"", "\"plan\"")


class Recording(Agent):
    """The reader, recording every observation it is given."""

    name = "reader"

    def __init__(self) -> None:
        self.inner, self.seen = ReaderAgent(), []

    def reset(self, *, seed, task=None):
        self.inner.reset(seed=seed, task=task)

    def act(self, observation, tools):
        self.seen.append(observation)
        return self.inner.act(observation, tools)


def test_query_type_carries_only_text():
    assert [f.name for f in dataclasses.fields(Query)] == ["text"]


CASES = [("world", a) for a in sorted(ATTACKS)] + [("nations", a) for a in ("gragpoison", "tkpa", "adaptive")]


@pytest.mark.parametrize(("dataset", "attack"), CASES)
def test_reader_observations_hold_no_gold_field_or_telltale_id(dataset, attack, request):
    if dataset != "world":
        request.getfixturevalue("nations_available")
    opts = SUITE.resolve_options({"attack": attack, "defense": "tdp", "worlds": 1, "dataset": dataset})
    for task in task_ids(opts)[:4]:
        env, agent = make_env(task, opts), Recording()
        run_episode(env, agent, EpisodeSpec("graphrag", task, "reader", 0, opts), budget=SUITE.budget)
        q = env.scenario.question(env.task.params["question"])
        first = json.loads(agent.seen[0])
        # a real graph's relation descriptions are the schema's, the same for every question
        assert set(first) - {"glosses"} == {"question", "schema", "instructions"} and first["question"] == q.text
        assert ("glosses" in first) == (dataset != "world")
        assert not re.search(rf"(?<![\w]){re.escape(q.answer)}(?![\w])", agent.seen[0], re.IGNORECASE)
        assert first["schema"] == env.scenario.index.kg.relations()  # the whole vocabulary, not the plan
        for obs in agent.seen:
            assert not any(t in obs for t in TELL_TALES), obs[:200]
            for row in json.loads(obs).get("statements", []):
                assert CHUNK_ID.match(row[4]), row


def test_defenses_receive_only_the_question_text():
    calls = []

    def spy(kg, query, retrieved):
        calls.append(query)
        return Verdict()

    opts = SUITE.resolve_options({"attack": "gragpoison", "worlds": 1})
    for task in task_ids(opts)[:3]:
        real = make_env(task, opts)

        def builder(spec, real=real.builder):
            s = real(spec)
            return Scenario(s.dataset, s.index, s.poison, s.attacker_answers, spy)

        env = GraphRAGEnv(real.task, builder=builder)
        run_episode(env, ReaderAgent(), EpisodeSpec("graphrag", task, "reader", 0, opts), budget=SUITE.budget)
        q = env.scenario.question(env.task.params["question"])
        assert calls and all(type(c) is Query and c == Query(q.text) for c in calls)
        calls.clear()


@pytest.mark.parametrize(("dataset", "attack"), [("world", "gragpoison"), ("world", "kepo"), ("world", "tkpa"),
                                               ("nations", "gragpoison"), ("nations", "tkpa")])
def test_poison_statements_are_interleaved_with_clean_ones(world, dataset, attack, request):
    if dataset != "world":
        request.getfixturevalue("nations_available")
        from environments.graphrag.real import load_real

        world = load_real(dataset, seed=0)
    built = poisoned_index(world, attack, targets=12, seed=1000, community_method="none")
    poison = [i for i, p in enumerate(built.poison) if p]
    clean = [i for i, p in enumerate(built.poison) if not p]
    assert poison and clean
    # Mann-Whitney AUC of position: 0.5 when positions carry no information, 1.0 when poison comes last.
    later = sum(p > c for p in poison for c in clean) / (len(poison) * len(clean))
    assert 0.3 < later < 0.7
    ids = list(built.index.documents)
    assert all(re.match(r"^d[0-9a-f]{10}$", d) for d in ids) and len(set(ids)) == len(ids)


class Scripted(Agent):
    """Plays a fixed list of tool calls, then answers."""

    name = "scripted"

    def __init__(self, calls) -> None:
        self.calls, self.seen = list(calls), []

    def act(self, observation, tools):
        self.seen.append(observation)
        if self.calls:
            name, args = self.calls.pop(0)
            return Action(make_action(name, **args))
        return Action(make_action("answer", answer="unknown"))


def _spied(task, opts):
    """The task's env with its defense wrapped: every (retrieved statements) it is asked to judge."""
    seen = []
    real = make_env(task, opts)

    def builder(spec, build=real.builder):
        s = build(spec)

        def spy(kg, query, retrieved):
            seen.append(sorted(retrieved))
            return s.defense(kg, query, retrieved)

        return Scenario(s.dataset, s.index, s.poison, s.attacker_answers, spy)

    return GraphRAGEnv(real.task, builder=builder), seen


@pytest.mark.parametrize("attack", ["gragpoison", "adaptive"])
def test_defense_judges_only_what_the_agent_retrieved(attack):
    """No verdict on the gold topic and plan is computed behind the agent's back: an agent that
    retrieves nothing meets no defense, and ``expand`` is judged on the statements it returns."""
    opts = SUITE.resolve_options({"attack": attack, "defense": "tdp", "worlds": 1})
    task = task_ids(opts)[0]
    env, seen = _spied(task, opts)
    run_episode(env, Scripted([("search_entities", {"text": "x"})]), EpisodeSpec("graphrag", task, "s", 0, opts))
    assert seen == []
    q = env.scenario.question(env.task.params["question"])
    env, seen = _spied(task, opts)
    run_episode(env, Scripted([("expand", {"entity": q.topic})]), EpisodeSpec("graphrag", task, "s", 0, opts))
    assert seen == [sorted(env.scenario.index.kg.incident[q.topic])]
    env, seen = _spied(task, opts)
    wrong = [r for r in env.builder(env.task).index.kg.relations() if r not in q.plan][:1]
    run_episode(env, Scripted([("local_search", {"entity": q.topic, "relations": wrong})]),
                EpisodeSpec("graphrag", task, "s", 0, opts))
    kg = env.scenario.index.kg
    assert seen == [sorted(local_search(kg, q.topic, wrong))] != [sorted(local_search(kg, q.topic, q.plan))]


def test_expand_is_not_filtered_by_a_verdict_on_the_gold_plan():
    """Expanding the topic first shows what the defense removes from that expansion only."""
    opts = SUITE.resolve_options({"attack": "gragpoison", "defense": "tdp", "worlds": 1})
    task = task_ids(opts)[0]
    env = make_env(task, opts)
    q = env.builder(env.task).question(env.task.params["question"])
    agent = Scripted([("expand", {"entity": q.topic})])
    run_episode(env, agent, EpisodeSpec("graphrag", task, "s", 0, opts))
    kg = env.scenario.index.kg
    incident = kg.incident[q.topic]
    verdict = env.scenario.defense(kg, env.query, incident)
    shown = [row[0] for row in json.loads(agent.seen[1])["statements"]]
    assert shown == [i for i in incident if i not in verdict.removed]


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_agent_task_names_no_attack_or_defense(attack):
    opts = SUITE.resolve_options({"attack": attack, "defense": "tdp", "worlds": 1})
    tells = {*ATTACKS, *DEFENSES} - {"none"}
    for task in task_ids(opts)[:2]:
        env, agent = make_env(task, opts), Recording()
        handed = []
        agent.reset = lambda *, seed, task=None: handed.append(task)  # noqa: B023 - one agent per task
        run_episode(env, agent, EpisodeSpec("graphrag", task, "reader", 0, opts), budget=SUITE.budget)
        assert handed and set(handed[0].params) == {"dataset", "world", "question"}
        assert not any(t in handed[0].id for t in tells)
        first = json.loads(agent.seen[0])
        assert not any(t in first["instructions"].lower() for t in tells)


@pytest.mark.parametrize("name", ["nations", "umls", "kinships"])
def test_real_questions_never_name_a_relation_identifier(nations_available, name):
    """Real-graph questions are English: no word of any question is a relation's identifier
    (``intergovorgs``, ``ngo``, ``term6``, ``isa``, ``part_of``), on the evaluation questions and on
    others' seeds; the reader still reads the plan from the text."""
    from environments.graphrag.parse import interpret_plan
    from environments.graphrag.real import load_real

    read = total = 0
    for seed in (0, 1, 2):
        data = load_real(name, seed=seed)
        relations = sorted({f.relation for f in data.facts})
        for q in data.questions:
            text = q.text.replace(q.topic, " ").lower()
            assert "_" not in text, q.text  # no "part_of", "co-occurs_with"
            named = set(re.findall(r"\w+", text)) & {r.lower() for r in relations}
            # an identifier that is an English word ("causes", "treaties") may be said; "ngo", "isa", "term6" not
            assert named <= ENGLISH_NAMES, (q.text, named)
            read += interpret_plan(q.text, q.topic, relations, glosses=data.table.glosses) == q.plan
            total += 1
    assert read >= 0.9 * total, (read, total)


# Relation identifiers that are ordinary English words, so an English question may say them.
ENGLISH_NAMES = {"affects", "causes", "treats", "produces", "measures", "disrupts", "prevents", "uses", "contains",
                 "performs", "indicates", "exhibits", "diagnoses", "manages", "analyzes", "surrounds", "precedes",
                 "interconnects", "practices", "complicates", "embassy", "students", "tourism", "treaties", "warning",
                 "duration", "independence", "dependent", "conferences", "accusation", "ingredient", "process",
                 "property", "location", "manifestation", "measurement", "evaluation", "method", "degree",
                 "result", "issue"}


def test_the_reader_never_sees_the_question_writers_templates():
    """The interpreter and its glosses import no question writer and share none of its tables."""
    import ast
    from pathlib import Path

    from environments.graphrag import glosses, parse, realquestions

    writer_side = {n for n in dir(realquestions) if not n.startswith("__")} - {"annotations", "random", "re", "Mapping", "Sequence"}
    for module in (parse, glosses):
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        assert not any("realquestions" in m or "real" == m.rsplit(".", 1)[-1] or "prose" in m for m in imported if m)
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | \
            {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        assert not names & writer_side, names & writer_side
    templates = {t for graph in realquestions.TEMPLATES.values() for ts in graph.values() for t in ts}
    described = {g for graph in glosses.GLOSSES.values() for g in graph.values()}
    assert not any(t.replace("{x}", "").strip() in described for t in templates)
