"""Global search: aggregation questions answered map-reduce over community reports, so the
community algorithm and community-level poisoning change the answers."""

import json

import pytest

from agentbed.runner import EpisodeSpec, run_episode
from agentbed.tools import make_action
from attacks.graphrag.scenario import poisoned_global_index
from environments.graphrag.globalsearch import (
    Point,
    community_reports,
    global_answer,
    global_questions,
    interpret_global,
    reduce_points,
)
from environments.graphrag.pipeline import build_index
from environments.graphrag.world import generate_world
from suites.graphrag.scenarios import make_env, task_ids
from suites.graphrag.suite import SUITE
from tests.graphrag.test_no_leak import CHUNK_ID, TELL_TALES, Recording

DEV_WORLDS = (0, 1, 2, 3)


def _answers(world, method):
    index = build_index(world.documents, world.table, community_method=method)
    shown = [r.shown(set()) for r in community_reports(index.kg, index.membership)]
    return [global_answer(shown, interpret_global(q.text, index.kg.relations())) for q in global_questions(world)]


def test_global_questions_have_unique_answers_and_are_read_from_their_text():
    for seed in DEV_WORLDS:
        world = generate_world(seed)
        questions = global_questions(world)
        assert questions, seed
        relations = sorted(world.table.phrases)
        for q in questions:
            assert q.counts[0][1] > q.counts[1][1] and q.answer == q.counts[0][0] and q.runner_up == q.counts[1][0]
            assert interpret_global(q.text, relations) == q.relation, q.text
        for q in world.questions:  # local questions are never taken for aggregation questions
            assert interpret_global(q.text, relations) is None, q.text


def test_reduce_keeps_the_top_points_and_sums_them():
    points = [Point("A", 3, 0), Point("B", 4, 1), Point("A", 2, 2), Point("C", 1, 3)]
    assert reduce_points(points) == "A"  # 3 + 2 beat 4
    assert reduce_points(points, keep=1) == "B"  # only the best point fits the context
    assert reduce_points([]) is None


def test_reports_hold_only_relationships_inside_their_community(world):
    index = build_index(world.documents, world.table)
    for report in community_reports(index.kg, index.membership):
        members = {e for e, c in index.membership.items() if c == report.community}
        assert report.size == len(members) and set(report.central) <= members
        for f in report.findings:
            assert {f.head, f.tail} <= members
            stated = {(index.kg.statements[i].head, index.kg.statements[i].relation, index.kg.statements[i].tail)
                      for i in f.statements}
            assert stated == {(f.head, f.relation, f.tail)}


def test_the_community_algorithm_changes_global_answers():
    """Fails if Louvain and hierarchical Leiden gave the same global-search answers, or if one
    community holding every entity answered as either does: communities must matter."""
    differ, merged_differ = 0, 0
    for seed in DEV_WORLDS:
        world = generate_world(seed)
        louvain, leiden = _answers(world, "louvain"), _answers(world, "leiden")
        differ += sum(a != b for a, b in zip(louvain, leiden, strict=True))
        index = build_index(world.documents, world.table, community_method="none")
        one = [r.shown(set()) for r in community_reports(index.kg, dict.fromkeys(index.kg.entities(), 0))]
        merged = [global_answer(one, q.relation) for q in global_questions(world)]
        merged_differ += sum(a != b for a, b in zip(louvain, merged, strict=True))
    assert differ > 0 and merged_differ > 0


def test_community_poisoning_flips_global_answers_within_budget():
    for seed in DEV_WORLDS[:2]:
        world = generate_world(seed)
        for method in ("louvain", "leiden"):
            built = poisoned_global_index(world, "community", budget=5, seed=seed, community_method=method)
            assert all(s.documents <= 5 and s.statements <= 20 for s in built.spend.values())
            shown = [r.shown(set()) for r in community_reports(built.index.kg, built.index.membership)]
            flipped = [global_answer(shown, q.relation) == built.attacker_answers[q.id] for q in global_questions(world)]
            assert sum(flipped) >= len(flipped) / 2, (seed, method, flipped)


@pytest.mark.parametrize("communities", ["louvain", "leiden"])
def test_the_reader_answers_global_questions_through_the_tool_and_sees_no_gold(communities):
    opts = SUITE.resolve_options({"attack": "community", "defense": "tdp", "worlds": 1, "questions": "global",
                                  "communities": communities})
    tasks = task_ids(opts)
    assert tasks and all(t.rsplit("-", 1)[1].startswith("g") for t in tasks)
    for task in tasks:
        env, agent = make_env(task, opts), Recording()
        record = run_episode(env, agent, EpisodeSpec("graphrag", task, "reader", 0, opts), budget=SUITE.budget)
        q = env.scenario.question(env.task.params["question"])
        assert record.metrics["global"] and record.steps == 2
        assert q.answer not in agent.seen[0] and q.runner_up not in agent.seen[0]
        reports = json.loads(agent.seen[1])["reports"]
        assert reports and all(set(r) == {"community", "size", "central", "findings"} for r in reports)
        for obs in agent.seen:
            assert not any(t in obs for t in TELL_TALES), obs[:200]
            assert not any(CHUNK_ID.match(str(x)) for r in json.loads(obs).get("reports", []) for x in r["central"])


def test_community_reports_tool_hides_what_the_defense_removed():
    opts = SUITE.resolve_options({"attack": "community", "worlds": 1, "questions": "global"})
    env = make_env(task_ids(opts)[0], opts)
    env.reset(seed=0)
    retrieved, verdict = env._retrieve_reports()
    assert retrieved and not verdict.removed
    verdict.removed.update(retrieved)
    obs = json.loads(env.step(make_action("community_reports"))[0])
    assert all(r["findings"] == [] for r in obs["reports"])


def test_global_questions_refuse_attacks_without_a_global_form():
    from agentbed.errors import UsageError

    with pytest.raises(UsageError, match="--attack gragpoison"):
        task_ids(SUITE.resolve_options({"attack": "gragpoison", "questions": "global"}))
