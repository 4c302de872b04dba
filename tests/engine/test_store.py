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


def test_an_index_record_is_what_asdict_gives_without_sharing_containers():
    """EpisodeRecord.to_dict skips asdict's deep copy of immutable leaves; the result must be equal
    to asdict's, nested dataclasses included, and mutating it must not touch the record."""
    from dataclasses import asdict, dataclass

    from agentbed.runner import EpisodeRecord

    @dataclass
    class Point:
        x: int
        tags: list[str]

    record = EpisodeRecord("e", "s", "t", "a", 0, "ok", True, 1.0, 1, 0.0, 0,
                           metrics={"p": Point(1, ["a"]), "nested": {"k": [1, (2, 3)]}}, labels=["SUCCESS"],
                           usage={"calls": 1})
    out = record.to_dict()
    assert out == asdict(record)
    out["metrics"]["nested"]["k"].append(9)
    out["labels"].append("X")
    assert record.metrics["nested"]["k"] == [1, (2, 3)] and record.labels == ["SUCCESS"]


def test_a_store_reads_its_own_lines_back_without_the_schema_but_checks_older_ones(tmp_path):
    """Lines this store appended are parsed, not re-validated; a line already in the index when it
    began (another process's) is still checked and a bad one named."""
    import pytest

    from agentbed.store import INDEX, RunStore
    from agentbed.validate import InputError

    store = RunStore(tmp_path / "run")
    store.create({"suite": "vault"})
    (store.root / INDEX).write_bytes(b'{"episode_id": "old", "seed": "zero"}\n')
    with pytest.raises(InputError, match="line 1"):
        store.records()
    (store.root / INDEX).write_bytes(b"")
    good = {"episode_id": "e1", "suite": "vault", "task": "t", "agent": "a", "seed": 0, "status": "ok",
            "success": True}
    store.append(good)
    assert [r["episode_id"] for r in store.records()] == ["e1"]
    store.unlock()


def test_own_lines_read_fast_still_refuse_what_the_full_parser_refuses(tmp_path):
    """The fast path for a store's own lines keeps parse_json's answers: the same records, and
    the same refusals of a non-finite number, deep nesting and an integer beyond 64 bits."""
    import json

    import pytest

    from agentbed.validate import MAX_DEPTH, InputError, parse_json, parse_own_json

    plain = json.dumps({"a": [1, 2.5, {"b": "NaN is a word"}], "n": -3, "s": "Zürich"}, ensure_ascii=False)
    assert parse_own_json(plain.encode(), "x") == parse_json(plain.encode(), "x")
    # a float's long fraction (as wall_seconds has) is not a long integer: the fast path reads it
    timed = json.dumps({"wall_seconds": 0.0013507240000762977, "x": 1234567890123456789.5, "e": 1e-300})
    assert parse_own_json(timed.encode(), "x") == parse_json(timed.encode(), "x")
    import random
    import re

    from agentbed.validate import _long_integer

    # the fast scan finds exactly what this expression finds: 19 digits not after a "." or a digit
    reference, rng = re.compile(rb"(?<![.\d])\d{19}"), random.Random(7)
    for _ in range(20000):
        text = bytes(rng.choice(b'0123456789.e-+ ,:[]{}"a') if rng.random() < 0.3 else rng.choice(b"0123456789")
                     for _ in range(rng.randrange(60)))
        assert _long_integer(text) == bool(reference.search(text)), text
    deep = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    for bad in ('{"m": NaN}', '{"m": -Infinity}', deep, '{"big": 99999999999999999999}',
                '{"big": [0.5, -99999999999999999999]}', '{"s": "1.5", "big": 12345678901234567890}'):
        with pytest.raises(InputError) as full:
            parse_json(bad.encode(), "line 3")
        with pytest.raises(InputError) as fast:
            parse_own_json(bad.encode(), "line 3")
        assert str(fast.value) == str(full.value)
