"""The branching dataset on the vault environment (real engine, real ForkPoint)."""

import json

import pytest

from agentbed.agents.base import Action
from agentbed.errors import UsageError
from controllers.oversight.dataset import BuildConfig, Dataset, branch_trajectory
from environments.vault.env import VaultEnv
from suites.oversight.benchmarks import load_target
from suites.oversight.benchmarks.flawed import FLAW_PRESETS
from suites.oversight.benchmarks.vault import VaultFlawed
from suites.oversight.build import build_dataset

SMALL = dict(games=5, seeds=2, rollouts=2, checkpoints=2, first=1, every=3)


def _strip(rows):
    return [{k: v for k, v in r.items() if k != "method"} for r in rows]


def test_every_candidate_action_is_branched_at_every_checkpoint():
    ds = build_dataset(BuildConfig("vault", **SMALL))
    counts = ds.provenance["counts"]
    assert counts["replay_mismatches"] == 0 and counts["branch_errors"] == 0
    assert counts["checkpoints"] > 0
    per_checkpoint = {}
    for row in ds.rows:
        per_checkpoint.setdefault((row["trajectory"], row["checkpoint"]), []).append((row["action"], row["rollout"]))
    for pairs in per_checkpoint.values():
        assert sorted(pairs) == sorted((a, r) for a in ("continue", "expert", "reflect") for r in range(2))
    assert ds.provenance["actions"] == ["continue", "expert", "reflect", "quit"]


def test_snapshot_and_replay_branch_from_the_same_state():
    snap = build_dataset(BuildConfig("vault", method="snapshot", **SMALL))
    replay = build_dataset(BuildConfig("vault", method="replay", **SMALL))
    assert _strip(snap.rows) == _strip(replay.rows)
    assert replay.provenance["counts"]["replays"] == replay.provenance["counts"]["branches"]


def test_same_config_same_bytes(tmp_path):
    a = build_dataset(BuildConfig("vault", **SMALL)).save(tmp_path / "a.jsonl")
    b = build_dataset(BuildConfig("vault", **SMALL)).save(tmp_path / "b.jsonl")
    assert a.read_bytes() == b.read_bytes()
    loaded = Dataset.load(a)
    assert loaded.rows == build_dataset(BuildConfig("vault", **SMALL)).rows


def test_process_workers_give_the_same_rows():
    assert build_dataset(BuildConfig("vault", workers=2, **SMALL)).rows == build_dataset(BuildConfig("vault", **SMALL)).rows


class _Drifting(VaultEnv):
    """A vault whose observations drift between episodes (like a nondeterministic simulator)."""

    episodes = 0

    def setup(self, rng):
        type(self).episodes += 1
        first = super().setup(rng)
        return first if type(self).episodes % 2 else first + " "


def test_replays_that_diverge_are_discarded_and_counted():
    target = load_target("vault")
    spec = {g.id: g for g in __import__("suites.oversight.benchmarks.vault", fromlist=["x"]).vault_games()}
    target.make_env = lambda game: _Drifting(spec[game])
    rows, counts = branch_trajectory(target, "ttl60-chores3", "noisy", 0,
                                     BuildConfig("vault", rollouts=2, checkpoints=2, first=1, every=2, method="replay"))
    assert counts.replay_mismatches > 0
    assert counts.mismatch_examples[0]["diverged_at"] == 0
    assert len(rows) == counts.branches - counts.replay_mismatches


def test_rows_carry_prefix_features_only():
    ds = build_dataset(BuildConfig("vault", **SMALL))
    by_checkpoint = {}
    for row in ds.rows:
        by_checkpoint.setdefault((row["trajectory"], row["checkpoint"]), set()).add(json.dumps(row["features"]))
    assert all(len(v) == 1 for v in by_checkpoint.values())  # identical for every action and rollout
    assert all(row["features"]["step"] == row["checkpoint"] for row in ds.rows)


def test_flawed_agent_risk_is_in_unit_interval():
    agent = VaultFlawed(FLAW_PRESETS["noisy"], 0)
    env = VaultEnv("long-chores")
    obs, _ = env.reset(seed=0)
    agent.reset(seed=0)
    for _ in range(10):
        action = agent.act(obs, env.tool_specs())
        assert 0.0 <= action.risk <= 1.0
        obs, *_ = env.step(action.text)


def test_bad_dataset_files_are_named(tmp_path):
    missing = tmp_path / "none.jsonl"
    with pytest.raises(UsageError, match="none.jsonl"):
        Dataset.load(missing)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"provenance": {"schema": "agentbed.oversight.dataset/1"}}\n{"game": "x"}\n')
    with pytest.raises(UsageError, match=r"bad.jsonl:2: row lacks field"):
        Dataset.load(bad)
    bad.write_text("not json\n")
    with pytest.raises(UsageError, match=r"bad.jsonl:1: not (valid )?JSON"):
        Dataset.load(bad)


def test_unknown_benchmark_and_flaw_are_usage_errors():
    with pytest.raises(UsageError, match="unknown benchmark"):
        build_dataset(BuildConfig("nope"))
    with pytest.raises(UsageError, match="--flaws"):
        build_dataset(BuildConfig("vault", flaws=["sleepy"]))


def test_any_suite_branches_through_its_own_agents():
    ds = build_dataset(BuildConfig("suite:vault", rollouts=1, checkpoints=2, first=1, every=2,
                                   target_options={"base": "naive", "interventions": "oracle"}))
    assert ds.provenance["benchmark"] == "suite-vault"
    assert ds.provenance["actions"] == ["continue", "oracle", "quit"]
    assert {r["action"] for r in ds.rows} == {"continue", "oracle"}
    assert ds.provenance["counts"]["branches"] == len(ds.rows) + ds.provenance["counts"]["branch_errors"]
    with pytest.raises(UsageError, match="interventions"):
        build_dataset(BuildConfig("suite:vault", target_options={"base": "naive"}))
    with pytest.raises(UsageError, match="no agent"):
        build_dataset(BuildConfig("suite:vault", target_options={"base": "nobody", "interventions": "oracle"}))


def test_a_crashing_base_agent_is_counted_not_fatal():
    target = load_target("vault")

    class Crashing(VaultFlawed):
        def correct_action(self):
            raise RuntimeError("boom")

    target.base_agents = {"crash": lambda seed: Crashing(FLAW_PRESETS["noisy"].__class__(), seed)}
    rows, counts = branch_trajectory(target, "ttl60-chores3", "crash", 0, BuildConfig("vault"))
    assert rows == [] and counts.trajectory_errors == 1 and "boom" in counts.error_examples[0]


def test_missing_confidences_are_counted_and_carried_forward_never_a_silent_half():
    target = load_target("vault")

    class Quiet(VaultFlawed):  # states no confidence on every other step, like an unparsable chat reply
        def act(self, observation, tools):
            action = super().act(observation, tools)
            return action if self.steps % 2 else Action(action.text, risk=None, meta=action.meta)

    target.base_agents = {"quiet": lambda seed: Quiet(FLAW_PRESETS["noisy"], seed)}
    rows, counts = branch_trajectory(target, "ttl60-chores3", "quiet", 0,
                                     BuildConfig("vault", rollouts=1, checkpoints=3, first=1, every=1))
    assert counts.missing_risk_steps > 0 and counts.missing_risk_checkpoints > 0
    assert counts.base_steps >= counts.missing_risk_steps
    assert any(r["risk_missing"] for r in rows) and all(0.0 <= r["risk"] <= 1.0 for r in rows)
