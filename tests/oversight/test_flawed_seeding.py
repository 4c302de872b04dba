"""Issue 54 item 1 for ScienceWorld's and the vault's base agents (suites/oversight/benchmarks/flawed.py):
their one random stream (slips and stated-risk noise) is seeded from the task, the agent, its flaw
preset and the seeds by a stable hash, so each task draws its own slips: the slip rate over many
tasks is the stated one and the tasks are independent. The legacy seeding (``random.Random(seed)``,
kept only to rebuild older datasets) gave every task the same slips at the same steps: the tests
show that too. The observation is the same for every task, so any difference comes from the streams."""

from __future__ import annotations

import math

import pytest

from agentbed.env import TaskSpec
from agentbed.errors import UsageError
from suites.oversight.benchmarks.flawed import FLAW_PRESETS
from suites.oversight.benchmarks.vault import VaultFlawed

TASKS = [f"ttl{i}-chores0" for i in range(1500)]
STEPS = 8
NOISE = FLAW_PRESETS["noisy"].noise  # 0.3, with no loop and no forgetting: each step slips at this rate


def _slips(task: str, seeding: str = "game", seed: int = 0, flaw: str = "noisy") -> list[bool]:
    agent = VaultFlawed(FLAW_PRESETS[flaw], seed, flaw=flaw, seeding=seeding)
    agent.reset(seed=seed, task=TaskSpec(task))
    return [bool(agent.act("{}", ()).meta["slipped"]) for _ in range(STEPS)]


def _within_binomial(hits: int, n: int, p: float, z: float = 4.0) -> bool:
    """``hits`` of ``n`` within ``z`` standard errors of rate ``p`` (the draws are fixed by the
    hash, so the test cannot flake; z = 4 would be a false alarm once in about 16,000 draws)."""
    return abs(hits - n * p) <= z * math.sqrt(n * p * (1 - p))


def test_the_same_task_agent_and_seeds_give_the_same_stream_and_any_other_another():
    assert _slips("ttl20-chores1") == _slips("ttl20-chores1")
    firsts = set()
    for task, flaw, seed in [("ttl20-chores1", "noisy", 0), ("ttl20-chores2", "noisy", 0),
                             ("ttl20-chores1", "looping", 0), ("ttl20-chores1", "noisy", 1)]:
        agent = VaultFlawed(FLAW_PRESETS[flaw], seed, flaw=flaw)
        agent.reset(seed=seed, task=TaskSpec(task))
        firsts.add(agent.rng.random())
    assert len(firsts) == 4


def test_the_noise_slips_at_its_rate_independently_across_tasks():
    runs = [_slips(task) for task in TASKS]
    for step in range(STEPS):  # the rate at every step, over the tasks
        assert _within_binomial(sum(r[step] for r in runs), len(runs), NOISE), step
    # consecutive tasks agree at a step as independent draws would: p^2 + (1 - p)^2
    agree = sum(a[step] == b[step] for a, b in zip(runs, runs[1:], strict=False) for step in range(STEPS))
    pairs = (len(runs) - 1) * STEPS
    assert _within_binomial(agree, pairs, NOISE**2 + (1 - NOISE) ** 2, z=6.0)  # steps within a pair share a task


def test_the_legacy_seeding_gave_every_task_the_same_slips():
    assert len({tuple(_slips(task, "legacy")) for task in TASKS[:50]}) == 1
    assert len({tuple(_slips(task)) for task in TASKS[:50]}) > 25


def test_the_risk_noise_comes_from_the_same_stream_per_task():
    def risks(task: str) -> list[float | None]:
        agent = VaultFlawed(FLAW_PRESETS["looping"], 0, flaw="looping")
        agent.reset(seed=0, task=TaskSpec(task))
        return [agent.act("{}", ()).risk for _ in range(3)]

    assert risks("ttl20-chores1") == risks("ttl20-chores1") != risks("ttl20-chores2")


@pytest.mark.parametrize("name", ["vault", "scienceworld"])
def test_the_targets_record_and_apply_their_base_seeding(name):
    from suites.oversight.benchmarks import load_target

    options = {"variations": (0,)} if name == "scienceworld" else {}
    for seeding, distinct in (("game", 3), ("legacy", 1)):
        target = load_target(name, base_seeding=seeding, **options)
        assert target.notes["base_seeding"] == seeding
        draws = set()
        for task in ("a", "b", "c"):
            agent = target.base_agents["noisy"](0)
            agent.reset(seed=0, task=TaskSpec(task))
            draws.add(agent.rng.random())
        assert len(draws) == distinct
    with pytest.raises(UsageError, match="base_seeding"):
        load_target(name, base_seeding="task", **options)


def test_the_build_records_the_setting_and_older_datasets_read_as_legacy(tmp_path, capsys):
    from agentbed.cli import main
    from controllers.oversight.dataset import Dataset
    from suites.oversight.build import recorded_config

    out = tmp_path / "vault.jsonl"
    assert main(["oversight", "build", "vault", "--games", "2", "--flaws", "noisy", "--checkpoints", "1",
                 "--rollouts", "1", "--out", str(out)]) == 0
    data = Dataset.load(out)
    assert data.provenance["config"]["target_options"]["base_seeding"] == "game"
    assert data.provenance["target_notes"]["base_seeding"] == "game"
    assert recorded_config(data.provenance).target_options["base_seeding"] == "game"
    older = {"config": {**data.provenance["config"], "target_options": {}}, "target_notes": {}}
    assert recorded_config(older).target_options["base_seeding"] == "legacy"
    capsys.readouterr()
    assert main(["oversight", "build", "graphrag", "--base-seeding", "legacy", "--out", str(tmp_path / "g.jsonl")]) == 2
    assert "--base-seeding" in capsys.readouterr().err


def test_the_scienceworld_random_walker_draws_per_task():
    """The ScienceWorld suite's random walker (environments/scienceworld/agents.py) had the same
    defect: seeded by the seed alone, every task run at one seed drew the same numbers."""
    from environments.scienceworld.agents import RandomWalker

    def draws(task: str, seed: int = 0) -> list[float]:
        walker = RandomWalker()
        walker.reset(seed=seed, task=TaskSpec(task))
        return [walker.rng.random() for _ in range(5)]

    assert draws("boil:0") == draws("boil:0") != draws("melt:0")
    assert draws("boil:0") != draws("boil:0", seed=1)
