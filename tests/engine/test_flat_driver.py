"""What a run's driver holds does not grow with its episodes (issue 55 item 6): the plan keeps its
seeds as a range, run.json and the seal write them as they go, and the summary's fold keeps counts
per task. Counted in objects, not timed: the same structures at 1,000 and 10,000 episodes."""

import argparse
import gc
import json
import sqlite3
import sys

from agentbed.cli_plan import plan
from agentbed.planned import Planned
from agentbed.run_summary import RunTally
from agentbed.store import RunStore
from agentbed.suite import get_suite


def held(root: object) -> tuple[int, int]:
    """How many objects ``root`` holds, transitively, and their bytes (``sys.getsizeof``) (modules, types and functions not counted, nor
    what a DiskMap's SQLite connection holds: its data are on disk, its cache bounded)."""
    seen: set[int] = set()
    size = 0
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, type | type(sys) | type(held) | sqlite3.Connection):
            continue
        seen.add(id(obj))
        size += sys.getsizeof(obj)
        stack.extend(gc.get_referents(obj))
    return len(seen), size


def planned(seeds: int) -> tuple[Planned, dict]:
    args = argparse.Namespace(suite="vault", extra=[], task=["echo"], roster=["oracle"], reference=None, executor="serial",
                              seeds=seeds, seed_start=3, degrade=None, controller=None)
    return plan(get_suite("vault"), args)


def test_a_plan_holds_its_seeds_as_a_range_and_run_json_lists_them(tmp_path):
    small, large = planned(10), planned(100_000)
    for specs, meta in (small, large):
        assert isinstance(specs.seeds, range) and isinstance(meta["seeds"], range)
    assert held(small[0]) == held(large[0])  # the plan, whatever its size
    store = RunStore(tmp_path / "run")
    recorded = store.create({**large[1], "executor": "serial"})
    store.unlock()
    assert recorded["seeds"] == range(3, 100_003)
    on_disk = (tmp_path / "run" / "run.json").read_bytes()
    assert on_disk == json.dumps({**recorded, "seeds": list(range(3, 100_003))}, indent=1,
                                 sort_keys=True).encode("utf-8")
    assert json.loads((tmp_path / "run" / "manifest.json").read_bytes())["plan"]["seeds"] == list(range(3, 100_003))


def test_the_summary_fold_holds_the_same_structures_at_ten_times_the_episodes():
    def tally_of(n: int) -> RunTally:
        tally = RunTally(keep_scored=False, paired=False)
        for seed in range(n):
            task = ("echo", "open-fast")[seed % 2]
            tally.add({"episode_id": f"vault.{task}.oracle.s{seed}", "suite": "vault", "task": task,
                       "agent": "oracle", "seed": seed, "status": "ok", "success": seed % 3 > 0, "labels": ["X"]})
        return tally

    small, large = tally_of(1_000), tally_of(10_000)
    assert held(small) == held(large)  # counts per task; the values per unit are on disk (a DiskMap)
    assert large.rates.summary("vault", "c")["headline"][0]["n"] == 10_000


def sqlite_bytes() -> int:
    """What SQLite holds in this process (``sqlite3_memory_used``): the DiskMaps' page caches."""
    import _sqlite3
    import ctypes

    used = ctypes.CDLL(_sqlite3.__file__).sqlite3_memory_used  # the library the module is linked with
    used.restype = ctypes.c_int64
    return int(used())


def test_the_seals_maps_hold_the_same_memory_at_ten_times_the_episodes(tmp_path):
    """The driver's per-episode state on disk (the seal's ids and digests, the plan's ids) keeps a
    page cache in memory that is full at 10,000 episodes already, so it does not grow to 100,000:
    with 2 MiB per map (before) SQLite held 1.4 MiB at 10,000 and 4 MiB at 100,000."""
    import gc

    from agentbed.manifest import ManifestWriter

    def held_by_seal(n: int) -> int:
        gc.collect()
        before = sqlite_bytes()
        plan = {"suite": "vault", "tasks": ["echo"], "agents": ["oracle"], "seeds": range(n), "options": {},
                "degrade": 0.0}
        root = tmp_path / str(n)
        root.mkdir()
        (root / "run.json").write_text("{}")
        seal = ManifestWriter(root, plan, "0" * 32, ((f"vault.echo.oracle.s{s}", "0" * 64) for s in range(n)), None)
        seal.write(complete=False)  # reads every sealed pair and makes the plan's ids
        held = sqlite_bytes() - before
        seal.episodes.close()
        seal.expected.close()
        return held

    small, large = held_by_seal(10_000), held_by_seal(100_000)
    assert abs(large - small) < 128 * 1024, (small, large)
