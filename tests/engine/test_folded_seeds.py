"""run.json's and the manifest plan's seeds are folded into a range as they are read, never parsed
into a list first (issue 55 item 6): the streamed fold gives what ``json.loads`` gives, for any seed
list (a range or not, at any chunk size), and bad input gets ``read_json``'s one-line message."""

import json
import tracemalloc
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentbed import jsonstream
from agentbed import manifest as mf
from agentbed.cli import main
from agentbed.jsonstream import iter_streamed, read_folded
from agentbed.schemas import RUN_META_SCHEMA, SEED_SCHEMA, fold_seeds
from agentbed.store import RunStore
from agentbed.validate import InputError, read_json
from tests.engine.test_flat_readers import recorded

CHUNKS = [1, 2, 3, 5, 8, 13, 1 << 20]  # characters read at a time: a number or a key cut anywhere


def a_range(items):
    """The oracle: a non-empty list of integers (not bools, not floats) at one nonzero step."""
    if not items or any(type(x) is not int for x in items):
        return False
    return len(items) == 1 or (items[1] != items[0] and all(b - a == items[1] - items[0]
                                                            for a, b in zip(items, items[1:], strict=False)))


ranges = st.builds(lambda start, n, step: list(range(start, start + n * step, step)),
                   st.integers(0, 2**32), st.integers(1, 60), st.integers(-4, 4).filter(bool))
near_ranges = st.builds(lambda items, at, value: items[:at] + [value] + items[at + 1:],
                        ranges, st.integers(0, 60), st.one_of(st.integers(-2, 70), st.sampled_from([1.0, True, "1"])))
others = st.lists(st.one_of(st.integers(-3, 2**63 - 1), st.sampled_from([0.0, -0.0, 1.0, 2.5, True, False, None]),
                            st.text(max_size=3), st.lists(st.integers(0, 3), max_size=2)), max_size=12)
seed_lists = st.one_of(ranges, near_ranges, others, st.just([]))


def _written(seeds, layout):
    """A run.json-like document's text, seeds between other members, as the store (or a hand) writes it."""
    doc = {"agents": ["a"], "options": {"k": [1, 2]}, "seeds": seeds, "suite": "vault", "zz": "ü"}
    if layout == "store":
        return "".join(iter_streamed(doc, indent=1))
    return json.dumps(doc, indent=layout, ensure_ascii=False)


@settings(max_examples=200, deadline=None)
@given(seed_lists, st.sampled_from([None, 1, 2, "store"]), st.sampled_from(CHUNKS))
def test_the_streamed_fold_reads_any_seed_list_as_json_loads_does(tmp_path_factory, seeds, layout, chunk):
    path = tmp_path_factory.mktemp("fold") / "run.json"
    text = _written(seeds, layout)
    path.write_text(text, encoding="utf-8")
    # never read whole: the streamed reading is sure of every valid document here
    with mock.patch.object(jsonstream, "CHUNK", chunk), \
            mock.patch.object(jsonstream, "read_json", side_effect=AssertionError("read whole")):
        doc = read_folded(path, what="run.json")
    whole = json.loads(text)
    assert {**doc, "seeds": list(doc["seeds"])} == whole
    assert [type(x) for x in doc["seeds"]] == [type(x) for x in whole["seeds"]]  # 1.0 and True kept as they are
    assert isinstance(doc["seeds"], range) == a_range(whole["seeds"])
    folded = fold_seeds(whole["seeds"])  # the same fold over a list parsed whole
    assert folded == doc["seeds"] and type(folded) is type(doc["seeds"])


@settings(max_examples=60, deadline=None)
@given(seed_lists, st.sampled_from(CHUNKS))
def test_the_manifest_plans_seeds_fold_as_they_are_read(tmp_path_factory, seeds, chunk):
    path = tmp_path_factory.mktemp("plan") / mf.MANIFEST
    doc = {"episodes": [["e", "0" * 64]], "plan": {"seeds": seeds, "suite": "s"}, "root": "x"}
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    with mock.patch.object(jsonstream, "CHUNK", chunk):
        read = jsonstream.read_streamed(path, "episodes", what="m", schema={}, item_ok=lambda item: True,
                                        fold=mf.PLAN_SEEDS)
        pairs = list(read["episodes"])
        again = list(read["episodes"])  # read again from the file, the plan folded again on the way
        read["episodes"].close()
    assert pairs == again == doc["episodes"]
    assert list(read["plan"]["seeds"]) == seeds and isinstance(read["plan"]["seeds"], range) == a_range(seeds)


def _valid_meta():
    return {"suite": "vault", "tasks": ["echo"], "agents": ["oracle"], "seeds": list(range(5, 45)), "options": {},
            "executor": "serial"}


def _damaged(kind, at):
    """run.json's text with its seeds (or the document around them) damaged at item ``at``."""
    meta = _valid_meta()
    seeds = meta["seeds"]
    bad = {"negative": -1, "beyond 32 bits": 2**32, "a fraction": 1.5, "a string": "7", "true": True, "null": None,
           "a list": [1], "again": seeds[(at + 1) % len(seeds)], "NaN": float("nan"), "infinite": float("inf")}
    if kind in bad:
        seeds[at] = bad[kind]
        return json.dumps(meta, indent=1)
    text = json.dumps(meta, indent=1)
    if kind == "empty":
        return text.replace(json.dumps(seeds, indent=1).replace("\n", "\n "), "[]")
    if kind == "twice":
        return text.replace('"suite": ', '"seeds": [1],\n "suite": ')
    if kind == "beyond 64 bits":
        seeds[at] = 987654321
        return json.dumps(meta, indent=1).replace("987654321", "123456789012345678901234567890")
    if kind == "cut":
        return text[:len(text) * (at + 1) // 41]
    if kind == "trailing":
        return text + "\n]"
    if kind == "missing":
        return json.dumps({k: v for k, v in meta.items() if k != "suite"}, indent=1)
    if kind == "a lone surrogate":
        return text.replace('"serial"', '"\\ud800"')
    if kind == "a byte-order mark":
        return "\ufeff" + text
    raise AssertionError(kind)


BAD = ["negative", "beyond 32 bits", "a fraction", "a string", "true", "null", "a list", "again", "NaN", "infinite",
       "empty", "twice", "beyond 64 bits", "cut", "trailing", "missing", "a lone surrogate", "a byte-order mark"]


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(BAD), st.integers(0, 39), st.sampled_from(CHUNKS))
def test_bad_seeds_get_read_jsons_one_line_message(tmp_path_factory, kind, at, chunk):
    path = tmp_path_factory.mktemp("bad") / "run.json"
    path.write_text(_damaged(kind, at), encoding="utf-8")
    with pytest.raises(InputError) as whole:
        read_json(path, what="run.json", schema=RUN_META_SCHEMA)
    with mock.patch.object(jsonstream, "CHUNK", chunk), pytest.raises(InputError) as streamed:
        read_folded(path, what="run.json", schema=RUN_META_SCHEMA)
    message = str(streamed.value)
    assert message == str(whole.value) and message.startswith(f"{path}: ") and "\n" not in message


def test_a_seed_range_is_checked_by_its_ends():
    """The stand-in for a range (its first and last seeds) is valid exactly when the range is, for
    the array run.json's and the plan's schemas ask for; a schema that asked more would need more."""
    for schema in (RUN_META_SCHEMA, mf.PLAN_SCHEMA):
        assert schema["properties"]["seeds"] == {"type": "array", "items": SEED_SCHEMA, "minItems": 1,
                                                 "uniqueItems": True}
    assert set(SEED_SCHEMA) == {"type", "minimum", "maximum"}


@pytest.mark.parametrize("seeds, field", [([0, 1, -1], "seeds[2]"), ([0, 1, 2, 1], "seeds"),
                                          ([0, 2**32], "seeds[1]")])
def test_verify_refuses_bad_seeds_in_one_line_exit_2(tmp_path, capsys, seeds, field):
    root = recorded(tmp_path / "run", 3)
    meta = json.loads((root / "run.json").read_text())
    (root / "run.json").write_text(json.dumps({**meta, "seeds": seeds}, indent=1))
    capsys.readouterr()
    assert main(["verify", str(root)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "run.json" in err[0] and f"field {field!r}" in err[0], err


def _peak(read, root):
    tracemalloc.start()
    try:
        read(root)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_reading_100000_seeds_makes_no_list_of_them(tmp_path):
    """run.json and the manifest of a plan of 100,000 seeds are read, never whole, within a little
    more than their text (0.9 MB) of a plan of 10 (the manifest parsed whole grew 4.3 MB at c02c964;
    run.json's whole read hides its list under its 64 MiB read buffer)."""
    small, large = recorded(tmp_path / "small", 10), recorded(tmp_path / "large", 100_000)
    text = (large / "run.json").stat().st_size
    for read in (lambda root: RunStore(root).meta(), lambda root: mf.close(mf.load(root, streamed=True))):
        read(small)  # imports and compiled schemas out of the count
        with mock.patch.object(jsonstream, "read_json", side_effect=AssertionError("read whole")):
            grown = _peak(read, large) - _peak(read, small)
        assert grown < 1.5 * text, (grown, text)
