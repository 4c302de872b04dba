"""The viewer's JSON API over real run directories: lists, filters, transcripts, bad files, the
token, following a run as it grows."""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path

import pytest

from agentbed.errors import UsageError
from agentbed.view.server import ViewServer, check_binding

from .conftest import serve


def test_runs_list_names_suite_agents_counts_and_seal(client):
    status, doc = client.get("/api/runs")
    assert status == 200
    (run,) = doc["runs"]
    assert run["id"] == "vault-a" and run["suite"] == "vault" and run["agents"] == ["oracle", "naive"]
    assert run["finished"] == run["planned"] == 12 and sum(run["counts"].values()) == 12
    assert run["errors"] == 0 and run["seal"].startswith("sealed") and not run["live"]


def test_run_page_has_plots_facets_and_filters(client):
    status, doc = client.get("/api/run?run=vault-a")
    assert status == 200
    assert doc["forest"].startswith("<svg") and "pass_rate" in doc["forest"]
    assert doc["heatmap"].count('class="cell"') == 6  # 2 agents x 3 tasks
    assert doc["facets"]["agent"] == ["naive", "oracle"]
    _, all_rows = client.get("/api/episodes?run=vault-a")
    _, naive_failed = client.get("/api/episodes?run=vault-a&agent=naive&success=false")
    _, searched = client.get("/api/episodes?run=vault-a&q=open-fast.oracle")
    _, labelled = client.get("/api/episodes?run=vault-a&label=EXPIRED_BEFORE_USE")
    assert all_rows["total"] == all_rows["matched"] == 12
    assert naive_failed["matched"] == 4 and {r["agent"] for r in naive_failed["rows"]} == {"naive"}
    assert [r["id"] for r in searched["rows"]] == ["vault.open-fast.oracle.s0", "vault.open-fast.oracle.s1"]
    assert labelled["matched"] == naive_failed["matched"]


def test_episode_transcript_shows_tool_calls_observations_and_verdict(client):
    status, doc = client.get("/api/episode?run=vault-a&episode=vault.open-after-chores.oracle.s0")
    assert status == 200 and doc["check"] == "verified"
    steps = doc["transcript"]["steps"]
    assert [s["tool_call"]["tool"] for s in steps][-1] == "open_vault"
    assert steps[0]["observation"] and all(isinstance(s["clock"], float) for s in steps)
    assert doc["transcript"]["footer"]["status"] == "ok" and doc["transcript"]["footer"]["labels"] == ["SUCCESS"]
    _, replay = client.get("/api/replay?run=vault-a&episode=vault.open-after-chores.oracle.s0")
    assert replay == {"identical": True, "records": len(steps) + 2}


def test_a_changed_log_shows_as_a_diff_on_replay(client, runs_root):
    log = runs_root / "vault-a" / "episodes" / "vault.open-fast.oracle.s0.jsonl"
    lines = log.read_text().splitlines()
    record = json.loads(lines[1])
    record["observation"] = "tampered"
    lines[1] = json.dumps(record, separators=(",", ":"))
    log.write_text("\n".join(lines) + "\n")
    _, doc = client.get("/api/episode?run=vault-a&episode=vault.open-fast.oracle.s0")
    assert doc["check"].startswith("record 2")
    _, replay = client.get("/api/replay?run=vault-a&episode=vault.open-fast.oracle.s0")
    assert not replay["identical"] and replay["field"] == "step.observation"
    assert replay["recorded"]["observation"] == "tampered" != replay["replayed"]["observation"]


def test_bad_and_half_written_files_are_messages_not_crashes(client, runs_root):
    run = runs_root / "vault-a"
    with open(run / "index.jsonl", "ab") as fh:
        fh.write(b'{"episode_id": "x", "suite": 3}\n{"episode_id": "torn", "su')  # a bad line, a torn one
    (run / "episodes" / "vault.open-fast.oracle.s0.jsonl").write_bytes(b"\x00\xffnot json\n")
    (runs_root / "broken").mkdir()
    (runs_root / "broken" / "run.json").write_text("{nope")
    status, doc = client.get("/api/runs")
    assert status == 200 and {r["id"] for r in doc["runs"]} == {"vault-a", "broken"}
    _, page = client.get("/api/run?run=vault-a")
    messages = " ".join(p["message"] for p in page["problems"])
    assert "line 13: field" in messages and "episode left out" in messages and "torn" not in messages
    status, ep = client.get("/api/episode?run=vault-a&episode=vault.open-fast.oracle.s0")
    assert status == 200 and ep["transcript"] is None and "not UTF-8" in ep["problems"][0]
    _, broken = client.get("/api/run?run=broken")
    assert "not valid JSON" in broken["problems"][0]["message"]
    with open(run / "index.jsonl", "ab") as fh:  # the torn line is finished: it is read now
        fh.write(b'ite": "vault"}\n')
    _, page = client.get("/api/run?run=vault-a")
    assert any("line 14" in p["message"] for p in page["problems"])
    assert client.get("/api/nothing")[0] == 404 and client.get("/api/run?run=nope")[0] == 404


def test_a_run_started_after_the_viewer_appears_with_its_running_episodes(runs_root, vault_run):
    for client in serve(runs_root):
        assert len(client.get("/api/runs")[1]["runs"]) == 1
        live = runs_root / "vault-b"
        (live / "episodes").mkdir(parents=True)
        shutil.copy(vault_run / "run.json", live / "run.json")
        source = (vault_run / "episodes" / "vault.long-chores.naive.s0.jsonl").read_bytes().splitlines(True)
        target = live / "episodes" / "vault.long-chores.naive.s0.jsonl"
        target.write_bytes(b"".join(source[:4]))  # header and three steps, no footer: running
        _, doc = client.get("/api/runs")
        run = next(r for r in doc["runs"] if r["id"] == "vault-b")
        assert run["live"] and run["counts"] == {"running": 1} and run["finished"] == 0
        _, ep = client.get("/api/episode?run=vault-b&episode=vault.long-chores.naive.s0")
        assert ep["check"] == "running (no footer yet)" and len(ep["transcript"]["steps"]) == 3
        with open(target, "ab") as fh:
            fh.write(b"".join(source[4:6]))
        _, ep = client.get("/api/episode?run=vault-b&episode=vault.long-chores.naive.s0")
        assert len(ep["transcript"]["steps"]) == 5


def test_non_loopback_needs_a_token_and_every_request_carries_it(runs_root):
    with pytest.raises(UsageError, match="needs --token"):
        check_binding("0.0.0.0", None)
    check_binding("::1", None)
    check_binding("localhost", None)
    for client in serve(runs_root, token="s3cret"):
        assert client.get("/api/runs")[0] == 401
        assert client.get("/")[0] == 401
        assert client.get("/api/runs?token=s3cret")[0] == 200
        assert client.get("/api/runs", headers={"X-Agentbed-Token": "s3cret"})[0] == 200
        assert client.server.url.endswith("?token=s3cret")


def test_etag_answers_an_unchanged_poll_with_304(client):
    import urllib.error
    import urllib.request

    with urllib.request.urlopen(client.base + "/api/runs") as resp:
        etag = resp.headers["ETag"]
    request = urllib.request.Request(client.base + "/api/runs", headers={"If-None-Match": etag})
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request)
    assert caught.value.code == 304


def test_the_viewer_writes_nothing_into_a_run(client, runs_root):
    def snapshot() -> dict[str, tuple[int, int]]:
        return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in runs_root.rglob("*")}

    before = snapshot()
    for path in ("/api/runs", "/api/run?run=vault-a", "/api/episodes?run=vault-a",
                 "/api/episode?run=vault-a&episode=vault.open-fast.naive.s0",
                 "/api/replay?run=vault-a&episode=vault.open-fast.naive.s0", "/", "/app.js"):
        assert client.get(path)[0] == 200
    assert snapshot() == before


def test_cli_view_refuses_bad_arguments(tmp_path, capsys):
    from agentbed.cli import main

    assert main(["view", str(tmp_path / "missing")]) == 2
    assert main(["view", str(tmp_path), "--host", "0.0.0.0"]) == 2
    assert "needs --token" in capsys.readouterr().err


def test_a_run_index_read_incrementally_keeps_up_with_appends(tmp_path, vault_run):
    from agentbed.view.catalog import IndexTail

    lines = (vault_run / "index.jsonl").read_bytes().splitlines(True)
    index = tmp_path / "index.jsonl"
    index.write_bytes(b"".join(lines[:5]) + lines[5][:20])
    tail = IndexTail()
    tail.follow(index)
    assert len(tail.records) == 5 and not tail.problems
    with open(index, "ab") as fh:
        fh.write(lines[5][20:] + b"".join(lines[6:]))
    tail.follow(index)
    assert len(tail.records) == len(lines) and not tail.problems
    index.write_bytes(lines[0])  # rewritten shorter (--resume cut it): read again from the start
    tail.follow(index)
    assert len(tail.records) == 1


def test_viewer_threads_do_not_leak_between_servers(runs_root):
    before = threading.active_count()
    for client in serve(runs_root):
        client.get("/api/runs")
    time.sleep(0.1)
    assert threading.active_count() <= before + 1
    assert isinstance(ViewServer, type) and Path(__file__).exists()


def test_the_fast_index_check_is_never_looser_than_the_schema(vault_run):
    import jsonschema

    from agentbed.schemas import INDEX_RECORD_SCHEMA
    from agentbed.view.fastcheck import compile_simple

    fast = compile_simple(INDEX_RECORD_SCHEMA)
    good = json.loads((vault_run / "index.jsonl").read_text().splitlines()[0])
    variants = [good, {**good, "seed": True}, {**good, "seed": 1.0}, {**good, "episode_id": ""},
                {**good, "labels": ["a", 1]}, {**good, "error": None}, {**good, "error": 3}, {**good, "extra": [1]},
                {k: v for k, v in good.items() if k != "task"}, {**good, "metrics": []}, [good], "text", None]
    for record in variants:
        if fast(record):
            assert jsonschema.Draft202012Validator(INDEX_RECORD_SCHEMA).is_valid(record), record
    assert fast(good) and not fast({**good, "seed": True}) and not fast({**good, "episode_id": ""})
    assert compile_simple({"oneOf": [{"type": "string"}]}) is None  # anything else: the full check


def test_branches_from_an_episode_show_as_a_tree_of_checkpoints(client, runs_root):
    from agentbed.cli import main

    log = runs_root / "vault-a" / "episodes" / "vault.long-chores.naive.s0.jsonl"
    assert main(["branch", str(log), "--at", "2", "--agents", "oracle,naive"]) == 0
    assert main(["branch", str(log), "--at", "4", "--agents", "oracle"]) == 0
    _, doc = client.get("/api/episode?run=vault-a&episode=vault.long-chores.naive.s0")
    tree = doc["tree"]["checkpoints"]
    assert [c["at_step"] for c in tree] == [2, 4]
    assert sorted(b["agent"] for b in tree[0]["branches"]) == ["naive@2", "oracle@2"]
    assert all(b["check"] == "verified" for c in tree for b in c["branches"])
    outcome = {b["agent"]: (b["status"], b["success"]) for c in tree for b in c["branches"]}
    assert outcome["oracle@2"] == ("ok", True) and outcome["oracle@4"] == ("ok", True)
    assert outcome["naive@2"] == ("error", False)  # the naive agent cannot take over mid-episode
    _, runs = client.get("/api/runs")
    assert runs["runs"][0]["episodes"] == 12  # branch logs are not episodes of the run


def test_the_view_command_prints_its_url_serves_and_stops_on_ctrl_c(runs_root, agentbed_cmd):
    import signal
    import subprocess
    import urllib.request

    proc = subprocess.Popen([*agentbed_cmd, "view", str(runs_root), "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("agentbed view: http://127.0.0.1:"), line
        url = line.split()[2]
        with urllib.request.urlopen(url + "api/runs", timeout=30) as resp:
            assert json.loads(resp.read())["runs"][0]["id"] == "vault-a"
        with urllib.request.urlopen(url, timeout=30) as resp:
            page = resp.read().decode()
        assert '<script src="/app.js">' in page and "http" not in page.replace(url, "")  # nothing from elsewhere
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err


def test_the_runs_list_folds_what_the_run_page_lists(runs_root, vault_run):
    """The runs list's line (rows folded as the index is read, RunView.listing) is the line the
    run page's rows give (RunView.refresh), for a finished run with strays and a run still
    going, and after its index grows and is cut."""
    from agentbed.view import api
    from agentbed.view.catalog import Catalog

    going = runs_root / "going"
    shutil.copytree(vault_run, going)
    (going / "manifest.json").unlink()  # not final: an unindexed log is an episode still running
    lines = (going / "index.jsonl").read_bytes().splitlines(keepends=True)
    (going / "index.jsonl").write_bytes(b"".join(lines[:3]))
    logs = sorted((going / "episodes").glob("*.jsonl"))
    logs[-1].write_bytes(b"".join(logs[-1].read_bytes().splitlines(keepends=True)[:2]))
    shutil.copy(logs[0], runs_root / "vault-a" / "episodes" / "zz-stray.jsonl")
    (runs_root / "vault-a" / "extra.json").write_text("{}")
    catalog = Catalog(runs_root)

    def both():
        for view in catalog.runs().values():
            assert api.run_summary(view, view.listing()) == api.run_summary(view, view.refresh())

    both()
    (going / "index.jsonl").write_bytes(b"".join(lines[:5]))  # grown
    both()
    (going / "index.jsonl").write_bytes(b"".join(lines[:2]))  # cut: read again from the start
    both()
    assert api.runs_document(catalog)["runs"][0]["episodes"] == len(logs)


def test_the_index_read_a_chunk_at_a_time_is_the_index_read_at_once(tmp_path, vault_run, monkeypatch):
    """Lines cut by a chunk's end, a bad line, a torn last line: the same records and problems."""
    from agentbed.view import catalog

    index = tmp_path / "index.jsonl"
    lines = (vault_run / "index.jsonl").read_bytes().splitlines(keepends=True)
    index.write_bytes(b"".join(lines[:3]) + b"{not json\n\n" + b"".join(lines[3:5]) + lines[5][:40])

    def read(chunk):
        monkeypatch.setattr(catalog, "READ_CHUNK", chunk)
        tail = catalog.IndexTail()
        tail.follow(index)
        first = (list(tail.records), list(tail.problems), tail.offset, tail.lines)
        with index.open("ab") as fh:
            fh.write(lines[5][40:])  # the torn line completed
        tail.follow(index)
        index.write_bytes(index.read_bytes()[:-len(lines[5]) + 40])
        return first, (tail.records, tail.problems, tail.offset, tail.lines)

    assert read(3) == read(7) == read(1 << 20)
