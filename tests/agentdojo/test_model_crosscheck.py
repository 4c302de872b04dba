"""A seeded imperfect model (imperfect_model.py) under AgentDojo's own benchmark script and under
``agentbed run agentdojo --model openai:...``: per task, utility and security are equal, and the
two runners send the model the same requests (clock stamps masked: docs/agentdojo.md)."""

from __future__ import annotations

import copy
import functools
import json
from collections import Counter

import pytest
from equal_subtrees import equal, shortcut
from imperfect_model import ImperfectModel
from openai_stub import OpenAIStub
from parse_memo import parse_once

from agentbed.log import read_log
from agentbed.replay import first_divergence, rerun
from environments.agentdojo.benchmark import TASK_SUITES, TaskId, injection_task_names, user_task_names
from environments.agentdojo.env import pre_environment_of
from suites.agentdojo.crosscheck import compare, recorded_tries, their_rescoring
from suites.agentdojo.model_crosscheck import Slice, comparable_requests, ours, theirs

MODEL = "gpt-4o-2024-05-13"


@pytest.fixture(autouse=True)
def _repeats_computed_once(monkeypatch):
    """Two pure functions that AgentDojo's runner calls again and again on the same input, each
    answered once and copied after: PyYAML's parse of a suite's environment text (every user task
    of a suite loads the same canary-injected text for its injection candidates, and an attack the
    same default text for each injection task's ground truth; each parse is PyYAML's pure-Python
    one, about half of their runner's set-up) and the tool schemas its OpenAI element rebuilds with
    pydantic for every request. Their runner still parses with PyYAML and sends what it built:
    equal objects, each a fresh deep copy, so nothing it mutates is shared. A wrong answer here
    could only make their requests or scores differ from agentbed's, which the tests compare.
    Its trace logger writes a task's JSON log once a task is over (when it records the duration,
    then utility and security), not also after every message, which rewrote the whole
    conversation each time (8% of their runner's CPU in the 300-task test): the same file.
    The OpenAI SDK's walk of a request body against its parameter types (``_transform_recursive``,
    every message through each of the message union's six TypedDicts, every tool through the
    tool union's) is answered once per distinct message and tool of plain JSON (keyed by its JSON
    text and type) and handed out as a fresh parse of its JSON: request k of a conversation
    repeats the k-1 messages before it, and every request the suite's tools (13% of the 300-task
    test's samples). agentbed's element does not use the walk (OpenAIChat.create), so a wrong
    answer here would show as a request that differs from agentbed's.
    Both runners validate every environment they load with pydantic, whose ``EmailStr`` runs
    email-validator's syntax check (``pydantic.networks.validate_email``, a pure function of the
    address text: no deliverability check) on each of the hundreds of addresses in an environment,
    the same few addresses every time (about 95% of the validation's samples in the 300-task test):
    each distinct text is checked once (an invalid one raises again, uncached)."""
    import yaml
    from agentdojo.agent_pipeline.llms import openai_llm
    from agentdojo.logging import TraceLogger

    parse, schema = yaml.safe_load, openai_llm._function_to_openai
    # the recurring texts stay, and a task's own text comes back from the cache when a later user
    # task of the same suite sees the same vectors (16: every such repeat of the 300-task test's
    # workspace tasks, seven injection tasks apart); a text met once is read once
    parsed = functools.lru_cache(maxsize=16)(parse)
    built: dict[tuple, tuple[str, bool, object]] = {}

    def to_openai(f):  # what _function_to_openai reads of a tool: its name, description and parameters
        key = (f.name, f.description, f.parameters)
        if key not in built:
            tool = schema(f)
            text = json.dumps(tool)
            built[key] = (text, json.loads(text) == tool, tool)
        text, plain, tool = built[key]
        return json.loads(text) if plain else copy.deepcopy(tool)  # plain JSON: a parse copies it in a third of the time

    parse_once(monkeypatch, parsed)
    monkeypatch.setattr(openai_llm, "_function_to_openai", to_openai)

    log = TraceLogger.log

    def log_unsaved(self, messages):  # the messages are kept and passed on; the file waits for the task's end
        self.save = lambda: None
        try:
            log(self, messages)
        finally:
            del self.save

    monkeypatch.setattr(TraceLogger, "log", log_unsaved)

    from openai._utils import _transform
    from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolUnionParam

    walk, walked = _transform._transform_recursive, {}

    def walk_once(data, *, annotation, inner_type=None):  # one message or tool of a body's list
        if isinstance(data, dict) and inner_type in (ChatCompletionMessageParam, ChatCompletionToolUnionParam):
            try:
                key = (inner_type, json.dumps(data))
            except (TypeError, ValueError):  # not plain JSON: walked as the SDK walks it
                return walk(data, annotation=annotation, inner_type=inner_type)
            if key not in walked:
                walked[key] = json.dumps(walk(data, annotation=annotation, inner_type=inner_type))
            return json.loads(walked[key])
        return walk(data, annotation=annotation, inner_type=inner_type)

    monkeypatch.setattr(_transform, "_transform_recursive", walk_once)

    from pydantic import networks

    monkeypatch.setattr(networks, "validate_email", functools.lru_cache(maxsize=4096)(networks.validate_email))


def both(slices, tmp_path, suites, seed=47, defense=None):
    model = ImperfectModel(suites, seed, {(s.suite, u) for s in slices for u in s.user_tasks})
    their_stub, our_stub = OpenAIStub(model), OpenAIStub(model)
    try:
        their = theirs(slices, MODEL, their_stub.start(), tmp_path / "agentdojo", defense)
        with shortcut():  # agentbed's graders skip DeepDiff's walk of equal parts; AgentDojo's, the oracle, do not
            our = ours(slices, MODEL, our_stub.start(), tmp_path / "agentbed", {"defense": defense} if defense else None)
    finally:
        their_stub.stop()
        our_stub.stop()
    return their, our, comparable_requests(their_stub.requests, slices), comparable_requests(our_stub.requests, slices)


def regraded(tmp_path, our):
    """AgentDojo's runner re-grades every agentbed episode from its log alike, try by try when the
    world re-ran it after a reply with no content (their_rescoring); some episodes were re-run."""
    reruns = 0
    for path in (tmp_path / "agentbed").rglob("*.jsonl"):
        records = read_log(path)
        tid = TaskId.parse(records[0]["task"])
        assert their_rescoring(tid, records) == our[tid], tid
        reruns += len(recorded_tries(records)) > 1
    assert reruns > 0


def test_an_imperfect_model_scores_the_same_under_both_runners(tmp_path):
    slices = [Slice("banking", None, ("user_task_0", "user_task_2", "user_task_3", "user_task_5", "user_task_15")),
              Slice("banking", "important_instructions", ("user_task_0", "user_task_3"),
                    ("injection_task_0", "injection_task_1", "injection_task_4")),
              Slice("slack", "tool_knowledge", ("user_task_1", "user_task_4"), ("injection_task_1", "injection_task_3"))]
    their, our, their_requests, our_requests = both(slices, tmp_path, ("banking", "slack"))
    assert len(our) == 15 and compare(our, their) == []
    assert our_requests == their_requests and len(our_requests) > 100
    regraded(tmp_path, our)
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


@pytest.mark.parametrize("defense", ["tool_filter", "spotlighting_with_delimiting", "repeat_user_prompt"])
def test_each_defense_sends_what_agentdojos_defense_sends(defense, tmp_path):
    """AgentDojo's script with --defense and agentbed with --defense, the same imperfect model:
    the same requests (the filter's question, answer and tools; the delimiters and system
    message; the repeated prompt as a user message) and the same scores."""
    slices = [Slice("banking", None, ("user_task_0", "user_task_3", "user_task_5", "user_task_15")),
              Slice("banking", "important_instructions", ("user_task_0", "user_task_3"),
                    ("injection_task_0", "injection_task_4"))]
    their, our, their_requests, our_requests = both(slices, tmp_path, ("banking",), defense=defense)
    assert len(our) == 8 and compare(our, their) == []
    assert our_requests == their_requests and len(our_requests) > 30
    regraded(tmp_path, our)
    for path in (tmp_path / "agentbed").rglob("*.jsonl"):  # the stubs are gone: replayed from the log alone
        assert first_divergence(*rerun(path)) is None, path.name
    bodies = [json.loads(r) for r in our_requests]
    tool_messages = [m for b in bodies for m in b["messages"] if m["role"] == "tool"]
    if defense == "tool_filter":
        asked = [b for b in bodies if b.get("tool_choice") == "none"]
        assert asked and all(b["temperature"] == 0.0 for b in asked)
        assert any(not b.get("tools") for b in bodies)  # a filter that named nothing: no tools at all
        counted = 0
        for path in (tmp_path / "agentbed").rglob("*.jsonl"):  # the filter's tokens are the episode's
            steps = [r for r in read_log(path) if r["type"] == "step"]
            begin = steps[0]["control"]["begin"]
            assert begin["usage_counted"] and steps[0]["usage"]["input_tokens"] > begin["usage"]["input_tokens"]
            counted += 1
        assert counted == 8
    if defense == "spotlighting_with_delimiting":
        assert "<<" in bodies[0]["messages"][0]["content"][0]["text"]  # AgentDojo's system message
        assert any(isinstance(m["content"], list) and m["content"][0]["text"].startswith("<<") for m in tool_messages)
        assert any(isinstance(m["content"], str) for m in tool_messages)  # an error: undelimited
    if defense == "repeat_user_prompt":
        assert any(m["role"] == "user" and i and b["messages"][i - 1]["role"] == "tool"
                   for b in bodies for i, m in enumerate(b["messages"]))


def test_agentbeds_graders_shortcut_reports_what_deepdiff_reports():
    """The shortcut agentbed's side grades under (equal_subtrees) returns DeepDiff's own report for
    an environment against itself and against each of a few changes, and does cut the walk short."""
    from deepdiff import DeepDiff

    pre = pre_environment_of({"suite": "banking", "user_task": "user_task_0", "injections": {}})
    assert equal(pre, pre.model_copy(deep=True))  # its models are ones the shortcut passes over

    def changed(change):
        post = pre.model_copy(deep=True)
        change(post)
        return post

    posts = [changed(lambda e: None),
             changed(lambda e: e.bank_account.transactions.append(e.bank_account.transactions[0].model_copy())),
             changed(lambda e: setattr(e.bank_account.transactions[1], "subject", "Pizza")),
             changed(lambda e: object.__setattr__(e.bank_account.transactions[0], "id", 1.0)),  # int -> float
             changed(lambda e: object.__setattr__(e.bank_account, "balance", int(e.bank_account.balance))),
             changed(lambda e: e.bank_account.scheduled_transactions.reverse()),
             changed(lambda e: object.__setattr__(e.bank_account.transactions[0], "amount", float("nan"))),
             changed(lambda e: e.filesystem.files.pop(next(iter(e.filesystem.files))))]
    reports = [DeepDiff(pre, post, exclude_paths=["root.bank_account.iban"]).to_dict() for post in posts]
    with shortcut():
        assert [DeepDiff(pre, post, exclude_paths=["root.bank_account.iban"]).to_dict() for post in posts] == reports
    assert reports[0] == {} and all(reports[1:])


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
