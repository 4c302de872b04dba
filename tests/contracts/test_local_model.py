"""The contracts world with the local model end to end (llama.cpp serving Gemma 3 270M on
loopback, the session's ``local_model``): what the grader hashes is the bytes the server sent,
usage is the server's count, the log verifies and reruns identically. Asserts on the pipeline,
never on the score."""

from __future__ import annotations

import pytest

from agentbed.log import verify_log
from agentbed.replay import first_divergence, rerun
from environments.contracts.env import ContractEnv
from environments.contracts.integrity import sha256_hex
from tests.agents.test_local_model import Wire, play, steps_of, wired_agent

pytestmark = [pytest.mark.local_model, pytest.mark.one_worker("local-model")]


def test_a_contracts_episode_grades_the_servers_bytes(local_model, tmp_path):
    wire = Wire()
    env = ContractEnv("totp-basic")  # the shortest prompts: a few seconds a step on an idle machine
    record, records, log = play(env, wired_agent(local_model, wire), tmp_path, "totp", max_steps=3, suite="contracts")
    assert record.status in ("ok", "budget"), record.error  # a 270M model may use up the steps
    sent = [body["choices"][0]["message"]["content"] for body in wire.bodies]
    steps = steps_of(records)
    assert [s["action"] for s in steps] == sent  # the environment got the server's bytes
    for step, body in zip(steps, wire.bodies, strict=True):
        assert step["usage"]["total_tokens"] == body["usage"]["total_tokens"]
    uses = [u for attempt in env.state["attempts"] for u in attempt["uses"]]
    assert all(u["raw_sha256"] in {sha256_hex(text) for text in sent} for u in uses)  # graded = sent
    assert verify_log(log).ok
    recorded, replayed = rerun(log)
    assert first_divergence(recorded, replayed) is None
