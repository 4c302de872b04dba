"""The GraphRAG reader played by the local model (llama.cpp serving Gemma 3 270M), end to end:
the environment grades the bytes the server sent, usage is the server's count, the log verifies
and reruns identically (one step: the question and the tool menu). Asserts on the pipeline,
never on the score."""

from __future__ import annotations

import json

import httpx
import pytest

from agentbed.log import TrajectoryWriter, read_log, verify_log
from agentbed.replay import first_divergence, rerun
from agentbed.runner import Budget, EpisodeSpec, run_episode
from suites.graphrag.scenarios import make_env, task_ids
from suites.graphrag.suite import SUITE

pytestmark = [pytest.mark.local_model, pytest.mark.one_worker("local-model")]


@pytest.mark.timeout(1700)  # about 25 s on this machine; a saturated shared one decodes far slower
def test_the_local_model_reads_a_poisoned_defended_graph(local_model, tmp_path):
    bodies: list[dict] = []

    def keep(response: httpx.Response) -> None:
        if response.request.url.path.endswith("/chat/completions"):
            response.read()
            bodies.append(json.loads(response.content))

    agent = local_model.agent(0, max_tokens=48, model_kwargs={"http_client": httpx.Client(event_hooks={"response": [keep]})})
    opts = SUITE.resolve_options({"attack": "gragpoison", "defense": "tdp", "worlds": 1})
    task = task_ids(opts)[0]
    log = tmp_path / "graphrag.jsonl"
    record = run_episode(make_env(task, opts), agent, EpisodeSpec("graphrag", task, agent.name, 0, opts),
                         budget=Budget(max_steps=1), writer=TrajectoryWriter(log))
    assert record.status in ("ok", "budget"), record.error  # one step: the model may not answer yet
    records = read_log(log)
    steps = [r for r in records if r["type"] == "step"]
    assert steps and len(steps) == len(bodies)
    for step, body in zip(steps, bodies, strict=True):
        assert step["action"] == body["choices"][0]["message"]["content"]  # graded: the server's bytes
        usage = body["usage"]
        assert step["usage"]["input_tokens"] == usage["prompt_tokens"]
        assert step["usage"]["output_tokens"] == usage["completion_tokens"]
    assert records[0]["agent"]["model"] == local_model.model
    assert verify_log(log).ok
    recorded, replayed = rerun(log)
    assert first_divergence(recorded, replayed) is None
