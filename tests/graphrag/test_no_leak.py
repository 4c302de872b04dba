"""Honest inputs: the reader and every defense see only what a real one would.

No gold relation plan, topic or answer reaches them; chunk ids are opaque; poison and clean
statements are interleaved, so neither an id nor a position tells them apart.
"""

import dataclasses
import json
import re

import pytest

from agentbed.agents.base import Agent
from agentbed.runner import EpisodeSpec, run_episode
from attacks.graphrag import ATTACKS
from attacks.graphrag.scenario import poisoned_index
from environments.graphrag.agents import ReaderAgent
from environments.graphrag.env import GraphRAGEnv, Scenario
from environments.graphrag.pipeline import Query
from suites.graphrag.scenarios import build_scenario, make_env, task_ids
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
        assert set(first) == {"question", "schema", "instructions"} and first["question"] == q.text
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
        from environments.graphrag.pipeline import Verdict
        return Verdict()

    opts = SUITE.resolve_options({"attack": "gragpoison", "worlds": 1})
    for task in task_ids(opts)[:3]:
        def builder(spec):
            s = build_scenario(spec)
            return Scenario(s.dataset, s.index, s.poison, s.attacker_answers, spy)

        env = GraphRAGEnv(make_env(task, opts).task, builder=builder)
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
