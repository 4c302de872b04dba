import json

import pytest

from agentbed.branch import ForkPoint, Prefix, PrefixMismatch, branch_from_log
from agentbed.log import TrajectoryWriter, read_log, verify_log
from agentbed.replay import first_divergence, rerun
from agentbed.runner import EpisodeSpec, run_episode
from environments.vault.agents import VaultNaive, VaultOracle, VaultRandom
from environments.vault.env import VaultEnv


def _record(tmp_path, agent, task="long-chores", seed=3, name="base"):
    writer = TrajectoryWriter(tmp_path / f"{name}.jsonl")
    run_episode(VaultEnv(task), agent, EpisodeSpec("vault", task, agent.name, seed), writer=writer)
    return writer.path


@pytest.mark.parametrize("agent", [VaultOracle(), VaultNaive(), VaultRandom()], ids=lambda a: a.name)
def test_rerun_is_identical(tmp_path, agent):
    recorded, replayed = rerun(_record(tmp_path, agent))
    assert first_divergence(recorded, replayed) is None
    assert [r["hash"] for r in recorded] == [r["hash"] for r in replayed]  # byte-identical


def test_rerun_reports_the_first_divergence(tmp_path):
    path = _record(tmp_path, VaultOracle())
    lines = path.read_text().splitlines()
    step = json.loads(lines[2])
    assert step["i"] == 2
    # the recorded observation of step 2 claims another page: re-execution disagrees there
    edited = lines[2].replace("entry 2.0", "entry 2.9")
    assert edited != lines[2]
    path.write_text("\n".join(lines[:2] + [edited] + lines[3:]) + "\n")
    divergence = first_divergence(*rerun(path))
    assert divergence is not None and divergence.step == 2 and divergence.field == "step.observation"


@pytest.mark.parametrize("method", ["snapshot", "replay"])
def test_fork_restores_identical_state(tmp_path, method):
    path = _record(tmp_path, VaultOracle())
    prefix = Prefix.from_log(path)
    point = ForkPoint(lambda: VaultEnv("long-chores"), prefix, at_step=3, method=method)
    a, b = point.materialize(), point.materialize()
    assert a.state == b.state and a.clock.now() == b.clock.now() == prefix_clock(path, 3)
    a.step('{"tool": "wait", "arguments": {"seconds": 100}}')
    assert a.clock.now() != b.clock.now()  # branches are independent
    assert point.replays == (1 if method == "snapshot" else 2)


def prefix_clock(path, step):
    return [r for r in read_log(path) if r["type"] == "step"][step - 1]["clock"]


def test_branches_are_logged_and_linked_to_their_parent(tmp_path):
    path = _record(tmp_path, VaultOracle())
    out = tmp_path / "branches"
    records = branch_from_log(path, lambda: VaultEnv("long-chores"), 4,
                              {"continue": lambda env: VaultOracle(), "naive": lambda env: VaultNaive()},
                              rollouts=2, out_dir=out, base_agent=VaultOracle(), suite="vault")
    assert [r.success for r in records] == [True, True, False, False]
    for r in records:
        log = out / f"{r.episode_id}.jsonl"
        assert verify_log(log).ok
        header = read_log(log)[0]
        assert header["parent"]["at_step"] == 4 and header["parent"]["episode_id"] == "vault.long-chores.oracle.s3"


def test_a_replay_that_does_not_reproduce_the_prefix_is_detected(tmp_path):
    path = _record(tmp_path, VaultOracle())
    prefix = Prefix.from_log(path)
    prefix.observations[2] = prefix.observations[2].replace("entry", "ENTRY")
    with pytest.raises(PrefixMismatch) as info:
        ForkPoint(lambda: VaultEnv("long-chores"), prefix, at_step=3, method="replay").materialize()
    assert info.value.step == 2
    point = ForkPoint(lambda: VaultEnv("long-chores"), Prefix.from_log(path), at_step=3)
    with pytest.raises(PrefixMismatch):
        point.replay_agent(VaultNaive())  # a different agent does not reproduce the recorded actions
