import json

import pytest

from agentbed.errors import UsageError
from agentbed.store import RunStore, read_index


def rec(episode_id: str, **extra) -> dict:
    return {"episode_id": episode_id, "suite": "vault", "task": "t", "agent": "a", "seed": 0, "status": "ok",
            "success": True, **extra}


def test_torn_last_index_line_is_cut_before_appending(tmp_path):
    store = RunStore(tmp_path)
    store.create({"suite": "vault"})
    store.append(rec("a", x=1))
    with open(tmp_path / "index.jsonl", "ab") as fh:
        fh.write(b'{"agent": "a", "episode_id": "b", "x"')  # killed mid-write
    assert [r["episode_id"] for r in store.records()] == ["a"]
    (store.episodes / "b.jsonl.part").write_text("half")
    assert store.discard_partial() == 1
    store.append(rec("b", x=2))
    assert [r["episode_id"] for r in read_index(tmp_path / "index.jsonl")] == ["a", "b"]


def test_an_existing_run_is_never_overwritten(tmp_path):
    RunStore(tmp_path).create({"suite": "vault"})
    with pytest.raises(UsageError, match="--resume"):
        RunStore(tmp_path).create({"suite": "vault"})


def test_corrupt_index_line_in_the_middle_names_the_line(tmp_path):
    (tmp_path / "index.jsonl").write_text(json.dumps(rec("a")) + "\nnot json\n" + json.dumps(rec("b")) + "\n")
    with pytest.raises(UsageError, match="line 2"):
        read_index(tmp_path / "index.jsonl")
