"""A model that errors on some of its episodes and not others (the realistic middle between every
call succeeding and every call failing): results.json, the summary, verify, the gate, resume and
the progress line agree on which episodes count, through the real OpenAI client and the loopback
server."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from openai_stub import OpenAIStub, Reply, error
from scripted_models import request_ident, vault_three_calls

from agentbed.agents.retry import Backoff
from agentbed.cli import main
from agentbed.problems import classify, final_error, is_errored
from agentbed.results import errored_units, without_units

AGENTS = ["--agent", "oracle", "--model", "openai:stub-a", "--model", "openai:stub-b"]


@contextmanager
def serving(monkeypatch, policy: Callable) -> Iterator[OpenAIStub]:
    """The loopback provider answering by ``policy``, as the OpenAI client's endpoint, with retries
    that do not wait."""
    server = OpenAIStub(policy)
    server.start()
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setattr(Backoff, "delay", lambda self, attempt, rng, retry_after=None: 0.0)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def provider(monkeypatch):
    """A provider whose model ``stub-b`` fails (HTTP 500 on every retry) the requests whose
    conversation hashes under 0.3, while ``failing`` is set: some of its episodes error, the rest
    play vault in three calls, whatever order the requests arrive in."""
    failing = {"on": True}

    def policy(body):
        doomed = random.Random(request_ident(body)).random() < 0.3
        if failing["on"] and body["model"] == "stub-b" and doomed:
            return error(500)
        return vault_three_calls(body)

    with serving(monkeypatch, policy):
        yield failing


def run(*args: str) -> int:
    return main(["run", "vault", "--task", "open-fast", "--no-cache", "--executor", "serial", "--quiet", *args])


def test_a_partial_mix_verifies_gates_with_allow_errors_and_resumes(provider, tmp_path, capsys):
    base, out = tmp_path / "base", tmp_path / "run"
    provider["on"] = False
    assert run(*AGENTS, "--seeds", "6", "--out", str(base)) == 0
    provider["on"] = True
    assert run(*AGENTS, "--seeds", "6", "--out", str(out)) == 4
    records = [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines()]
    bad = [r for r in records if is_errored(r)]
    assert 0 < len(bad) < 6 and {r["agent"] for r in bad} == {"model:openai:stub-b"}, "the seed's mix changed"
    results = json.loads((out / "results.json").read_text())
    summary = json.loads((out / "vault" / "summary.json").read_text())
    assert results["errored_episodes"] == summary["errors"]["episodes"] == len(bad)
    assert results["errored_units"] == {"vault/model:openai:stub-b": sorted(f"{r['task']}/{r['seed']}" for r in bad)}
    values = {m["agent"]: m["values"] for m in results["metrics"] if m["metric"] == "success"}
    assert len(values["model:openai:stub-b"]) == 6 - len(bad) and len(values["oracle"]) == 6
    capsys.readouterr()

    assert main(["verify", str(out)]) == 0, capsys.readouterr().out
    assert main(["gate", str(out), "--baseline", str(base / "results.json")]) == 1
    assert f"{len(bad)} of 18 episodes errored (server_error {len(bad)})" in capsys.readouterr().out
    assert main(["gate", str(out), "--baseline", str(base / "results.json"), "--allow-errors", "5",
                 "--allow-underpowered", "--json"]) == 0  # 6 tasks: no gate could see a small loss
    doc = json.loads(capsys.readouterr().out)
    assert doc["left_out"] == doc["errored_episodes"] == len(bad)
    assert "compared only episodes scored on both sides" in doc["reason"]
    assert {r["agent"]: r["units"] for r in doc["rows"]}["model:openai:stub-b"] == 6 - len(bad)

    provider["on"] = False
    assert run("--resume", "--retry-errors", "--out", str(out)) == 0
    assert f"{len(bad)} errored episodes set aside" in capsys.readouterr().err
    assert main(["verify", str(out)]) == 0
    assert main(["gate", str(out), "--baseline", str(base / "results.json"), "--allow-underpowered"]) == 0


def test_the_summary_pairs_only_episodes_both_agents_scored(provider, tmp_path):
    out = tmp_path / "run"
    assert run(*AGENTS, "--seeds", "6", "--out", str(out), "--reference", "model:openai:stub-b") == 4
    records = [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines()]
    scored_b = sum(1 for r in records if r["agent"] == "model:openai:stub-b" and not is_errored(r))
    summary = json.loads((out / "vault" / "summary.json").read_text())
    pairs = {h["agent"]: h["n"] for h in summary["headline"] if h["metric"] == "success_minus_reference"}
    assert pairs == {"oracle": scored_b, "model:openai:stub-a": scored_b}


def test_the_kind_of_a_failure_is_that_of_its_last_error():
    note = "agentbed: provider call failed after 3 attempt(s): RateLimitError (HTTP 429); RateLimitError (HTTP 429)"
    text = ("Traceback (most recent call last):\n  File \"x.py\", line 1, in f\n    call()\n"
            "openai.RateLimitError: Error code: 429\n\nThe above exception was the direct cause of the following"
            " exception:\n\nTraceback (most recent call last):\n  File \"y.py\", line 2, in g\n"
            "langchain_openai.chat_models.base.OpenAIAPIError: Error code: 500 - boom\n" + note + "; (HTTP 500)\n")
    assert classify(text).name == "server_error"
    assert "429" not in final_error(text)
    assert classify("agentbed.agents.retry.BadResponse: HTTP 200 whose body is not JSON").name == "bad_response"


def test_the_gate_leaves_out_exactly_the_errored_units_of_each_agent():
    records = [{"suite": "s", "agent": "a", "task": "t", "seed": 0, "status": "error",
                "error": "openai.InternalServerError: Error code: 503"},
               {"suite": "s", "agent": "a", "task": "t", "seed": 1, "status": "ok", "success": True},
               {"suite": "s", "agent": "b", "task": "t", "seed": 0, "status": "error",
                "error": "ValueError: the world broke"}]  # raised inside the world: a failed attempt, scored
    units = errored_units(records)
    assert units == {"s/a": ["t/0"]}
    baseline = {"metrics": [{"suite": "s", "agent": "a", "metric": "success", "values": {"t/0": 1.0, "t/1": 1.0}},
                            {"suite": "s", "agent": "b", "metric": "success", "values": {"t/0": 1.0}}]}
    trimmed, left_out = without_units(baseline, units)
    assert left_out == 1 and trimmed["metrics"][0]["values"] == {"t/1": 1.0}
    assert trimmed["metrics"][1] == baseline["metrics"][1]


def test_the_inspect_export_leaves_errored_samples_unscored(provider, tmp_path):
    """Inspect's own reader: a model whose every episode errored gives a log with status error and
    no score; a partly errored one is scored over the rest; the system prompt is the first message."""
    from inspect_ai.log import read_eval_log

    out = tmp_path / "run"
    assert run(*AGENTS, "--seeds", "6", "--out", str(out)) == 4
    records = [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines()]
    assert main(["export", str(out), "--format", "inspect"]) == 0
    logs = {log.eval.metadata["agent"]: log for log in map(read_eval_log, map(str, (out / "inspect").glob("*.eval")))}
    b = logs["model:openai:stub-b"]
    bad = sum(1 for r in records if r["agent"] == "model:openai:stub-b" and is_errored(r))
    assert sum(s.error is not None for s in b.samples) == bad and all(not s.scores for s in b.samples if s.error)
    assert b.results.completed_samples == b.results.scores[0].scored_samples == 6 - bad
    assert b.status == "success" and logs["oracle"].status == "success"
    assert b.samples[0].messages[0].role == "system" and b.samples[0].input == b.samples[0].messages[1].text


def test_a_log_whose_every_sample_errored_has_status_error(monkeypatch, tmp_path):
    from inspect_ai.log import read_eval_log

    server = OpenAIStub(lambda body: error(503))
    server.start()
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setattr(Backoff, "delay", lambda self, attempt, rng, retry_after=None: 0.0)
    try:
        out = tmp_path / "run"
        assert run("--model", "openai:stub-a", "--seeds", "2", "--out", str(out)) == 4
    finally:
        server.stop()
    assert main(["export", str(out), "--format", "inspect"]) == 0
    (log,) = [read_eval_log(str(p)) for p in (out / "inspect").glob("*.eval")]
    assert log.status == "error" and log.error is not None and log.results.completed_samples == 0
    assert all(s.error is not None and not s.scores for s in log.samples)
    from agentbed.report.plots import success_heatmap

    svg = success_heatmap([json.loads(line) for line in (out / "index.jsonl").read_text().splitlines()])
    assert "not scored: 2 errored" in svg and "succeeded" not in svg  # never drawn as a failure


def test_the_report_draws_every_agent_and_every_paired_row(provider, tmp_path):
    from agentbed.report.render import render_run

    out = tmp_path / "run"
    assert run(*AGENTS, "--seeds", "6", "--out", str(out), "--reference", "oracle") == 4
    path, _ = render_run(out, None)
    html = path.read_text()
    for agent in ("oracle", "model:openai:stub-a", "model:openai:stub-b"):
        assert f"pass_rate {agent}" in html
    for agent in ("model:openai:stub-a", "model:openai:stub-b"):
        assert f"success_minus_reference {agent}, oracle" in html
    assert "errored (not scored)" in html


@pytest.mark.parametrize("answer", [error(402), error(418), error(451),
                                    Reply(raw=b'{"choices": [{"index": 0, "message": {"role": "assistant", '
                                              b'"content": 5}}]}')],
                         ids=["402", "418", "451", "content-not-text"])
def test_a_provider_error_agentbed_has_no_name_for_is_errored_not_scored(answer, monkeypatch, tmp_path, capsys):
    """Session 17's probe: a provider answering a status no kind names (402 for an exhausted quota,
    418, 451) or a completion its client cannot build (a content of the wrong type) made the
    episode a failed attempt of the model, a score, and the run exit 0. It is an errored episode
    of kind ``provider`` on every count, and --retry-errors runs it again."""
    failing = {"on": True}

    def policy(body):
        if failing["on"] and sum(m["role"] == "assistant" for m in body["messages"]) == 1:
            return answer
        return vault_three_calls(body)

    out = tmp_path / "run"
    with serving(monkeypatch, policy):
        assert run("--model", "openai:stub-a", "--seeds", "2", "--out", str(out)) == 4
        records = [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines()]
        assert all(is_errored(r) and classify(r["error"]).name == "provider" for r in records), records
        summary = json.loads((out / "vault" / "summary.json").read_text())
        assert summary["errors"]["episodes"] == 2 and summary["errors"]["problems"][0]["kind"] == "provider"
        failing["on"] = False
        capsys.readouterr()
        assert main(["run", "vault", "--resume", "--retry-errors", "--out", str(out), "--quiet"]) == 0
        assert "2 errored episodes set aside" in capsys.readouterr().err
        assert main(["verify", str(out)]) == 0


def test_an_errors_example_line_carries_no_terminal_control():
    """Session 17's probe: an agent's exception message with NUL and U+202E (and so any escape
    sequence a provider sends back) was printed raw in the run's problems block."""
    from agentbed.problems import last_line

    line = last_line("Traceback (most recent call last):\nValueError: \x1b]8;;http://x\x07link\x1b[2J NUL\x00 \u202eevil é")
    assert line == "ValueError: \\x1b]8;;http://x\\x07link\\x1b[2J NUL\\x00 \\u202eevil é"
    assert all(c.isprintable() for c in line)


def _traceback_of(exc: BaseException) -> str:
    import traceback

    try:
        raise exc
    except BaseException as raised:  # noqa: BLE001
        return "".join(traceback.format_exception(raised))


def test_an_exception_group_is_read_through_its_box():
    """Session 17's probe: a provider's error inside an exception group (an async SDK's task group
    raises one) was kind ``other``, a failed attempt of the model, even with the provider note, and
    its example line was the box's last rule ``+------``."""
    from agentbed.problems import PROVIDER_NOTE, last_line

    grouped = _traceback_of(ExceptionGroup("unhandled errors in a TaskGroup", [ConnectionError("refused")]))
    assert classify(grouped).name == "connection" and is_errored({"status": "error", "error": grouped})
    assert last_line(grouped) == "ConnectionError: refused"
    nested = _traceback_of(ExceptionGroup("outer", [ExceptionGroup("inner", [TimeoutError("slow")])]))
    assert classify(nested).name == "timeout"
    noted = ExceptionGroup("x", [KeyError("k")])
    noted.add_note(PROVIDER_NOTE)
    assert classify(_traceback_of(noted)).name == "provider"
    assert classify(_traceback_of(ExceptionGroup("x", [KeyError("k")]))).name == "other"  # an agent's own
