import json

import gymnasium
from gymnasium.utils.env_checker import check_env

import environments.graphrag  # noqa: F401
from agentbed.runner import EpisodeSpec, run_episode
from agentbed.tools import make_action
from environments.graphrag.agents import ReaderAgent
from environments.graphrag.parse import interpret
from suites.graphrag.scenarios import make_env, task_ids
from suites.graphrag.suite import SUITE


def test_registered_env_passes_check_env():
    env = gymnasium.make("agentbed/graphrag-v0")
    check_env(env.unwrapped, skip_render_check=True)


def test_bad_actions_are_observations():
    env = make_env("world-1000-q0", SUITE.resolve_options({"attack": "gragpoison", "defense": "tdp"}))
    env.reset(seed=0)
    for action in ["{not json", make_action("local_search", entity=3, relations=[]),
                   make_action("expand", entity="x" * 100_000), b"\xff\xfe", make_action("nope"),
                   make_action("read_chunk", chunk="page99999#c7"), make_action("read_community", entity="Nobody"),
                   make_action("local_search", entity="Nobody", relations=["born_in"])]:
        obs, reward, terminated, truncated, info = env.step(action)
        assert isinstance(obs, str) and not terminated and reward == 0.0
    obs = json.loads(env.step(make_action("search_entities", text="\u0000x" * 3))[0])
    assert "error" in obs


def test_same_seed_same_trajectory_bytes(tmp_path):
    from agentbed.log import TrajectoryWriter

    opts = SUITE.resolve_options({"attack": "kepo", "defense": "tdp"})
    task = task_ids(opts)[0]
    digests = []
    for k in range(2):
        writer = TrajectoryWriter(tmp_path / f"{k}.jsonl")
        rec = run_episode(make_env(task, opts), ReaderAgent(), EpisodeSpec("graphrag", task, "reader", 0, opts),
                          writer=writer)
        digests.append(rec.digest)
    assert digests[0] == digests[1]
    assert (tmp_path / "0.jsonl").read_bytes() == (tmp_path / "1.jsonl").read_bytes()


def test_snapshot_restore_and_tools():
    env = make_env("world-1000-q1", SUITE.resolve_options({}))
    obs = json.loads(env.reset(seed=0)[0])
    snap = env.snapshot()
    entities = json.loads(env.step(make_action("search_entities", text=obs["question"]))[0])["entities"]
    reading = interpret(obs["question"], entities, obs["schema"])
    obs["topic"], obs["relations"] = reading.topic, list(reading.plan)
    rows = json.loads(env.step(make_action("local_search", entity=obs["topic"], relations=obs["relations"]))[0])
    chunk = rows["statements"][0][4]
    assert json.loads(env.step(make_action("read_chunk", chunk=chunk))[0])["text"]
    assert "summary" in json.loads(env.step(make_action("read_community", entity=obs["topic"]))[0])
    env.restore(snap)
    assert env.steps == 0 and env.state["answer"] is None
    fresh = make_env("world-1000-q1", SUITE.resolve_options({}))  # a fork restores into a new env
    fresh.restore(snap)
    assert json.loads(fresh.step(make_action("local_search", entity=obs["topic"], relations=obs["relations"]))[0]) == rows


def test_outcome_labels_attack_success():
    opts = SUITE.resolve_options({"attack": "gragpoison"})
    task = task_ids(opts)[0]
    rec = run_episode(make_env(task, opts), ReaderAgent(), EpisodeSpec("graphrag", task, "reader", 0, opts))
    assert rec.status == "ok" and rec.labels == ["ATTACK_SUCCESS"] and rec.metrics["targeted"]


def test_branching_from_a_recorded_log(tmp_path):
    from agentbed.agents.base import Action, Agent
    from agentbed.branch import ForkPoint, Prefix
    from agentbed.log import TrajectoryWriter

    opts = SUITE.resolve_options({"attack": "gragpoison", "defense": "none"})
    task = task_ids(opts)[0]
    log = tmp_path / "parent.jsonl"
    spec = EpisodeSpec("graphrag", task, "reader", 0, opts)
    parent = run_episode(make_env(task, opts), ReaderAgent(), spec, writer=TrajectoryWriter(log))
    assert parent.labels == ["ATTACK_SUCCESS"]

    env = make_env(task, opts)
    gold = env.builder(env.task).question(env.task.params["question"]).answer

    class Gold(Agent):  # the counterfactual continuation at the fork: answer correctly
        def act(self, observation, tools):
            return Action(make_action("answer", answer=gold))

    for method in ("snapshot", "replay"):
        fork = ForkPoint(lambda: make_env(task, opts), Prefix.from_log(log), at_step=1, method=method)
        branch = fork.run(Gold(), spec)
        assert branch.status == "ok" and branch.success and branch.steps == 1
