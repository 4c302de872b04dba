"""Issue 54 item 7: the oversight controllers (action-conditioned, a band router, the cost-derived
rule) decide on live runs through the engine's controller chain, and decide as offline evaluation
does on the same checkpoints (fitted on some games' branches, deciding on the others')."""

import json

import numpy as np
import pytest

from agentbed.control import Chain, Controller
from agentbed.log import TrajectoryWriter
from agentbed.runner import Budget, EpisodeSpec, run_episode
from controllers.oversight.checkpoints import group_checkpoints
from controllers.oversight.dataset import BuildConfig, make_base_agent
from controllers.oversight.live import live_controller
from controllers.oversight.policies import ActionConditioned, ForestSettings
from controllers.oversight.scalar import BandRouter, CostRule
from controllers.oversight.utility import CONTINUE, Costs
from suites.oversight.benchmarks import load_target
from suites.oversight.build import build_dataset

COSTS = Costs()
POLICIES = {
    "action-conditioned": lambda: ActionConditioned(ForestSettings(n_estimators=15, dispersion_penalty=0.1)),
    "scalar-bands": lambda: BandRouter(),
    "cost-rule+platt": lambda: CostRule("platt"),
}


class Bystander(Controller):
    """Another controller in the chain, ahead of the oversight one: it lets everything through."""


@pytest.fixture(scope="module")
def split():
    data = build_dataset(BuildConfig("vault", games=14, seeds=1, rollouts=1, checkpoints=3, first=1, every=3))
    prov = data.provenance
    cps, _ = group_checkpoints(data.rows, prov["actions"], prov.get("primary_intervention", ""), prov["feature_names"])
    games = sorted(set(cps.games.tolist()))
    train_games = set(games[: len(games) // 2])
    train = cps.subset(np.asarray([i for i, g in enumerate(cps.games) if g in train_games]))
    test = cps.subset(np.asarray([i for i, g in enumerate(cps.games) if g not in train_games]))
    rows = {r["trajectory"]: r for r in data.rows if r["game"] not in train_games}
    return prov, train, test, rows


def _live(prov, policy, row, shadow, writer=None):
    target = load_target("vault")
    env = target.make_env(row["game"])
    controller = live_controller(policy, prov, target, env, COSTS, prov["primary_intervention"], shadow=shadow)
    spec = EpisodeSpec(suite="oversight-vault", task=row["game"], agent=row["flaw"], seed=row["seed"])
    record = run_episode(env, make_base_agent(target, row["flaw"], row["seed"]), spec,
                         budget=Budget(max_steps=target.max_steps), controller=Chain([Bystander(), controller]),
                         writer=writer)
    return controller, record


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_a_live_run_decides_as_offline_evaluation_on_the_same_checkpoints(split, name):
    prov, train, test, rows = split
    policy = POLICIES[name]()
    policy.fit(train)
    offline = dict(zip(test.keys, policy.choose(test, COSTS), strict=True))
    live = {}
    for trajectory, row in sorted(rows.items()):
        controller, _ = _live(prov, policy, row, shadow=True)
        live.update({(trajectory, d.step): d.choice for d in controller.decisions})
    assert live == {k: str(v) for k, v in offline.items()}  # every checkpoint, same decision
    if name == "action-conditioned":  # it discriminates here (the score-only rules may pick one action)
        assert len(set(live.values())) >= 2


def test_acting_live_the_first_intervention_takes_over_and_is_logged(split, tmp_path):
    prov, train, test, rows = split
    policy = POLICIES["action-conditioned"]()
    policy.fit(train)
    offline = dict(zip(test.keys, policy.choose(test, COSTS), strict=True))
    acted = 0
    for trajectory, row in sorted(rows.items()):
        decisions = [(s, str(offline[(t, s)])) for (t, s) in sorted(offline) if t == trajectory]
        first = next(((s, c) for s, c in decisions if c != CONTINUE), None)
        log = tmp_path / f"{trajectory}.jsonl"
        controller, record = _live(prov, policy, row, shadow=False, writer=TrajectoryWriter(log))
        upto = decisions[: decisions.index(first) + 1] if first else decisions
        assert [(d.step, d.choice) for d in controller.decisions] == upto  # nothing decided after taking over
        if first is None:
            continue
        acted += 1
        steps = [json.loads(line) for line in log.read_text().splitlines()]
        control = [s["control"] for s in steps if s.get("control")]
        taken = next(c for c in control if c.get("decision", {}).get("choice") == first[1])
        assert taken["by"] == "oversight" and taken["decision"]["checkpoint"] == first[0]
        assert taken["kind"] == ("stop" if first[1] == "quit" else "handover")
        assert (record.status == "stopped") == (first[1] == "quit")
    assert acted >= 1


# (development, held-out) committed datasets, and how many held-out trajectories to run live
# (ALFWorld's episodes are the slow ones).
COMMITTED = {
    "graphrag": ("graphrag-dev", "graphrag-heldout", 16),
    "alfworld": ("dev-s0-games00-07-noisy-gameseed", "heldout-s4-games00-07-noisy-gameseed", 4),  # the headline's first parts
    "agentdojo": ("agentdojo-dev", "agentdojo-heldout", 12),
}


def _pick(offline: dict[tuple[str, int], str], n: int) -> list[str]:
    """``n`` trajectories: first one for each choice offline evaluation made (so live runs must
    reproduce every kind of decision), then evenly spaced others."""
    names = sorted({t for t, _ in offline})
    chosen: list[str] = []
    for choice in sorted(set(offline.values())):
        chosen.append(next(t for (t, _), c in sorted(offline.items()) if c == choice and t not in chosen))
    rest = [t for t in names if t not in chosen]
    chosen += rest[:: max(1, len(rest) // max(1, n - len(chosen)))][: max(0, n - len(chosen))]
    return sorted(chosen)


@pytest.mark.parametrize("benchmark", sorted(COMMITTED))
@pytest.mark.parametrize("name", sorted(POLICIES))
def test_live_on_held_out_games_decides_as_offline(name, benchmark):
    """Beyond the vault: fitted on a benchmark's committed development dataset (ALFWorld: with the
    headline's step budget applied, as evaluated), deciding live on episodes of its held-out games
    exactly as offline evaluation does on their checkpoints."""
    import random

    from controllers.oversight.budget import with_budgets
    from controllers.oversight.dataset import Dataset
    from suites.oversight.build import recorded_config
    from suites.oversight.suite import DATA, load_headline

    dev_file, held_file, n = COMMITTED[benchmark]
    budgets = load_headline()["eval_config"]["budgets"] if benchmark == "alfworld" else {}
    dev, held = (with_budgets(Dataset.load(DATA / f"{f}.jsonl.gz"), budgets) for f in (dev_file, held_file))
    prov = held.provenance

    def checkpoints(data):
        return group_checkpoints(data.rows, prov["actions"], prov["primary_intervention"], prov["feature_names"])[0]

    train, test = checkpoints(dev), checkpoints(held)
    policy = POLICIES[name]()
    policy.fit(train)
    offline = {k: str(v) for k, v in zip(test.keys, policy.choose(test, COSTS), strict=True)}
    # as it was built (an ALFWorld dataset that records no base_seeding used the legacy streams)
    target = load_target(prov["config"]["benchmark"], **recorded_config(prov).target_options)
    rows = {r["trajectory"]: r for r in held.rows}
    chosen = _pick(offline, n)
    live = {}
    for trajectory in chosen:
        row = rows[trajectory]
        if target.uses_global_random:  # as the builder seeds it before the base trajectory
            random.seed(row["seed"])
        env = target.make_env(row["game"])
        controller = live_controller(policy, prov, target, env, COSTS, prov["primary_intervention"], shadow=True)
        run_episode(env, make_base_agent(target, row["flaw"], row["seed"]),
                    EpisodeSpec(suite=f"oversight-{benchmark}", task=row["game"], agent=row["flaw"], seed=row["seed"]),
                    budget=Budget(max_steps=target.max_steps), controller=Chain([Bystander(), controller]))
        env.close()
        live.update({(trajectory, d.step): d.choice for d in controller.decisions})
    assert live and live == {k: v for k, v in offline.items() if k[0] in chosen}
    if name == "action-conditioned":
        assert len(set(live.values())) >= 2
