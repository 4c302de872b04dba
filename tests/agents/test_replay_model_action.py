"""Replay of a model's episode names an edited action as a divergence in the action (the
action is rebuilt from the recorded reply), also when the edit is whitespace only."""

from __future__ import annotations

import json

from bad_input_corpus import rechain
from test_chat_openai import run, vault_policy

from agentbed.replay import first_divergence, rerun


def _edit(log, step, edit):
    records = [json.loads(line) for line in log.read_text().splitlines()]
    target = next(r for r in records if r.get("type") == "step" and r["i"] == step)
    target["action"] = edit(target["action"])
    log.write_bytes(rechain(records))
    return target["action"]


def test_an_edited_model_action_diverges_in_the_action(openai_stub, tmp_path):
    stub = openai_stub(vault_policy)
    _, _, log = run(stub, tmp_path)
    assert first_divergence(*rerun(log)) is None
    served = stub.served
    edited = _edit(log, 1, lambda a: a.replace('"page":  1', '"page":  2'))
    divergence = first_divergence(*rerun(log))
    assert divergence is not None and divergence.step == 1 and divergence.field == "step.action", divergence
    assert divergence.recorded == edited
    _edit(log, 1, lambda a: a.replace('"page":  2', '"page": 1'))  # whitespace differs from the reply's
    divergence = first_divergence(*rerun(log))
    assert divergence is not None and divergence.field == "step.action", divergence
    assert stub.served == served  # the reruns never called the model
