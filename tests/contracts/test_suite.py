"""The suite through the engine: entry point, CLI run with options, the summary and the demo."""

from __future__ import annotations

import json

import pytest

from agentbed.cli import main
from agentbed.suite import get_suite


def test_suite_is_installed_with_its_agents_and_options():
    suite = get_suite("contracts")
    assert {"oracle", "naive", "corrupt-truncate", "corrupt-html-escape"} <= set(suite.agents)
    assert suite.resolve_options({"feedback": "on"}) == {"feedback": "on"}


def test_cli_run_with_feedback_writes_a_summary(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["run", "contracts", "--agent", "naive", "--task", "acme-order", "--task", "jwt-not-before",
                 "--seeds", "2", "--feedback", "on", "--executor", "serial", "--out", str(out), "--quiet"])
    assert code == 0
    summary = json.loads((out / "contracts" / "summary.json").read_text())
    assert summary["episodes"] == 4 and summary["headline"][0]["agent"] == "naive+feedback"
    assert "--feedback on" in summary["command"]


def test_cli_rejects_a_bad_option_value(tmp_path, capsys):
    code = main(["run", "contracts", "--feedback", "maybe", "--out", str(tmp_path / "x"), "--quiet"])
    assert code == 2
    assert "feedback" in capsys.readouterr().err


@pytest.mark.slow
def test_demo_summary_has_every_table_and_the_feedback_difference(tmp_path, monkeypatch):
    import suites.contracts.demo as demo

    # the local model's slices are played in test_local_demo_slice.py, against the real server
    monkeypatch.setattr(demo, "local_model_slices", lambda run_dir: ([], [], "not run: see test_local_demo_slice.py"))
    summary = get_suite("contracts").demo(tmp_path)
    titles = " | ".join(t["title"] for t in summary["tables"])
    for part in ("Pass rate per agent", "Per axis", "Headline label", "Per task", "Feedback mode",
                 "Corruption pipelines", "Vault (built-in world)"):
        assert part in titles
    metrics = {(h["metric"], h["agent"]) for h in summary["headline"]}
    assert ("feedback_gain", "naive") in metrics and ("pass_rate", "oracle") in metrics
    assert summary["figures"] and summary["figures"][0]["svg"].startswith("<svg")
    assert (tmp_path / "contracts" / "summary.json").exists()
    check = {row[0]: row for row in next(t for t in summary["tables"] if "Corruption" in t["title"])["rows"]}
    assert all(row[2] == row[3] and row[4] == 0 for row in check.values())
    found = {f["label"]: f for f in summary["findings"]}
    assert 2 <= len(found) <= 5 and all(f["note"] for f in found.values())
    assert found["work-first (never renews) on renewal tasks"]["value"].startswith("0 of ")
    assert (tmp_path / "contracts" / "results.json").exists()
    vault = {row[0]: row for row in next(t for t in summary["tables"] if "Vault" in t["title"])["rows"]}
    assert {"oracle", "naive", "random"} <= set(vault) and vault["oracle"][1] == 9
    assert vault["oracle"][3].startswith("1.000") and vault["naive"][3] != vault["oracle"][3]
    assert found["local model: contracts tasks; vault tasks"]["value"].startswith("0 of 0 pass; 0 of 0 pass")


def test_the_local_models_process_hands_back_what_it_played(tmp_path, monkeypatch):
    import suites.contracts.demo as demo

    played = ([{"agent": "local"}], [], "played in the child")
    monkeypatch.setattr(demo, "local_model_slices", lambda run_dir: played)
    with demo.local_model_in_background(tmp_path) as wait:
        assert wait() == (list(played[0]), [], "played in the child")


def _waited(wait, seconds=60.0):
    """``wait()`` from a thread of its own; if it has not returned within ``seconds``, the local
    model's process is killed and the test fails: a regression fails here, never waits for ever
    (under pytest-xdist a hung test held the clean-clone .ci/run for 8 minutes, b677ba8)."""
    import multiprocessing
    import threading

    got = []
    waiter = threading.Thread(target=lambda: got.append(wait()), daemon=True)
    waiter.start()
    waiter.join(seconds)
    if waiter.is_alive():
        for child in multiprocessing.active_children():
            if child.name == "contracts-local-model":
                child.kill()
        pytest.fail(f"waited {seconds} s for a local-model process that died before answering")
    return got[0]


@pytest.mark.parametrize("death", ["exits", "is killed", "raises"])
def test_a_local_model_process_that_dies_before_answering_is_a_not_run_line(tmp_path, monkeypatch, death):
    """However it dies (its own exit, SIGKILL as the out-of-memory killer sends, an error that
    escapes the slice), the demo gets a 'not run' line at once."""
    import os
    import signal

    import suites.contracts.demo as demo

    def dies(run_dir):
        if death == "exits":
            os._exit(3)
        if death == "is killed":
            os.kill(os.getpid(), signal.SIGKILL)
        raise SystemExit("the slice broke")  # not an Exception: local_model_slices would not catch it

    monkeypatch.setattr(demo, "local_model_slices", dies)
    with demo.local_model_in_background(tmp_path) as wait:
        contracts, vault, what = _waited(wait)
    assert (contracts, vault) == ([], []) and what == "not run: the local model's process ended before it answered"


@pytest.mark.parametrize("on_sigterm", ["default", "ignored"])
def test_a_block_left_early_ends_the_local_models_process(tmp_path, monkeypatch, on_sigterm):
    """Ended even where the forking process's SIGTERM handler would keep it (under pytest-xdist
    it did, and the block waited for ever)."""
    import multiprocessing
    import signal
    import time

    import suites.contracts.demo as demo

    def forever(run_dir):
        signal.signal(signal.SIGTERM, signal.SIG_DFL if on_sigterm == "default" else signal.SIG_IGN)
        while True:
            time.sleep(0.05)

    monkeypatch.setattr(demo, "local_model_slices", forever)
    monkeypatch.setattr(demo, "STOP_SECONDS", 0.5)
    with pytest.raises(RuntimeError):
        with demo.local_model_in_background(tmp_path):
            raise RuntimeError("the slice failed")
    assert not [p for p in multiprocessing.active_children() if p.name == "contracts-local-model"]
