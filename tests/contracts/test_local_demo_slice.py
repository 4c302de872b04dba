"""The demo's local-model slices against the real llama.cpp server: the contracts tasks and the
vault's default tasks are played, logged and shown beside the scripted agents. Asserts on the
pipeline, never on the score."""

from __future__ import annotations

import pytest

from agentbed.log import verify_log
from suites.contracts.demo import LOCAL_AGENT, LOCAL_TASKS, local_model_slices
from suites.vault import demo as vault_demo

pytestmark = [pytest.mark.local_model, pytest.mark.timeout(1800)]


def test_the_demo_plays_the_local_model_on_contracts_and_vault_tasks(local_model_installed, tmp_path):
    # the slice starts its own server (as the demo does): the session's would only sit beside it
    contracts, vault, what = local_model_slices(tmp_path)
    assert not what.startswith("not run"), what
    assert [r["task"] for r in contracts] == list(LOCAL_TASKS)
    assert [r["task"] for r in vault] == vault_demo.default_tasks()
    for record, run_dir in [(r, tmp_path) for r in contracts] + [(r, tmp_path / "vault") for r in vault]:
        assert record["agent"] == LOCAL_AGENT and record["status"] != "error", record.get("error")
        assert record["tokens"] > 0  # the server answered
        assert verify_log(run_dir / "episodes" / f"{record['episode_id']}.jsonl").ok
    assert (tmp_path / "local-model-server.log").exists()  # the slice's own server, logged in the run
    table, _ = vault_demo.pass_table(vault, note="")
    assert [row[0] for row in table["rows"]] == [LOCAL_AGENT] and table["rows"][0][1] == 3
