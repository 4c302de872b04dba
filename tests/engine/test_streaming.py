"""A run's end in flat memory: the index streamed in read_index's order, the plan made on demand,
and the summary folded one record at a time, each equal to what it replaces."""

import itertools
import json
import random
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentbed.planned import Planned
from agentbed.results import episode_metrics, suite_summary
from agentbed.run_summary import RunTally, paired_rows
from agentbed.runner import EpisodeSpec
from agentbed.store import RunStore, read_index, stream_index


def rec(episode_id: str, **extra) -> dict:
    return {"episode_id": episode_id, "suite": "vault", "task": "t", "agent": "a", "seed": 0, "status": "ok",
            "success": True, **extra}


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcdefg"), st.integers(0, 3)), max_size=30), st.booleans())
def test_stream_index_gives_read_index_records_in_its_order(tmp_path_factory, lines, torn):
    """Duplicated ids (the first line wins), any order, a torn last line: the same records, in the same order."""
    path = tmp_path_factory.mktemp("idx") / "index.jsonl"
    text = "".join(json.dumps(rec(eid, x=x), sort_keys=True) + "\n" for eid, x in lines)
    path.write_text(text + ('{"agent": "a", "episode_id": "z"' if torn else ""))
    assert list(stream_index(path)) == read_index(path)


def test_a_store_streams_its_own_lines_and_earlier_ones(tmp_path):
    store = RunStore(tmp_path)
    store.create({"suite": "vault"})
    for eid in ["c", "a", "b", "a"]:
        store.append(rec(eid, x=eid))
    assert list(store.stream_records()) == store.records()
    assert [r["episode_id"] for r in store.stream_records()] == ["a", "b", "c"]


def test_a_plan_is_the_list_it_replaces():
    template = EpisodeSpec("vault", "", "", 0, {"k": 1}, 0.5, {}, ("c",))
    agents, tasks, seeds = ("oracle", "naive"), ("open-fast", "echo", "x"), (3, 4, 5, 6)
    planned = Planned(template, agents, tasks, seeds)
    listed = [replace(template, agent=a, task=t, seed=s) for a in agents for t in tasks for s in seeds]
    assert len(planned) == len(listed) and list(planned) == listed
    assert [planned[i] for i in range(-len(listed), len(listed))] == listed + listed
    assert planned[5:17] == listed[5:17] and planned[:1000] == listed
    with pytest.raises(IndexError):
        planned[len(listed)]
    bound = planned.with_fields(run={"id": "r"})
    assert list(bound) == [replace(s, run={"id": "r"}) for s in listed]


def test_the_folded_summary_is_the_listed_one():
    """A seeded mix of agents, tasks, statuses, labels and errored episodes: the run's fold gives
    what the list-based functions give (they share the fold, so this also pins their order)."""
    rng = random.Random(7)
    records = []
    for agent, task, seed in itertools.product(["a", "b", "c"], ["t1", "t2", "t3"], range(9)):
        status = rng.choice(["ok", "ok", "budget", "error"])
        error = rng.choice(["RateLimitError: 429", "ValueError: agent broke"]) if status == "error" else ""
        records.append({**rec(f"vault.{task}.{agent}.s{seed}", agent=agent, task=task, seed=seed, status=status,
                              success=status == "ok" and rng.random() < 0.7, error=error),
                        "labels": rng.sample(["X", "Y", "Z"], rng.randint(0, 2))})
    records.sort(key=lambda r: r["episode_id"])
    tally = RunTally(keep_scored=False, paired=True)
    for r in records:
        tally.add(r)
    kept = [r for r in records if r not in tally.errored]
    assert tally.errored and tally.total == len(records)
    assert tally.rates.summary("vault", "c") == suite_summary("vault", kept, "c")
    assert tally.metrics.metrics() == episode_metrics(kept)
    assert tally.pairs is not None and tally.pairs.rows("a") == paired_rows(records, "a")
