"""Malformed actions become error observations, recorded in the log, never exceptions."""

import json

import pytest

from agentbed.agents.base import Action, Agent
from agentbed.log import TrajectoryWriter, read_log, verify_log
from agentbed.runner import Budget, EpisodeSpec, run_episode
from environments.vault.env import VaultEnv

MALFORMED = {
    "not_json": ("{tool: get_token", "invalid_json"),
    "not_an_object": ("[1, 2]", "invalid_action"),
    "unknown_tool": ('{"tool": "rm_rf", "arguments": {}}', "unknown_tool"),
    "wrong_type": ('{"tool": "read_logs", "arguments": {"page": "one"}}', "invalid_arguments"),
    "extra_argument": ('{"tool": "get_token", "arguments": {"x": 1}}', "invalid_arguments"),
    "arguments_not_object": ('{"tool": "get_token", "arguments": 3}', "invalid_arguments"),
    "huge_string": (json.dumps({"tool": "open_vault", "arguments": {"token": "A" * 10_000_000}}), "action_too_large"),
    "nul_raw": ('{"tool": "open_vault", "arguments": {"token": "a\x00b"}}', "nul_byte"),
    "nul_escaped": ('{"tool": "open_vault", "arguments": {"token": "a\\u0000b"}}', "nul_byte"),
    "invalid_utf8": (b'{"tool": "open_vault", "arguments": {"token": "\xff\xfe"}}', "invalid_utf8"),
    "lone_surrogate": ('{"tool": "open_vault", "arguments": {"token": "\ud800"}}', "invalid_utf8"),
    "deep_nesting": ("[" * 100_000 + "]" * 100_000, "invalid_json"),
    "not_text": (12345, "invalid_action"),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_action_is_an_observation(name):
    action, code = MALFORMED[name]
    env = VaultEnv("open-fast")
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(action)
    assert json.loads(obs)["error"] == code
    assert info["action_error"] == code
    assert reward == 0 and not terminated


class _Scripted(Agent):
    name = "scripted"

    def __init__(self, actions):
        self.actions = list(actions)

    def act(self, observation, tools):
        return Action(self.actions.pop(0))


def test_malformed_actions_are_recorded_in_the_log(tmp_path):
    actions = [MALFORMED[n][0] for n in ("not_json", "invalid_utf8", "huge_string", "nul_raw")]
    actions += ['{"tool": "get_token", "arguments": {}}']
    writer = TrajectoryWriter(tmp_path / "e.jsonl")
    spec = EpisodeSpec("vault", "open-fast", "scripted", 0)
    record = run_episode(VaultEnv("open-fast"), _Scripted(actions), spec, writer=writer, budget=Budget(max_steps=5))
    assert record.status == "budget" and record.steps == 5
    steps = [r for r in read_log(writer.path) if r["type"] == "step"]
    assert [s["info"].get("action_error") for s in steps] == ["invalid_json", "invalid_utf8", "action_too_large",
                                                              "nul_byte", None]
    assert steps[1]["action"] == {"base64": "eyJ0b29sIjogIm9wZW5fdmF1bHQiLCAiYXJndW1lbnRzIjogeyJ0b2tlbiI6ICL//iJ9fQ=="}
    assert verify_log(writer.path).ok


def test_raw_action_bytes_are_kept_verbatim(tmp_path):
    raw = '{ "arguments" : {"page":2},   "tool":"read_logs" }'
    writer = TrajectoryWriter(tmp_path / "e.jsonl")
    run_episode(VaultEnv("open-fast"), _Scripted([raw]), EpisodeSpec("vault", "open-fast", "s", 0), writer=writer,
                budget=Budget(max_steps=1))
    step = [r for r in read_log(writer.path) if r["type"] == "step"][0]
    assert step["action"] == raw
    assert step["info"]["tool"] == "read_logs"
