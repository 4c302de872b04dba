"""The seal and the index read in flat memory: a DiskMap is the dict it replaces, and the
manifest written from it in pieces is, byte for byte, the one ``manifest.build`` defines."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from agentbed import manifest
from agentbed.diskmap import DiskMap, sorted_difference

# any text, lone surrogates included: the order must be Python's str order whatever the ids are
keys = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(keys, st.integers(-5, 5)), max_size=60), st.lists(keys, max_size=10))
def test_a_diskmap_is_a_setdefault_dict_read_in_sorted_order(items, dropped):
    kept: dict[str, int] = {}
    with DiskMap() as disk:
        for k, v in items:
            disk.add(k, v)
            kept.setdefault(k, v)
        for k in dropped:
            kept.pop(k, None)
        disk.discard(dropped)
        assert list(disk.items()) == sorted(kept.items()) and len(disk) == len(kept)
        assert all(k in disk and disk.get(k) == (v,) for k, v in kept.items())
        assert [k for k, _ in items if k not in kept and k in disk] == []


def test_a_diskmap_can_keep_the_last_value_as_dict_does():
    pairs = [("b", 1), ("a", 2), ("b", 3)]
    with DiskMap(keep="last") as disk:
        disk.update(pairs)
        assert list(disk.items()) == sorted(dict(pairs).items()) and len(disk) == 2


def test_an_ordered_read_spans_batches(monkeypatch):
    monkeypatch.setattr("agentbed.diskmap.BATCH", 7)
    with DiskMap(2) as disk:
        disk.update((f"e{i:03d}", i, -i) for i in range(50, 0, -1))
        assert list(disk.items()) == [(f"e{i:03d}", i, -i) for i in range(1, 51)]


ids = st.text(st.characters(min_codepoint=32, max_codepoint=0x10FFFF, blacklist_categories=("Cs",)), min_size=1,
              max_size=10)


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(ids, st.binary(min_size=32, max_size=32).map(bytes.hex), max_size=40),
       st.booleans(), st.booleans(), st.booleans(), st.sampled_from(["vault", "naïve ☃"]))
def test_the_streamed_manifest_is_the_built_one(episodes, keyed, complete, final, agent):
    """Every size of Merkle tree (odd ones fold differently), with and without a key, non-ASCII text."""
    plan = {"suite": "vault", "tasks": ["echo"], "agents": [agent], "seeds": [0, 1], "options": {"o": "ü"},
            "degrade": 0.0}
    key = b"k" * 16 if keyed else None
    kw = dict(run_id="ab" * 16, complete=complete, final=final, files={"run.json": "0" * 64, "a": "1" * 64},
              key=key, expected=len(episodes))
    built = json.dumps(manifest.build(plan, episodes, **kw), sort_keys=True).encode("utf-8")
    assert b"".join(manifest.manifest_bytes(plan, sorted(episodes.items()), **kw)) == built
    ranged = {**plan, "seeds": range(0, 2)}  # a new run's plan holds its seeds as a range
    assert b"".join(manifest.manifest_bytes(ranged, sorted(episodes.items()), **kw)) == built
    fold = manifest.MerkleFold()
    for eid, digest in sorted(episodes.items()):
        fold.add(eid, digest)
    assert fold.root() == manifest.merkle_root(sorted(episodes.items()))


def test_a_manifest_of_thousands_is_the_built_one():
    """Past the writer's batch of 1,024 pairs, and a tree of 2**11 + 3 leaves."""
    episodes = {f"vault.echo.oracle.s{i}": f"{i:064x}" for i in range(2051)}
    plan = {"suite": "vault", "tasks": ["echo"], "agents": ["oracle"], "seeds": list(range(2051)), "options": {},
            "degrade": 0.0}
    for key in (None, b"k" * 16):
        kw = dict(run_id="cd" * 16, complete=True, final=True, files={}, key=key, expected=2051)
        built = json.dumps(manifest.build(plan, episodes, **kw), sort_keys=True).encode("utf-8")
        assert b"".join(manifest.manifest_bytes(plan, sorted(episodes.items()), **kw)) == built
        ranged = {**plan, "seeds": range(2051)}  # past the streamed writer's batch of 2,048 items
        assert b"".join(manifest.manifest_bytes(ranged, sorted(episodes.items()), **kw)) == built


@settings(max_examples=100, deadline=None)
@given(st.sets(keys, max_size=30), st.sets(keys, max_size=30))
def test_sorted_difference_is_the_set_difference_in_order(have, other):
    """What verify (sealed but not indexed) and the seal (planned but not sealed) ask of two
    sorted key streams."""
    assert list(sorted_difference(iter(sorted(have)), iter(sorted(other)))) == sorted(have - other)

