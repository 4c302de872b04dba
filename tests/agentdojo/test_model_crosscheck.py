"""A seeded imperfect model (imperfect_model.py) under AgentDojo's own benchmark script and under
``agentbed run agentdojo --model openai:...``: per task, utility and security are equal, and the
two runners send the model the same requests (clock stamps masked: docs/agentdojo.md)."""

from __future__ import annotations

from collections import Counter

import pytest
from imperfect_model import ImperfectModel
from openai_stub import OpenAIStub

from agentbed.log import read_log
from environments.agentdojo.benchmark import TASK_SUITES, injection_task_names, user_task_names
from suites.agentdojo.crosscheck import compare
from suites.agentdojo.model_crosscheck import Slice, comparable_requests, ours, theirs

MODEL = "gpt-4o-2024-05-13"


def both(slices, tmp_path, suites, seed=47):
    model = ImperfectModel(suites, seed)
    their_stub, our_stub = OpenAIStub(model), OpenAIStub(model)
    try:
        their = theirs(slices, MODEL, their_stub.start(), tmp_path / "agentdojo")
        our = ours(slices, MODEL, our_stub.start(), tmp_path / "agentbed")
    finally:
        their_stub.stop()
        our_stub.stop()
    return their, our, comparable_requests(their_stub.requests, slices), comparable_requests(our_stub.requests, slices)


def test_an_imperfect_model_scores_the_same_under_both_runners(tmp_path):
    slices = [Slice("banking", None, ("user_task_0", "user_task_2", "user_task_3", "user_task_5", "user_task_15")),
              Slice("banking", "important_instructions", ("user_task_0", "user_task_3"),
                    ("injection_task_0", "injection_task_1", "injection_task_4")),
              Slice("slack", "tool_knowledge", ("user_task_1", "user_task_4"), ("injection_task_1", "injection_task_3"))]
    their, our, their_requests, our_requests = both(slices, tmp_path, ("banking", "slack"))
    assert len(our) == 15 and compare(our, their) == []
    assert our_requests == their_requests and len(our_requests) > 100
    # not vacuous: failures of utility, injections that worked, and every quirk of the protocol
    assert any(not s.utility for s in our.values()) and any(s.attack_success for s in our.values())
    quirks = Counter()
    for path in (tmp_path / "agentbed").rglob("*.jsonl"):
        for step in (r for r in read_log(path) if r["type"] == "step"):
            meta = step.get("meta") or {}
            quirks["parallel"] += meta.get("tool_calls", 1) > 1
            quirks["rerun"] += "rerun" in step["info"]
            quirks["capped"] += bool(meta.get("final")) and meta.get("round") == 15
            quirks["tool_error"] += bool(step["info"].get("tool_error"))
    assert min(quirks.values()) > 0 and len(quirks) == 4, quirks


@pytest.mark.slow
@pytest.mark.timeout(3600)  # 388 tasks, each run by both runners: about ten minutes on an idle core
def test_three_hundred_tasks_across_all_suites_and_two_attacks(tmp_path):
    slices = []
    for suite in TASK_SUITES:
        users = tuple(user_task_names(suite)[::3])
        injections = tuple(injection_task_names(suite)[::2])
        slices += [Slice(suite, None, users), Slice(suite, "important_instructions", users, injections),
                   Slice(suite, "tool_knowledge", users, injections)]
    their, our, their_requests, our_requests = both(slices, tmp_path, TASK_SUITES)
    assert len(our) >= 300
    assert compare(our, their) == []
    assert our_requests == their_requests
