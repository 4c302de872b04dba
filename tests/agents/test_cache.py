"""The model-call cache through the real LangChain OpenAI client and the loopback server: a rerun
makes no call and writes the same log bytes, a changed request misses, a corrupt or expired entry is
a miss, provider-drawn ids stay out of the key, and concurrent writers never replace each other's entries."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import pytest
from scripted_models import vault_three_calls

from agentbed.agents.cache import CacheWarning, ModelCallCache, parse_duration
from agentbed.agents.chat import ChatAgent
from agentbed.errors import UsageError
from agentbed.log import TrajectoryWriter, read_log
from agentbed.runner import Budget, EpisodeSpec, run_episode
from environments.vault.env import VaultEnv

MODEL = "openai:stub-model"


def run(stub, cache: ModelCallCache | None, log: Path, *, seed: int = 0, epoch: int = 0, **model_kwargs):
    agent = ChatAgent.from_model_string(MODEL, base_url=stub.base_url, api_key="test", seed=seed, **model_kwargs)
    agent.cache, agent.epoch = cache, epoch
    record = run_episode(VaultEnv("open-fast"), agent, EpisodeSpec("vault", "open-fast", f"model:{MODEL}", seed),
                         budget=Budget(max_steps=6), writer=TrajectoryWriter(log))
    assert record.status == "ok" and record.success, record.error
    return read_log(log)


def without_chain(records: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k not in {"hash", "prev"}} for r in records]


def test_a_rerun_makes_no_call_and_writes_the_same_bytes(openai_stub, tmp_path):
    stub = openai_stub(vault_three_calls)
    cache = ModelCallCache(tmp_path / "cache")
    run(stub, cache, tmp_path / "live.jsonl")
    assert stub.served == 3
    run(stub, ModelCallCache(tmp_path / "cache"), tmp_path / "hit1.jsonl")
    assert stub.served == 3, "a cached rerun called the provider"
    assert (tmp_path / "hit1.jsonl").read_bytes() == (tmp_path / "live.jsonl").read_bytes()
    run(stub, ModelCallCache(tmp_path / "cache"), tmp_path / "hit2.jsonl")
    assert (tmp_path / "hit1.jsonl").read_bytes() == (tmp_path / "hit2.jsonl").read_bytes()
    assert stub.served == 3


def test_provider_drawn_ids_are_not_part_of_the_key(openai_stub, tmp_path):
    """The same conversation with other random completion and tool-call ids (each reply's ``ident``)
    reads the same entries: nothing nondeterministic is in the key."""
    import itertools

    draws = itertools.count()

    def fresh_ids(body):
        reply = vault_three_calls(body)
        reply.ident = f"draw{next(draws)}"
        return reply

    stub = openai_stub(fresh_ids)
    run(stub, ModelCallCache(tmp_path / "cache"), tmp_path / "a.jsonl")
    agent_a = ChatAgent.from_model_string(MODEL, base_url=stub.base_url, api_key="test", seed=0)
    agent_b = ChatAgent.from_model_string(MODEL, base_url=stub.base_url, api_key="test", seed=0)
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    for agent, ident in ((agent_a, "x1"), (agent_b, "y9")):
        agent.messages = [HumanMessage("hi"), AIMessage("", id=f"chatcmpl-{ident}", tool_calls=[
            {"name": "get_token", "args": {}, "id": f"call_{ident}", "type": "tool_call"}]),
            ToolMessage("tok", tool_call_id=f"call_{ident}")]
    assert agent_a._cache_key(agent_a.chat_model) == agent_b._cache_key(agent_b.chat_model)


def test_concurrent_writers_keep_the_first_entry_and_the_loser_adopts_it(tmp_path):
    from agentbed.agents.cache import CachedReply

    cache_a, cache_b = ModelCallCache(tmp_path / "cache"), ModelCallCache(tmp_path / "cache")
    first = CachedReply({"type": "ai", "data": {"content": "A"}}, {})
    second = CachedReply({"type": "ai", "data": {"content": "B"}}, {})
    assert cache_a.put("ab" * 32, first) is first
    held = cache_b.put("ab" * 32, second)
    assert held.message == first.message  # never overwritten: the second writer continues with A
    assert cache_a.get("ab" * 32).message == first.message
    assert not list((tmp_path / "cache").rglob("*.tmp"))


@pytest.mark.parametrize("change", [{"seed": 1}, {"epoch": 1}, {"temperature": 0.5}])
def test_a_different_seed_epoch_or_sampling_parameter_misses(openai_stub, tmp_path, change):
    stub = openai_stub(vault_three_calls)
    cache = ModelCallCache(tmp_path / "cache")
    run(stub, cache, tmp_path / "a.jsonl")
    run(stub, cache, tmp_path / "b.jsonl", **change)
    assert stub.served == 6


def test_a_corrupt_entry_is_a_miss_with_a_warning_and_is_replaced(openai_stub, tmp_path):
    stub = openai_stub(vault_three_calls)
    cache = ModelCallCache(tmp_path / "cache")
    run(stub, cache, tmp_path / "a.jsonl")
    entries = sorted((tmp_path / "cache").rglob("*.json"), key=os.path.getmtime)
    assert len(entries) == 3
    entries[0].write_bytes(b'{"format": "agentbed.model-cache/1", "mess')  # torn
    entries[1].write_text(json.dumps({"format": "agentbed.model-cache/1"}))  # fields missing
    with pytest.warns(CacheWarning) as caught:
        run(stub, ModelCallCache(tmp_path / "cache"), tmp_path / "b.jsonl")
    assert len(caught) == 2 and stub.served == 5
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        run(stub, ModelCallCache(tmp_path / "cache"), tmp_path / "c.jsonl")
    assert stub.served == 5


def test_an_expired_entry_is_a_miss(openai_stub, tmp_path):
    stub = openai_stub(vault_three_calls)
    run(stub, ModelCallCache(tmp_path / "cache"), tmp_path / "a.jsonl")
    for entry in (tmp_path / "cache").rglob("*.json"):
        os.utime(entry, (0, os.path.getmtime(entry) - 7200))
    run(stub, ModelCallCache(tmp_path / "cache", expiry=3600), tmp_path / "b.jsonl")
    assert stub.served == 6


def test_durations_parse_and_bad_ones_name_the_flag():
    assert parse_duration("90") == 90 and parse_duration("30m") == 1800 and parse_duration("7d") == 7 * 86400
    assert parse_duration("never") == float("inf")
    with pytest.raises(UsageError, match="--cache-expiry 'soon'"):
        parse_duration("soon")


def test_the_cache_serves_any_langchain_provider_not_only_openai(tmp_path):
    """A provider without the HTTP capture (any other LangChain chat model): the second agent's model
    has no replies left, so only the cache can answer it."""
    from chat_fakes import ToolCallingFakeModel
    from langchain_core.messages import AIMessage

    def play(model: ToolCallingFakeModel, log: Path) -> list[dict]:
        agent = ChatAgent(model, seed=0, model_id="fake:tool-caller")
        agent.cache = ModelCallCache(tmp_path / "cache")
        record = run_episode(VaultEnv("open-fast"), agent, EpisodeSpec("vault", "open-fast", "model:fake", 0),
                             budget=Budget(max_steps=3), writer=TrajectoryWriter(log))
        assert record.status in {"ok", "budget"}, record.error
        return read_log(log)

    call = {"name": "get_token", "args": {}, "id": "c1", "type": "tool_call"}
    replies = [AIMessage(content="", tool_calls=[call], usage_metadata={"input_tokens": 5, "output_tokens": 2,
                                                                       "total_tokens": 7})] * 3
    live = play(ToolCallingFakeModel(responses=replies), tmp_path / "a.jsonl")
    cached = play(ToolCallingFakeModel(responses=[]), tmp_path / "b.jsonl")
    assert without_chain(cached) == without_chain(live)  # the second model has no replies: all from the cache


def test_parameters_bound_to_each_request_are_part_of_the_key(openai_stub, tmp_path):
    stub = openai_stub(vault_three_calls)
    cache = ModelCallCache(tmp_path / "cache")
    agent = ChatAgent.from_model_string(MODEL, base_url=stub.base_url, api_key="test", seed=0)
    agent.cache = cache
    bound = agent.chat_model.bind(seed=1)
    assert agent._cache_key(bound) != agent._cache_key(agent.chat_model.bind(seed=2))
    assert agent._cache_key(bound) == agent._cache_key(agent.chat_model.bind(seed=1))


def _token_first(body):
    """Another provider's answers to the same requests: the token before the logs."""
    steps = sum(1 for m in body["messages"] if m["role"] == "assistant")
    reply = vault_three_calls(body)
    if steps == 0:
        return type(reply)([("get_token", "{}")], content="confidence: 0.5", ident=reply.ident)
    return reply


def test_a_resumed_no_cache_run_takes_no_reply_from_the_cache(openai_stub, tmp_path, monkeypatch):
    """Session 18's probe: ``--no-cache`` was not recorded, so ``--resume`` read the cache: the
    resumed episodes replayed replies another run had left there (in the probe, a run against
    another provider process) and the run differed from the same run made without a crash. It is
    recorded in run.json (``cache: false``) and kept by ``--resume``; ``--resume --cache`` is refused."""
    import agentbed.cli_run
    from agentbed.cli import main

    cache_dir = tmp_path / "cache"
    plan = ["run", "vault", "--task", "open-fast", "--model", MODEL, "--seeds", "3", "--executor", "serial",
            "--quiet", "--cache-dir", str(cache_dir)]
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_stub(_token_first).base_url)
    assert main([*plan, "--out", str(tmp_path / "other")]) == 0  # fills the cache with the other provider's replies
    monkeypatch.setenv("OPENAI_BASE_URL", openai_stub(vault_three_calls).base_url)
    real = agentbed.cli_run.execute

    def stopping(*args, **kw):
        for n, record in enumerate(real(*args, **kw)):
            if n == 1:
                raise KeyboardInterrupt  # killed after one episode
            yield record

    out = tmp_path / "run"
    with monkeypatch.context() as m:
        m.setattr(agentbed.cli_run, "execute", stopping)
        assert main([*plan, "--no-cache", "--out", str(out)]) == 130
    assert json.loads((out / "run.json").read_text())["cache"] is False
    resume = ["run", "vault", "--resume", "--out", str(out), "--quiet", "--cache-dir", str(cache_dir)]
    assert main([*resume, "--cache"]) == 2
    assert main(resume) == 0
    for log in sorted((out / "episodes").glob("*.jsonl")):
        first = next(r for r in read_log(log) if r["type"] == "step")
        assert json.loads(first["action"])["tool"] == "read_logs", log.name  # this provider's answer, not the cache's


def test_two_servers_under_one_model_name_never_share_entries(openai_stub, tmp_path, monkeypatch):
    """Session 18's probe: the key held the client type and the model name, not the server, so two
    local servers serving ``openai:stub-model`` answered each other's requests from the cache. The
    endpoint (the client's base URL, without credentials or query) is in the key, for a model
    given ``base_url`` and for one reached through ``OPENAI_BASE_URL`` (built lazily, from a
    stored request profile); the same server is still a hit."""
    from agentbed.agents.cache import endpoint_of
    from agentbed.cli import main

    first, second = openai_stub(_token_first), openai_stub(vault_three_calls)
    cache = tmp_path / "cache"
    run(first, ModelCallCache(cache), tmp_path / "a.jsonl")
    assert first.served == 3
    records = run(second, ModelCallCache(cache), tmp_path / "b.jsonl")
    assert second.served == 3, "another server's replies were taken from the cache"
    assert json.loads(next(r for r in records if r["type"] == "step")["action"])["tool"] == "read_logs"
    run(first, ModelCallCache(cache), tmp_path / "a2.jsonl")
    assert first.served == 3 and (tmp_path / "a2.jsonl").read_bytes() == (tmp_path / "a.jsonl").read_bytes()

    plan = ["run", "vault", "--task", "open-fast", "--model", MODEL, "--seeds", "1", "--executor", "serial",
            "--quiet", "--cache-dir", str(tmp_path / "env-cache")]
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    for n, stub in enumerate((first, second)):
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        served = stub.served
        assert main([*plan, "--out", str(tmp_path / f"env{n}")]) == 0
        assert stub.served > served, f"the run against {stub.base_url} took another server's replies"
        log = next((tmp_path / f"env{n}" / "episodes").glob("*.jsonl"))
        first_call = json.loads(next(r for r in read_log(log) if r["type"] == "step")["action"])["tool"]
        assert first_call == ("get_token" if stub is first else "read_logs")

    agent = ChatAgent.from_model_string(MODEL, base_url="http://user:secret@LOCALHOST:8080/v1/?key=k", api_key="t")
    assert endpoint_of(agent.chat_model) == "http://localhost:8080/v1"  # no credentials in what is hashed


def _first_attempts_fail(seen):
    """A provider whose first attempt at each conversation fails (HTTP 500), the next one answers:
    every call records one failed attempt, whatever the wall clock does (``seen``: the attempts
    counted so far; clear it for a fresh provider on the same address)."""
    from openai_stub import error
    from scripted_models import request_ident

    def policy(body):
        ident = request_ident(body)
        seen[ident] += 1
        return error(500) if seen[ident] == 1 else vault_three_calls(body)

    return policy


def test_a_resumed_episode_records_its_live_retries_as_an_uninterrupted_one(openai_stub, tmp_path):
    """Session 18's probe asked whether a failed attempt (a timeout) breaks a resumed run's bytes.
    The failed attempts before a reply are stored with it and replayed on a hit, but the backoff
    jitter they drew from the episode's RNG was not: an episode re-run on resume, whose first call
    the killed run had cached and whose next call failed once live, recorded that retry's delay
    from another draw than the uninterrupted run did. A replayed retry now draws as the live one."""
    from collections import Counter

    seen: Counter[str] = Counter()
    stub = openai_stub(_first_attempts_fail(seen))

    def episode(cache: ModelCallCache, log: Path, steps: int) -> list[dict]:
        seen.clear()  # the provider as fresh as for the first run
        agent = ChatAgent.from_model_string(MODEL, base_url=stub.base_url, api_key="test", seed=7)
        agent.cache, agent.sleep = cache, lambda seconds: None
        run_episode(VaultEnv("open-fast"), agent, EpisodeSpec("vault", "open-fast", f"model:{MODEL}", 7),
                    budget=Budget(max_steps=steps), writer=TrajectoryWriter(log))
        return read_log(log)

    whole = episode(ModelCallCache(tmp_path / "c1"), tmp_path / "whole.jsonl", 6)
    delays = [r["delay"] for s in whole if s["type"] == "step" for r in (s.get("model_output") or {}).get("retries", [])]
    assert len(delays) == 3 and len(set(delays)) == 3, whole  # one failed attempt per call, three draws
    episode(ModelCallCache(tmp_path / "c2"), tmp_path / "killed.jsonl", 1)  # killed after its first call
    served = stub.served
    resumed = episode(ModelCallCache(tmp_path / "c2"), tmp_path / "resumed.jsonl", 6)  # call 1 from the cache
    assert stub.served - served == 4  # calls 2 and 3, each failing once
    assert (tmp_path / "resumed.jsonl").read_bytes() == (tmp_path / "whole.jsonl").read_bytes(), \
        [s.get("model_output") for s in resumed if s["type"] == "step"]
