"""A provider that answers HTTP 200 with a body that is no completion fails, not the model: the call
is retried like a 5xx and, if it never gets better, the episode errors with kind ``bad_response``
and is left out of every rate. Tool arguments that are JSON but not an object are the
environment's error observation. Through the real OpenAI client and the loopback server."""

from __future__ import annotations

import json

import pytest
from chaos import BAD_BODIES
from openai_stub import Reply
from test_chat_openai import run, scripted, steps_of

from agentbed.problems import classify, is_errored
from agentbed.replay import first_divergence, rerun


@pytest.mark.parametrize("body", BAD_BODIES.values(), ids=BAD_BODIES.keys())
def test_a_malformed_body_is_retried_like_a_5xx(openai_stub, tmp_path, body):
    stub = openai_stub(scripted(Reply(raw=body), Reply(raw=body)))
    record, records, _ = run(stub, tmp_path, task="open-fast")
    assert record.status == "ok" and record.success, record.error
    retries = steps_of(records)[0]["model_output"]["retries"]
    assert [r["error"] for r in retries] == ["BadResponse", "BadResponse"]


@pytest.mark.parametrize("body", BAD_BODIES.values(), ids=BAD_BODIES.keys())
def test_a_body_that_stays_malformed_errors_the_episode_as_the_providers_failure(openai_stub, tmp_path, body):
    stub = openai_stub(lambda request: Reply(raw=body))
    record, records, _ = run(stub, tmp_path, task="open-fast", max_retries=2)
    assert stub.served == 3 and record.status == "error"
    assert "BadResponse: openai:stub-model: HTTP 200 with" in records[-1]["error"]
    assert classify(record.error).name == "bad_response" and is_errored(record)


NON_OBJECTS = ["[1, 2, 3]", "[]", "3", "-0.5", '"page 1"', '""', "null", "true", "false"]


def test_arguments_that_are_json_but_no_object_are_an_observation(openai_stub, tmp_path):
    faults = [Reply([("read_logs", text)]) for text in NON_OBJECTS]
    stub = openai_stub(scripted(*faults))
    record, records, log = run(stub, tmp_path, task="open-fast")
    assert record.status == "ok" and record.success, record.error
    steps = steps_of(records)
    for step, text in zip(steps, NON_OBJECTS, strict=False):
        assert json.loads(step["action"]) == {"tool": "read_logs", "arguments": json.loads(text)}
        assert step["info"]["action_error"] == "invalid_arguments"
        assert step["model_output"]["arguments_source"] == "http_response"
    recorded, replayed = rerun(log)  # the recorded replies rebuild the same actions
    assert first_divergence(recorded, replayed) is None
