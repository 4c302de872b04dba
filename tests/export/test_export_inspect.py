"""Export to Inspect AI eval logs, read back with Inspect's own reader."""

from __future__ import annotations

import json
import subprocess

import pytest

from agentbed.errors import UsageError
from agentbed.log import read_log
from environments.vault.agents import VaultOracle


def export_inspect(*args, **kwargs):
    """agentbed's Inspect export, imported when a test calls it: its import pulls in inspect-ai (about
    2 s of CPU), which an xdist worker that only collects this file need not pay."""
    from agentbed.export import export_inspect as export

    return export(*args, **kwargs)


def _index(run_dir):
    return [json.loads(line) for line in (run_dir / "index.jsonl").read_text().splitlines()]


def test_one_log_per_suite_and_agent_that_inspect_reads(run_dir, tmp_path, inspect_log):
    paths = export_inspect(run_dir, tmp_path / "out")
    assert sorted(p.name for p in paths) == sorted(f"vault-{a}.eval" for a in
                                                   ("oracle", "naive", "random", "metered", "crashing"))
    records = {r["episode_id"]: r for r in _index(run_dir)}
    for path in paths:
        log = inspect_log.read_eval_log(str(path))
        assert log.status == "success" and log.eval.task == "vault"
        assert len(log.samples) == 4 == log.results.total_samples
        for sample in log.samples:
            record = records[sample.metadata["episode_id"]]
            assert sample.scores["success"].value == (1.0 if record["success"] else 0.0)
            assert sample.scores["labels"].value == (" ".join(record["labels"]) or "none")
            assert sample.metadata["seed"] == record["seed"] and sample.metadata["task"] == record["task"]
        accuracy = log.results.scores[0].metrics["accuracy"].value
        assert accuracy == sum(records[s.metadata["episode_id"]]["success"] for s in log.samples) / 4
        metrics = log.results.scores[0].metrics
        assert metrics["ci95_low"].value <= accuracy <= metrics["ci95_high"].value


def test_conversation_mirrors_the_trajectory(run_dir, tmp_path, inspect_log):
    export_inspect(run_dir, tmp_path / "out")
    log = inspect_log.read_eval_log(str(tmp_path / "out" / "vault-naive.eval"))
    sample = next(s for s in log.samples if s.metadata["task"] == "open-after-chores")
    trajectory = read_log(run_dir / sample.metadata["log"])
    header, steps = trajectory[0], [r for r in trajectory if r["type"] == "step"]
    assert sample.messages[0].role == "user" and sample.messages[0].text == header["observation"]
    assert sample.input == header["observation"]
    pairs = sample.messages[1:]
    assert len(pairs) == 2 * len(steps)
    for step, assistant, tool in zip(steps, pairs[0::2], pairs[1::2], strict=True):
        action = json.loads(step["action"])
        assert assistant.role == "assistant" and assistant.tool_calls[0].function == action["tool"]
        assert assistant.tool_calls[0].arguments == action["arguments"]
        assert tool.role == "tool" and tool.text == step["observation"]
        assert tool.tool_call_id == assistant.tool_calls[0].id
    assert log.eval.model == "agentbed/naive"


def test_malformed_actions_become_text_and_user_observations(run_dir, tmp_path, inspect_log):
    export_inspect(run_dir, tmp_path / "out")
    log = inspect_log.read_eval_log(str(tmp_path / "out" / "vault-random.eval"))
    messages = [m for s in log.samples for m in s.messages]
    raw = [m for m in messages if m.role == "assistant" and not m.tool_calls]
    assert raw and any(m.text == "{not json" for m in raw)
    errors = [m for m in messages if m.role == "tool" and m.error is not None]
    assert errors and all(m.error.type == "parsing" and "invalid_arguments" in m.text for m in errors)
    follow = messages[messages.index(raw[0]) + 1]
    assert follow.role == "user" and "invalid_json" in follow.text


def test_usage_model_and_model_text_are_carried(run_dir, tmp_path, inspect_log):
    export_inspect(run_dir, tmp_path / "out")
    log = inspect_log.read_eval_log(str(tmp_path / "out" / "vault-metered.eval"))
    assert log.eval.model == "openai/gpt-test"
    for sample in log.samples:
        turns = sum(1 for m in sample.messages if m.role == "assistant")
        usage = sample.model_usage["openai/gpt-test"]
        assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (100 * turns, 10 * turns, 110 * turns)
        first = sample.messages[1]
        assert first.text == "thought 1" and first.tool_calls[0].id == "call_1"
    total = log.stats.model_usage["openai/gpt-test"].total_tokens
    assert total == sum(s.model_usage["openai/gpt-test"].total_tokens for s in log.samples)


def test_controller_verdicts_are_kept(tmp_path, inspect_log, make_run, stop_at_second_step):
    run = make_run(tmp_path / "run", controllers={"naive": stop_at_second_step})
    export_inspect(run, tmp_path / "out")
    log = inspect_log.read_eval_log(str(tmp_path / "out" / "vault-naive.eval"))
    sample = next(s for s in log.samples if s.metadata["task"] == "open-fast")
    roles = [m.role for m in sample.messages]
    assert roles == ["user", "assistant", "tool", "assistant"]
    replaced, stopped = sample.messages[1], sample.messages[3]
    assert replaced.tool_calls[0].function == "read_logs" and replaced.metadata["control"]["kind"] == "replace"
    assert stopped.metadata["executed"] is False and stopped.metadata["control"]["kind"] == "stop"
    assert stopped.tool_calls[0].function == "open_vault"  # proposed, never executed
    assert sample.scores["success"].metadata["status"] == "stopped"


def test_bytes_actions_are_shown_escaped(tmp_path, inspect_log, make_run, binary_sender):
    run = make_run(tmp_path / "run", agents={"binary": binary_sender})
    export_inspect(run, tmp_path / "out")
    log = inspect_log.read_eval_log(str(tmp_path / "out" / "vault-binary.eval"))
    first = log.samples[0].messages
    assert first[1].role == "assistant" and not first[1].tool_calls and "\\xff\\xfe" in first[1].text
    assert first[2].role == "user" and "invalid_utf8" in first[2].text


def test_an_agent_that_raises_is_a_scored_failure_carrying_its_traceback(run_dir, tmp_path, inspect_log):
    """An exception inside the agent is a failed attempt, as the run's summary counts it (only a
    provider's or set-up failure is an error, not scored: tests/agents/test_partial_errors.py)."""
    export_inspect(run_dir, tmp_path / "out")
    log = inspect_log.read_eval_log(str(tmp_path / "out" / "vault-crashing.eval"))
    assert all(s.error is None and "agent fell over" in s.metadata["error"] for s in log.samples)
    assert all(s.scores["success"].value == 0.0 and s.scores["labels"].value == "ERROR" for s in log.samples)
    assert log.results.completed_samples == len(log.samples) and log.status == "success"


def test_export_is_deterministic(run_dir, tmp_path, inspect_log):
    first = export_inspect(run_dir, tmp_path / "a")
    second = export_inspect(run_dir, tmp_path / "b")
    for a, b in zip(first, second, strict=True):
        x, y = inspect_log.read_eval_log(str(a)), inspect_log.read_eval_log(str(b))
        assert x.eval.eval_id == y.eval.eval_id
        assert [s.model_dump() for s in x.samples] == [s.model_dump() for s in y.samples]


def test_missing_log_is_a_sample_error_not_a_crash(run_dir, tmp_path, inspect_log):
    victim = _index(run_dir)[0]
    (run_dir / victim["log"]).unlink()
    export_inspect(run_dir, tmp_path / "out")
    log = inspect_log.read_eval_log(str(tmp_path / "out" / f"vault-{victim['agent']}.eval"))
    sample = next(s for s in log.samples if s.metadata["episode_id"] == victim["episode_id"])
    assert sample.error is not None and "cannot read" in sample.error.message


def test_bad_run_dirs_are_usage_errors(tmp_path):
    with pytest.raises(UsageError, match="no-such"):
        export_inspect(tmp_path / "no-such", tmp_path / "out")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="no index.jsonl and no episode logs"):
        export_inspect(tmp_path / "empty", tmp_path / "out")
    (tmp_path / "bad").mkdir()
    good = {"episode_id": "a", "suite": "vault", "task": "t", "agent": "a", "seed": 0, "status": "ok", "success": True}
    (tmp_path / "bad" / "index.jsonl").write_text(json.dumps(good) + '\n{oops\n' + json.dumps(good) + "\n")
    with pytest.raises(UsageError, match="line 2 is not JSON"):
        export_inspect(tmp_path / "bad", tmp_path / "out")


def test_logs_without_an_index_are_exported(run_dir, tmp_path, inspect_log):
    # a folder no manifest seals, as workloads that write no index leave (a sealed run's other
    # folders are not the run's: tests/report/test_report_unsealed.py)
    (run_dir / "manifest.json").unlink(missing_ok=True)
    workload = run_dir / "vault-copy" / "episodes"
    workload.mkdir(parents=True)
    for log in sorted((run_dir / "episodes").glob("*oracle*.jsonl")):
        (workload / log.name).write_bytes(log.read_bytes())
        log.unlink()
    (run_dir / "index.jsonl").unlink()
    paths = export_inspect(run_dir, tmp_path / "out")  # the other agents' logs stay in RUN_DIR/episodes
    assert len(paths) == 5
    log = inspect_log.read_eval_log(str(tmp_path / "out" / "vault-oracle.eval"))
    assert len(log.samples) == 4 and all(s.metadata["log"].startswith("vault-copy/episodes/") for s in log.samples)
    assert sum(s.scores["success"].value for s in log.samples) == 4


@pytest.mark.slow
def test_cli_export(run_dir, tmp_path, agentbed_cmd, inspect_log):
    result = subprocess.run([*agentbed_cmd, "export", str(run_dir), "--format", "inspect", "--out",
                             str(tmp_path / "out")], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    paths = result.stdout.split()
    assert len(paths) == 5 and all(inspect_log.read_eval_log(p).samples for p in paths)


def test_every_agent_is_its_own_task_and_each_run_its_own(run_dir, tmp_path, inspect_log, make_run):
    """inspect view groups logs by task id: one per (suite, agent, run), so no agent hides another."""
    logs = [inspect_log.read_eval_log(str(p)) for p in export_inspect(run_dir, tmp_path / "a")]
    assert len({log.eval.task_id for log in logs}) == len(logs) == 5
    assert {log.eval.task_display_name for log in logs} == {f"vault ({a})" for a in
                                                           ("oracle", "naive", "random", "metered", "crashing")}
    other = make_run(tmp_path / "other", agents={"oracle": VaultOracle})
    (other / "run.json").write_text(json.dumps({"command": "another run"}))
    [again] = [inspect_log.read_eval_log(str(p)) for p in export_inspect(other, tmp_path / "b")]
    oracle = next(log for log in logs if log.eval.solver == "agentbed/oracle")
    assert again.eval.task_id != oracle.eval.task_id and again.eval.run_id != oracle.eval.run_id


def test_seeds_are_epochs_of_one_sample_per_task(run_dir, tmp_path, inspect_log):
    export_inspect(run_dir, tmp_path / "out")
    log = inspect_log.read_eval_log(str(tmp_path / "out" / "vault-oracle.eval"))
    assert log.eval.config.epochs == 2
    assert sorted(log.eval.dataset.sample_ids) == ["open-after-chores", "open-fast"]
    assert log.eval.dataset.samples == 2
    pairs = {(s.id, s.epoch): s.metadata["seed"] for s in log.samples}
    assert pairs == {(t, e): s for t in ("open-fast", "open-after-chores") for e, s in ((1, 0), (2, 1))}


def test_samples_carry_model_and_tool_events(run_dir, tmp_path, inspect_log):
    export_inspect(run_dir, tmp_path / "out")
    log = inspect_log.read_eval_log(str(tmp_path / "out" / "vault-metered.eval"), resolve_attachments=True)
    sample = log.samples[0]
    trajectory = read_log(run_dir / sample.metadata["log"])
    steps = [r for r in trajectory if r["type"] == "step"]
    kinds = [e.event for e in sample.events]
    assert kinds[0] == "sample_init" and kinds[-1] == "score"
    models = [e for e in sample.events if e.event == "model"]
    tools = [e for e in sample.events if e.event == "tool"]
    assert len(models) == len(tools) == len(steps)
    for n, (model, tool, step) in enumerate(zip(models, tools, steps, strict=True), start=1):
        assert model.model == "openai/gpt-test" and model.output.usage.input_tokens == 100
        assert model.output.message.text == f"thought {n}"
        assert model.input[-1].text == (trajectory[0]["observation"] if n == 1 else steps[n - 2]["observation"])
        assert {t.name for t in model.tools} == {t["name"] for t in trajectory[0]["tools"]}
        action = json.loads(step["action"])
        assert (tool.function, tool.arguments, tool.result) == (action["tool"], action["arguments"],
                                                               step["observation"])
    times = [e.timestamp for e in sample.events]
    assert times == sorted(times)
    assert sample.events[-1].score.value == sample.scores["success"].value


def test_verdicts_and_errors_are_events(tmp_path, inspect_log, make_run, stop_at_second_step, run_dir):
    run = make_run(tmp_path / "controlled", controllers={"naive": stop_at_second_step})
    export_inspect(run, tmp_path / "out")
    log = inspect_log.read_eval_log(str(tmp_path / "out" / "vault-naive.eval"))
    sample = next(s for s in log.samples if s.metadata["task"] == "open-fast")
    approvals = [e for e in sample.events if e.event == "approval"]
    assert [a.decision for a in approvals] == ["modify", "terminate"]
    assert approvals[0].modified.function == "read_logs" and approvals[0].explanation == "read first"
    assert approvals[1].call.function == "open_vault"
    export_inspect(run_dir, tmp_path / "crash")
    crashed = inspect_log.read_eval_log(str(tmp_path / "crash" / "vault-crashing.eval"))
    errors = [e for s in crashed.samples for e in s.events if e.event == "error"]
    assert len(errors) == len(crashed.samples) and all("agent fell over" in e.error.message for e in errors)
