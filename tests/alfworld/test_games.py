"""The game generator: deterministic, all six task types, expert-checked, fixed held-out split."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from environments.alfworld import games
from environments.alfworld.layouts import TASK_TYPES


def test_drafts_are_deterministic_and_differ_between_games() -> None:
    a, b = games.sample_game(7, 0, 0), games.sample_game(7, 0, 0)
    assert a == b
    assert games.render_problem(a) == games.render_problem(b)
    problems = {games.render_problem(games.sample_game(i, 0, 0)) for i in range(30)}
    assert len(problems) == 30
    assert games.render_problem(games.sample_game(7, 1, 0)) != games.render_problem(a)


def test_first_six_games_cover_every_task_type_and_goal_comes_from_alfworld() -> None:
    from alfworld.gen import goal_library

    drafts = [games.sample_game(i, 0, 0) for i in range(6)]
    assert [d.task_type for d in drafts] == list(TASK_TYPES)
    for d in drafts:
        problem = games.render_problem(d)
        assert "(:domain alfred)" in problem and "(:goal" in problem
        templates = [t.format(obj=d.object_target.lower(), recep=d.parent_target.lower(),
                              toggle=d.toggle_target.lower(), mrecep="") for t in goal_library.gdict[d.task_type]["templates"]]
        assert d.task_desc in templates


def test_heldout_split_is_fixed_whole_games_and_balanced() -> None:
    heldout = [i for i in range(games.DEFAULT_GAME_COUNT) if games.split_of(i) == "heldout"]
    assert len(heldout) == games.DEFAULT_GAME_COUNT // games.HELDOUT_EVERY
    per_type = Counter(games.task_type_of(i) for i in heldout)
    assert set(per_type) == set(TASK_TYPES) and max(per_type.values()) - min(per_type.values()) <= 1


def test_generated_game_is_won_by_its_recorded_expert_walkthrough(tmp_path) -> None:
    from environments.alfworld.tw import raw_game_env

    path = games.ensure_game(3, root=tmp_path)
    data = json.loads(path.read_text())
    assert data["solvable"] and 0 < len(data["walkthrough"]) <= games.MAX_EPISODE_STEPS
    env = raw_game_env(path)
    state = env.reset()
    for command in data["walkthrough"]:
        assert command in state["admissible_commands"]
        state, _, _ = env.step(command)
    assert state["won"]
    assert games.ensure_game(3, root=tmp_path) == path  # cached: found, not regenerated


@pytest.mark.slow
def test_full_game_set_is_distinct_solvable_and_covers_layouts() -> None:
    paths = games.ensure_games(games.DEFAULT_GAME_COUNT, workers=2)
    assert len(paths) == games.DEFAULT_GAME_COUNT >= 300
    problems, types, rooms, layouts = set(), Counter(), Counter(), set()
    for path in paths:
        data = json.loads(path.read_text())
        traj = games.read_traj(path)
        assert data["solvable"] and data["walkthrough"]
        problems.add(data["pddl_problem"])
        types[traj["task_type"]] += 1
        rooms[traj["room"]] += 1
        layouts.add(tuple(sorted(line.split()[1] for line in data["pddl_problem"].splitlines()
                                 if line.strip().startswith("(receptacleType"))))
    assert len(problems) == len(paths)
    assert set(types) == set(TASK_TYPES) and min(types.values()) >= 50
    assert len(rooms) == 4
    assert len(layouts) > 200  # receptacle sets differ, not only object placements
