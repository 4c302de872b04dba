"""Bad model output from the real llama.cpp server is an observation: a reply cut at the token cap,
malformed JSON, an unknown tool and an empty reply each reach the environment as the model sent
them, come back as its error observation, are recorded, and the episode goes on. A server that
dies mid-episode ends that episode with status ``error`` (recorded, the log verifies) and nothing
else. Each is provoked on the real server (a tiny cap, a llama.cpp grammar, a stop string, a kill)."""

from __future__ import annotations

import json

import pytest

from agentbed.agents.chat import ChatAgent
from agentbed.agents.local.profile import LocalProfile
from agentbed.agents.local.server import LocalServer
from agentbed.agents.local.weights import DEFAULT_MODEL, resolve_weights
from agentbed.agents.retry import Backoff
from agentbed.log import TrajectoryWriter, read_log, verify_log
from agentbed.runner import Budget, EpisodeSpec, run_episode
from environments.vault.env import VaultEnv

pytestmark = [pytest.mark.local_model, pytest.mark.one_worker("local-model"), pytest.mark.timeout(1800)]  # a busy machine decodes slowly


def gbnf(text: str) -> str:
    """A llama.cpp grammar that admits exactly ``text``."""
    return "root ::= " + json.dumps(text)


def play(agent, tmp_path, name: str, steps: int = 2):
    log = tmp_path / f"{name}.jsonl"
    record = run_episode(VaultEnv("open-fast"), agent, EpisodeSpec("vault", "open-fast", agent.name, 0),
                         budget=Budget(max_steps=steps), writer=TrajectoryWriter(log))
    records = read_log(log)
    assert verify_log(log).ok
    return record, [r for r in records if r["type"] == "step"], records


@pytest.mark.parametrize("profile, sent, error, finish", [
    ({"max_tokens": 5}, None, "invalid_json", "length"),  # cut at the cap
    ({"grammar": gbnf('{"tool": "get_token", "arguments": {')}, '{"tool": "get_token", "arguments": {',
     "invalid_json", "stop"),
    ({"grammar": gbnf('{"tool": "self_destruct", "arguments": {}}')}, '{"tool": "self_destruct", "arguments": {}}',
     "unknown_tool", "stop"),
    ({"stop": ("{",)}, "", "invalid_json", "stop"),  # the grammar's first character is the stop string
], ids=["cut-at-cap", "malformed-json", "unknown-tool", "empty"])
def test_bad_output_is_the_environments_error_observation(local_model, tmp_path, profile, sent, error, finish):
    record, steps, _ = play(local_model.agent(**profile), tmp_path, "bad")
    assert record.status == "budget" and len(steps) == 2  # the episode went on after the bad reply
    for step in steps:
        if sent is not None:
            assert step["action"] == sent
        assert step["info"]["action_error"] == error
        assert json.loads(step["observation"])["error"] == error
        assert step["model_output"]["finish_reason"] == finish
        assert step["usage"]["output_tokens"] >= 0 and step["usage"]["input_tokens"] > 0
    if profile.get("max_tokens"):
        assert all(s["usage"]["output_tokens"] == profile["max_tokens"] for s in steps)


def test_a_server_that_dies_mid_episode_ends_that_episode_only(local_model, tmp_path):
    # the doomed server is asked without a grammar: a server's first constrained request sets up
    # its grammar engine (about 3 s of CPU), and what is tested here is its death, not its replies
    server = LocalServer(resolve_weights(DEFAULT_MODEL), tmp_path / "doomed.log")
    server.start()

    class KillsTheServerAfterOneStep(ChatAgent):
        def act(self, observation, tools):
            action = super().act(observation, tools)
            server.process.kill()
            server.process.wait()
            return action

    try:
        doomed = KillsTheServerAfterOneStep.from_model_string(
            local_model.model, base_url=server.base_url, max_retries=1, backoff=Backoff(base=0.01, max_delay=0.05),
            profile=LocalProfile(max_tokens=8, constrained=False))
        record, steps, records = play(doomed, tmp_path, "doomed", steps=3)
    finally:
        server.stop()
    assert record.status == "error" and len(steps) == 1
    assert records[-1]["status"] == "error" and "failed after 2 attempt(s)" in records[-1]["error"]
    assert "Connection" in records[-1]["error"]
    # the run's own server, and the next episode, are untouched
    after, after_steps, _ = play(local_model.agent(max_tokens=8), tmp_path, "after", steps=1)
    assert after.status != "error" and after_steps[0]["usage"]["output_tokens"] > 0
