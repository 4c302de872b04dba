"""The report's episodes folded as they are read (agentbed.report.tally) show what the sections
computed from the list of every episode: the episodes to read first, here held equal to the
list-based selection they replace, and the run directory's listings to pathlib's globs."""

from collections import Counter
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from agentbed.report.episodes import top_episodes
from agentbed.report.tally import Episode, EpisodeTally, priority
from agentbed.rundir import RunDirectory, _json_files, _named_logs


def _listed_top(episodes: list[Episode], n: int) -> list[Episode]:
    """The selection as it was made from the whole list (before the fold)."""
    chosen: list[Episode] = []
    for level in range(4):
        queues: dict[tuple[str, str], list[Episode]] = {}
        for ep in episodes:
            if priority(ep) == level:
                queues.setdefault((str(ep.record.get("suite", "")), str(ep.record.get("agent", ""))), []).append(ep)
        for key, queue in queues.items():
            seen: Counter[str] = Counter()
            ranked = []
            for ep in queue:
                task = str(ep.record.get("task", ""))
                ranked.append((seen[task], ep))
                seen[task] += 1
            queues[key] = [ep for _, ep in sorted(ranked, key=lambda pair: pair[0])]
        while queues and len(chosen) < n:
            for key in list(queues):
                chosen.append(queues[key].pop(0))
                if not queues[key]:
                    del queues[key]
                if len(chosen) == n:
                    break
    return chosen


episodes = st.lists(st.builds(
    lambda i, suite, agent, task, status, success, check: Episode(
        {"episode_id": f"e{i}", "suite": suite, "agent": agent, "task": task, "status": status, "success": success},
        "index.jsonl", f"episodes/e{i}.jsonl", check),
    st.integers(0, 10**6), st.sampled_from(["s", "t"]), st.sampled_from(["a", "b", "c"]),
    st.sampled_from(["x", "y", "z"]), st.sampled_from(["ok", "error", "stopped", "budget"]), st.booleans(),
    st.sampled_from(["verified", "verified", "missing"])), max_size=120)


@settings(max_examples=150, deadline=None)
@given(episodes, st.integers(1, 45))
def test_the_first_to_read_are_the_listed_selection(eps, n):
    assert [id(e) for e in top_episodes(eps, n)] == [id(e) for e in _listed_top(eps, n)]


def test_the_tally_keeps_every_episode_of_a_small_run_only(tmp_path: Path):
    tally = EpisodeTally(tmp_path)
    for i in range(101):
        tally.add(Episode({"episode_id": f"e{i}", "suite": "s", "agent": "a", "task": "t", "status": "ok",
                           "success": i % 2 == 0}, "index.jsonl", f"episodes/e{i}.jsonl", "verified"))
        assert (tally.first is not None) == (i < 100)
    assert len(tally) == 101 and tally.flagged == 50 and not tally.logs_bad
    assert (tmp_path / "episodes" / "e7.jsonl").resolve() in tally.known
    assert (tmp_path / "episodes" / "e101.jsonl").resolve() not in tally.known


def test_the_listings_are_pathlib_globs(tmp_path: Path):
    for rel in ("episodes/a.jsonl", "episodes/.b.jsonl", "episodes/c.json", "episodes/sub/d.json", "x.json",
                "y.jsonl", "z.jsonlx", "w/v.json", "w/u.txt", "inspect/t.json", "episodes/sub/e.jsonl"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("{}")
    (tmp_path / "link").symlink_to(tmp_path / "w")
    (tmp_path / "episodes" / "l.jsonl").symlink_to(tmp_path / "x.json")
    assert sorted(_named_logs(tmp_path / "episodes")) == sorted((tmp_path / "episodes").glob("*.jsonl"))
    expected = sorted(p for p in tmp_path.rglob("*.json*") if p.suffix in (".json", ".jsonl")
                      and p.parent != tmp_path / "episodes")
    assert sorted(_json_files(tmp_path, tmp_path / "episodes")) == expected
    layout = RunDirectory(tmp_path, frozenset(), ())
    assert layout.loose_logs({(tmp_path / "episodes" / "a.jsonl").resolve()}) == [tmp_path / "episodes" / ".b.jsonl"]
