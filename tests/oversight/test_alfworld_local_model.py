"""The local model (llama.cpp serving Gemma 3 270M) as an ALFWorld base agent, branched: sampled
at a temperature above 0 with a seed per rollout, its stated confidence the risk score, missing
confidences counted. Asserts on the pipeline, never on the score; a few steps per branch."""

from __future__ import annotations

import importlib.util
import json

import httpx
import pytest

from agentbed.agents.local.profile import constrained_schema
from agentbed.log import verify_log
from agentbed.testing import require
from controllers.oversight.chat_base import ConfidentProfile, RolloutSeededChat
from controllers.oversight.dataset import BuildConfig, branch_trajectory
from suites.oversight.benchmarks import load_target
from suites.oversight.benchmarks.alfworld import DEFAULT_MENU

pytestmark = [pytest.mark.local_model, pytest.mark.one_worker("local-model")]


class Wire:
    """Requests as sent and chat completions as the server sent them."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.replies: list[dict] = []

    def client(self) -> httpx.Client:
        def sent(request: httpx.Request) -> None:
            if request.url.path.endswith("/chat/completions"):
                self.requests.append(json.loads(request.content))

        def got(response: httpx.Response) -> None:
            if response.request.url.path.endswith("/chat/completions"):
                response.read()
                self.replies.append(json.loads(response.content))

        return httpx.Client(event_hooks={"request": [sent], "response": [got]})


def test_the_local_model_is_branched_on_alfworld_with_a_seed_per_rollout(local_model, tmp_path):
    require(importlib.util.find_spec("alfworld") is not None, "the alfworld package",
            "PATH=$PWD/.venv/bin:$PATH .venv/bin/pip install -e '.[alfworld]'")
    wire = Wire()
    target = load_target("alfworld", games=1)
    target.max_steps = 2  # a few steps per branch: this checks the pipeline, not the agent
    target.base_agents = {"local": lambda seed: RolloutSeededChat.from_model_string(
        local_model.model, seed=seed, base_url=local_model.base_url, http_client=wire.client(),
        profile=ConfidentProfile(temperature=0.7, window=1, max_observation_chars=600, max_tokens=64))}
    logs = tmp_path / "logs"
    rows, counts = branch_trajectory(target, target.games[0], "local", 0,
                                     BuildConfig("alfworld", rollouts=2, checkpoints=1, first=1), log_dir=logs)
    assert counts.branch_errors == 0 and counts.replay_mismatches == 0 and counts.trajectory_errors == 0
    assert {(r["action"], r["rollout"]) for r in rows} == {(a, k) for a in ("continue", *DEFAULT_MENU)
                                                          for k in (0, 1)}
    # every base-agent step either stated a confidence or was counted as not stating one
    assert 0 <= counts.missing_risk_steps <= counts.base_steps and counts.base_steps >= 2
    assert all(0.0 <= r["risk"] <= 1.0 for r in rows)
    assert {bool(r["risk_missing"]) for r in rows} <= {counts.missing_risk_checkpoints > 0}
    # sampled above temperature 0, and the rollouts were sent different seeds
    assert wire.requests and all(req["temperature"] == 0.7 for req in wire.requests)
    assert len({req["seed"] for req in wire.requests}) >= 2
    schema = constrained_schema(wire.requests[0])
    assert all("confidence" in option["required"] for option in schema["anyOf"])
    # the environment got the server's bytes, and every branch's log verifies
    sent = [reply["choices"][0]["message"]["content"] for reply in wire.replies]
    branch_logs = sorted(logs.glob("*.jsonl"))
    assert branch_logs and all(verify_log(log).ok for log in branch_logs)
    actions = [json.loads(line)["action"] for log in branch_logs for line in log.read_text().splitlines()
               if json.loads(line).get("type") == "step" and "continue" in log.name]
    assert actions and set(actions) <= set(sent)
