"""ALFWorld's handcoded expert drops objects from its inventory only on "put", a command the 0.4
grammar does not have ("move O to R"): what a handed-over expert believes it holds, as shipped and
with our bookkeeping fix (off by default)."""

from __future__ import annotations

import pytest

from agentbed.tools import make_action
from environments.alfworld.env import AlfworldEnv, parse_observation


def _take_and_put_back(env: AlfworldEnv) -> str:
    """Walk to receptacles until something can be taken; take it, put it back; return it."""
    obs, _ = env.reset(seed=0)
    for i in range(20):
        _, commands = parse_observation(obs)
        takes = [c for c in commands if c.startswith("take ")]
        if takes:
            obj, recep = takes[0].removeprefix("take ").split(" from ")
            env.step(make_action("act", command=takes[0]))
            obs, *_ = env.step(make_action("act", command=f"move {obj} to {recep}"))
            assert f"You move the {obj}" in parse_observation(obs)[0]
            return obj
        goes = [c for c in commands if c.startswith("go to ")]
        obs, *_ = env.step(make_action("act", command=goes[i % len(goes)]))
    pytest.fail("found nothing to take in 20 steps")


@pytest.mark.parametrize("fixed", [False, True])
def test_the_expert_forgets_a_put_down_object_only_when_fixed(fixed: bool) -> None:
    env = AlfworldEnv("000-simple", fix_expert_bookkeeping=fixed)
    obj = _take_and_put_back(env)
    believed = env._game._handcoded_expert.policy.inventory
    assert believed == ([] if fixed else [obj])  # as shipped: it still "holds" what was put back
    env.close()


def test_the_fix_is_on_by_default() -> None:
    assert AlfworldEnv("000-simple").fix_expert_bookkeeping is True
