"""Cost from the provider's usage, through the real OpenAI client and the loopback server: the
price table, the summary, --json, results.json (a gate metric), and the run budgets."""

from __future__ import annotations

import json
import subprocess

import pytest
from scripted_models import vault_three_calls

from agentbed.agents.connections import read_events
from agentbed.cost import Price, PriceTable, episode_cost, load_prices
from agentbed.errors import UsageError
from agentbed.store import read_index
from agentbed.testing import cli_in_process

TOKENS_IN, TOKENS_OUT = 200 + 250 + 300, 3 * 20  # what vault_three_calls reports per episode


@pytest.fixture
def run_cmd(openai_stub, monkeypatch):
    """``agentbed run vault ARGS`` against the loopback server, in this process (no interpreter start
    per command: the same verbs, client and server)."""
    stub = openai_stub(vault_three_calls)
    monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test")

    def run(*args: str) -> subprocess.CompletedProcess:
        return cli_in_process("run", "vault", *args)

    run.stub = stub
    return run


def prices_file(tmp_path, input_usd: float, output_usd: float):
    path = tmp_path / "prices.yaml"
    path.write_text(f"source: test\ndate: '2026-12-01'\nmodels:\n  'openai:stub-*': {{input: {input_usd}, "
                    f"output: {output_usd}}}\n")
    return path


def test_the_table_matches_exact_names_then_the_longest_pattern_and_knows_when_it_does_not_know():
    table = PriceTable({"a:m": Price(1, 2), "a:m-*": Price(3, 4), "a:m-mini-*": Price(5, 6)}, "t", "d")
    assert table.lookup("a:m") == Price(1, 2)
    assert table.lookup("a:m-2025") == Price(3, 4) and table.lookup("a:m-mini-1") == Price(5, 6)
    assert table.lookup("b:other") is None
    assert episode_cost({"model": "b:other", "input_tokens": 10}, table) is None  # unknown, not 0
    shipped = load_prices()
    assert shipped.date and "pricing" in shipped.source
    assert shipped.lookup("openai:gpt-4o-mini-2024-07-18") == Price(0.15, 0.60)


def test_a_bad_price_table_is_a_usage_error_naming_the_field(tmp_path):
    bad = tmp_path / "p.yaml"
    bad.write_text("models:\n  'x:y': {input: cheap, output: 1}\n")
    with pytest.raises(UsageError, match=r"--prices .*p.yaml: models.x:y: needs numbers"):
        load_prices(bad)


def test_cost_per_episode_agent_and_run_in_json_summary_results_and_gate(run_cmd, tmp_path):
    out = tmp_path / "run"
    done = run_cmd("--model", "openai:stub-model", "--task", "open-fast", "--seeds", "4", "--out", str(out), "--json",
                   "--prices", str(prices_file(tmp_path, 2.0, 8.0)))
    assert done.returncode == 0, done.stderr
    cost = json.loads(done.stdout)["cost"]
    per_episode = (TOKENS_IN * 2.0 + TOKENS_OUT * 8.0) / 1e6
    assert cost["total_usd"] == pytest.approx(4 * per_episode)
    (row,) = cost["agents"]
    assert row["cost_per_episode_usd"] == pytest.approx(per_episode) and row["calls"] == 12
    summary = json.loads((out / "vault" / "summary.json").read_text())
    assert any(t["title"] == "Cost per agent" for t in summary["tables"])
    results = json.loads((out / "results.json").read_text())
    (metric,) = [m for m in results["metrics"] if m["metric"] == "cost_usd"]
    assert metric["higher_is_better"] is False and len(metric["values"]) == 4
    gate = cli_in_process("gate", str(out), "--baseline", str(out / "results.json"))
    # with 4 episodes a gate cannot detect any loss: it exits 5, underpowered (issue 47), not a pass
    assert gate.returncode == 5 and "gate: UNDERPOWERED" in gate.stdout, gate.stdout + gate.stderr
    assert "cost_usd: underpowered" in gate.stdout, gate.stdout
    cached = run_cmd("--model", "openai:stub-model", "--task", "open-fast", "--seeds", "4", "--out",
                     str(tmp_path / "again"), "--json", "--prices", str(prices_file(tmp_path, 2.0, 8.0)))
    again = json.loads(cached.stdout)["cost"]
    assert again["total_usd"] == pytest.approx(cost["total_usd"]) and again["agents"][0]["cached_calls"] == 12


def test_a_model_missing_from_the_table_has_an_unknown_price_never_zero(run_cmd, tmp_path):
    done = run_cmd("--model", "openai:stub-model", "--task", "open-fast", "--seeds", "1", "--out",
                   str(tmp_path / "run"), "--json")
    cost = json.loads(done.stdout)["cost"]
    assert cost["total_usd"] is None and cost["unknown_price"] == ["openai:stub-model"]
    refused = run_cmd("--model", "openai:stub-model", "--task", "open-fast", "--out", str(tmp_path / "no"),
                      "--max-cost", "1")
    assert refused.returncode == 2 and "unknown price" in refused.stderr
    assert not (tmp_path / "no").exists()


@pytest.mark.parametrize("limit", [["--max-cost", "1.0"], ["--max-tokens", "1600"]])
def test_a_budget_stops_handing_out_episodes_records_why_and_resume_finishes(run_cmd, tmp_path, limit):
    out = tmp_path / "run"
    prices = str(prices_file(tmp_path, 1000.0, 0.0))  # $0.75 per episode
    stopped = run_cmd("--model", "openai:stub-model", "--task", "open-fast", "--seeds", "10", "--out", str(out),
                      "--max-connections", "1", "-j", "1", "--prices", prices, "--quiet", *limit)
    assert stopped.returncode == 3, stopped.stderr
    assert "--resume" in stopped.stderr
    records = read_index(out / "index.jsonl")
    finished, cut = len(records), sum(r["status"] == "error" for r in records)
    assert 2 <= finished <= 5 and cut >= 1, "the call that could cross the limit is not made; its episode is cut"
    assert all("BudgetExhausted" in r["error"] for r in records if r["status"] == "error")
    (stop,) = [e for e in read_events(out / "events.jsonl") if e["event"] == "budget_stop"]
    assert stop["reason"] == limit[0][2:].replace("-", "_") and stop["episodes_left"] == 10 - finished
    assert stop["episodes_cut"] == cut and f"{cut} cut short" in stopped.stderr
    served = run_cmd.stub.served
    resumed = run_cmd("--out", str(out), "--resume", "--quiet", "--prices", prices)
    assert resumed.returncode == 0, resumed.stderr
    records = read_index(out / "index.jsonl")
    ids = [r["episode_id"] for r in records]
    assert len(ids) == len(set(ids)) == 10 and all(r["status"] == "ok" for r in records)
    # the cut episodes run again whole; the calls they made before the cut come from the cache
    assert 3 * (10 - finished) < run_cmd.stub.served - served <= 3 * (10 - finished + cut)


@pytest.mark.parametrize(("flags", "named"), [(["--max-connections", "0"], "--max-connections"),
                                              (["--cache-expiry", "soon"], "--cache-expiry"),
                                              (["--prices", "/nonexistent/p.yaml"], "--prices"),
                                              (["--max-cost", "-1"], "--max-cost"),
                                              (["--max-tokens", "-5"], "--max-tokens")])
def test_bad_model_options_are_one_line_errors_before_anything_is_recorded(run_cmd, tmp_path, flags, named):
    out = tmp_path / "run"
    done = run_cmd("--model", "openai:stub-model", "--task", "open-fast", "--out", str(out), *flags)
    assert done.returncode == 2 and named in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_max_cost_is_a_cap_per_call_with_many_connections_in_flight(run_cmd, tmp_path):
    """20 episodes, 4 connections, 2 workers: the run pays at most the cap plus one call per
    connection in flight (the dearest call here is $0.30: 300 input tokens at $1000 per 1M), says
    so on the terminal and exits 3, although every episode was handed out before the cap was met."""
    out = tmp_path / "run"
    prices = str(prices_file(tmp_path, 1000.0, 0.0))
    stopped = run_cmd("--model", "openai:stub-model", "--task", "open-fast", "--seeds", "20", "--out", str(out),
                      "--max-connections", "4", "-j", "2", "--prices", prices, "--no-cache", "--max-cost", "2.0",
                      "--json")
    assert stopped.returncode == 3, stopped.stderr
    doc = json.loads(stopped.stdout)
    paid = doc["stopped"]["spent_usd"]
    assert 2.0 - 0.3 <= paid <= 2.0 + 4 * 0.3, paid
    assert doc["cost"]["total_usd"] == pytest.approx(paid)  # no cache: every token was paid
    assert run_cmd.stub.served * 0.3 >= paid and "max_cost" in stopped.stderr + stopped.stdout
