"""Natural conflicts in clean data: superseded facts with dates and disagreeing sources are clean
evidence a defense can wrongly remove; the conflict questions measure that."""

from attacks.graphrag.scenario import poisoned_index
from environments.graphrag.corpus import gold_statements
from environments.graphrag.lexicon import LexiconExtractor
from environments.graphrag.world import CHANGE_DATES, generate_world
from suites.graphrag.report import run_cell
from suites.graphrag.scenarios import task_ids
from suites.graphrag.suite import SUITE


def test_world_has_superseded_and_disputed_facts_that_count_as_clean():
    world = generate_world(1000)
    assert world.natural and not world.natural & set(world.facts)
    for statements in (gold_statements(world.documents), LexiconExtractor(world.table.relations)(world.documents)):
        superseded = [s for s in statements if s.fact() in world.natural and s.relation == "works_for"]
        assert {s.dated for s in superseded} == set(CHANGE_DATES) and any(s.negated for s in superseded)
        assert any(s.fact() in world.natural and s.relation == "born_in" for s in statements)  # a disagreeing source
    built = poisoned_index(world, "none", seed=1000, community_method="none")
    assert not any(built.poison)  # natural conflicts are clean evidence


def test_conflict_questions_are_selected_and_measured():
    opts = SUITE.resolve_options({"questions": "conflict", "worlds": 1})
    tasks = task_ids(opts)
    world = generate_world(1000)
    assert tasks and len(tasks) == sum(world.crosses_conflict(q) for q in world.questions)
    cell = run_cell("world", "none", "tdp", worlds=1, questions="conflict")
    assert all(r.status == "ok" and r.metrics["natural_conflict"] for r in cell.records)
    assert cell.interval("accuracy").n == len(tasks) and cell.interval("clean_removed").n > 0
