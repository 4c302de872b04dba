"""Results: per-unit metric values that the gate compares, and the generic suite summary.

``results.json`` (format ``agentbed.results/1``) lists metrics, each with its values per unit
(``"task/seed"`` for episodes), so a baseline and a new run can be paired unit by unit::

    {"format": "agentbed.results/1", "episodes": 30, "seeds": [0, 1, 2],
     "metrics": [{"suite": "vault", "agent": "oracle", "metric": "success", "higher_is_better": true,
                  "tolerance": 0.05, "values": {"open-fast/0": 1.0, ...}}]}

Workloads whose unit is not an episode (a checkpoint, a question, a repository and seed)
write the same structure with their own unit keys; the part before the first ``/`` is the
group that the bootstrap resamples.
"""

from __future__ import annotations

import os
from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from itertools import zip_longest
from pathlib import Path
from typing import Any, BinaryIO

from agentbed.diskmap import DiskMap
from agentbed.errors import UsageError
from agentbed.jsonstream import NotSure, Streamed, StreamedItems, dump_streamed, text_of
from agentbed.schemas import RESULTS_SCHEMA
from agentbed.stats import pass_hat_k_ci_of_counts, success_rate_ci
from agentbed.summary import fmt, headline, table
from agentbed.validate import (
    MAX_JSON_BYTES,
    InputError,
    _check_tree,
    _lone_surrogate,
    check,
    finite,
    is_valid,
    open_regular,
    read_json,
)

FORMAT = "agentbed.results/1"


def metric_agent(record: Mapping[str, Any]) -> str:
    """The agent of a record as results.json names it: with its options, if any."""
    opts = ",".join(f"{k}={v}" for k, v in sorted((record.get("options") or {}).items()))
    return str(record["agent"]) + (f"[{opts}]" if opts else "")


def episode_metrics(records: Iterable[Mapping[str, Any]], tolerance: float = 0.05) -> list[dict[str, Any]]:
    """One ``success`` metric per (suite, agent, options) over episodes keyed ``task/seed``."""
    fold = EpisodeMetrics()
    for r in records:
        fold.add(r)
    return fold.metrics(tolerance)


class EpisodeMetrics:
    """:func:`episode_metrics` folded one record at a time (what results.json lists: a value per unit),
    the values kept on disk (:class:`~agentbed.diskmap.DiskMap`), so 100,000 units cost no memory."""

    def __init__(self) -> None:
        self.groups: dict[tuple[str, str], str] = {}  # (suite, agent) -> the prefix of its units' keys
        self.values = DiskMap(keep="last")  # as a dict's item assignment keeps

    def add(self, r: Mapping[str, Any]) -> None:
        group = (r["suite"], metric_agent(r))
        prefix = self.groups.get(group)
        if prefix is None:  # fixed width: a group's keys are one range of the map, in unit order
            prefix = self.groups[group] = f"{len(self.groups):08x}"
        self.values.add(f"{prefix}{r['task']}/{r['seed']}", 1.0 if r["success"] else 0.0)

    def _units(self, prefix: str) -> Iterator[tuple[str, float]]:
        stop = f"{int(prefix, 16) + 1:08x}"
        return ((key[len(prefix):], value) for key, value in self.values.items(prefix, stop))

    def differs(self, suite: str, agent: str, values: Iterable[tuple[str, Any]]) -> bool:
        """Whether this suite and agent's metric has other ``values`` (its ``(unit, value)`` pairs,
        units sorted and each once, as results.json lists them: ``!=`` of the dicts, without making
        either); False when there is no such metric."""
        prefix = self.groups.get((suite, agent))
        if prefix is None:
            return False
        return any(mine != theirs for mine, theirs in zip_longest(self._units(prefix), values))

    def metrics(self, tolerance: float = 0.05, *, streamed: bool = False) -> list[dict[str, Any]]:
        """The metrics; ``streamed``: each one's values a :class:`Streamed` for :func:`write_results`
        (read once), not a dict."""
        return [{"suite": s, "agent": a, "metric": "success", "higher_is_better": True, "tolerance": tolerance,
                 "values": Streamed(self._units(prefix)) if streamed else dict(self._units(prefix))}
                for (s, a), prefix in sorted(self.groups.items())]


class Seeds:
    """The distinct seeds seen, as sorted disjoint ranges: a plan's seeds are one range
    (``--seeds N``), so this stays a few integers however many episodes; each gap costs a range."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.stops: list[int] = []  # range i is starts[i] <= seed < stops[i]

    def add(self, seed: int) -> None:
        i = bisect_right(self.starts, seed)  # ranges starting at or before seed
        if i and seed < self.stops[i - 1]:
            return
        left = bool(i) and self.stops[i - 1] == seed
        right = i < len(self.starts) and self.starts[i] == seed + 1
        if left and right:
            self.stops[i - 1] = self.stops.pop(i)
            del self.starts[i]
        elif left:
            self.stops[i - 1] = seed + 1
        elif right:
            self.starts[i] = seed
        else:
            self.starts.insert(i, seed)
            self.stops.insert(i, seed + 1)

    def __len__(self) -> int:
        return sum(b - a for a, b in zip(self.starts, self.stops, strict=True))

    def __iter__(self) -> Iterator[int]:
        for a, b in zip(self.starts, self.stops, strict=True):
            yield from range(a, b)


def errored_units(records: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """``"suite/agent"`` -> the ``task/seed`` units of its errored episodes
    (:func:`agentbed.problems.is_errored`): results.json's ``errored_units``, which the gate
    leaves out of the baseline under ``--allow-errors``, so both sides compare only what both scored."""
    from agentbed.problems import errored

    grouped: dict[str, set[str]] = defaultdict(set)
    for r in errored(records):
        grouped[f"{r['suite']}/{metric_agent(r)}"].add(f"{r['task']}/{r['seed']}")
    return {key: sorted(units) for key, units in sorted(grouped.items())}


def without_units(baseline: dict[str, Any], units: Mapping[str, list[str]]) -> tuple[dict[str, Any], int]:
    """``baseline`` without, for each metric, the units ``units`` lists for its ``suite/agent``
    (the results' errored episodes), and how many distinct episodes that left out."""
    left_out: set[tuple[str, str]] = set()
    metrics = []
    for m in baseline.get("metrics", []):
        drop = set(units.get(f"{m['suite']}/{m['agent']}", ()))
        gone = drop & set(m["values"])
        left_out |= {(f"{m['suite']}/{m['agent']}", u) for u in gone}
        metrics.append({**m, "values": {u: v for u, v in m["values"].items() if u not in gone}} if gone else m)
    return {**baseline, "metrics": metrics}, len(left_out)


def write_results(path: str | Path, metrics: list[dict[str, Any]], **extra: Any) -> Path:
    """Write results.json; it records the provenance of the code that made it (agentbed.provenance:
    version, commit, the metrics' suites' origins) unless ``extra`` gives one, so a baseline copied
    from it says what made it and ``gate`` prints that. A value may be a :class:`Streamed`."""
    from agentbed.provenance import provenance

    path = Path(path)
    suites = sorted({str(m["suite"]) for m in metrics if isinstance(m, dict) and m.get("suite")})
    doc = {"format": FORMAT, "provenance": provenance(suites), **extra, "metrics": metrics}
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        dump_streamed(doc, fh)
    tmp.replace(path)
    return path


def load_results(path: str | Path, *, streamed: bool = False) -> dict[str, Any]:
    """Read results.json (validated: every value a finite number), or build it from a run
    directory's index. ``streamed`` (a file): its ``metrics`` a :class:`StreamedMetrics` and its
    ``seeds`` a :class:`~agentbed.jsonstream.StreamedItems`, read from the file as they are
    iterated (close the metrics), when the file is as :func:`write_results` writes it (each
    metric's values last, their units sorted); otherwise, or on any doubt, the whole reading."""
    path = Path(path)
    if path.is_dir():
        if (path / "results.json").exists():
            return load_results(path / "results.json", streamed=streamed)
        from agentbed.problems import errored, problems_of, scored
        from agentbed.store import read_index

        records = read_index(path / "index.jsonl")
        if not records:
            raise UsageError(f"{path}: no results.json and no finished episodes in index.jsonl")
        return {"format": FORMAT, "metrics": episode_metrics(scored(records)), "episodes": len(records),
                "errored_episodes": len(errored(records)), "errored_units": errored_units(records),
                "problems": problems_of(records)}
    if streamed and (doc := _read_streamed(path)) is not None:
        return doc
    doc = read_json(path, what="results file")
    if isinstance(doc, dict) and doc.get("format") != FORMAT:  # another kind of file: say so first
        raise UsageError(f"{path}: field 'format' must be {FORMAT!r}")
    check(doc, RESULTS_SCHEMA, str(path))
    for i, m in enumerate(doc["metrics"]):
        if "tolerance" in m and not finite(m["tolerance"]):
            raise UsageError(f"{path}: field 'metrics[{i}].tolerance' is {m['tolerance']}, expected a finite number")
        for unit, value in m["values"].items():
            if not finite(value):
                raise UsageError(f"{path}: field 'metrics[{i}].values.{unit}' is {value}, expected a finite number")
    return doc


def _walk(fh: BinaryIO, rest: dict[str, Any], seeds: list[int] | None = None) -> Iterator[dict[str, Any]]:
    """results.json's metrics as the file holds them, each with ``values`` an iterator of its
    ``(unit, value)`` pairs (the next metric is read once they are); the other top-level members
    go into ``rest``, ``seeds`` as an empty list: its items are checked and counted in ``seeds[0]``,
    not kept."""
    src = text_of(fh)
    for key in src.members():
        if key in rest:
            raise NotSure
        if key not in ("metrics", "seeds"):
            rest[key] = src.value()
            continue
        rest[key] = []
        for _ in src.items():
            if key == "seeds":
                _piece({"seeds": [src.value()]})
                if seeds is not None:
                    seeds[0] += 1
                continue
            fields: dict[str, Any] = {}
            for name in src.members():
                if name in fields:
                    raise NotSure
                if name != "values":
                    fields[name] = src.value()
                    continue
                fields[name] = None
                pairs = _pairs(src)
                yield {**fields, "values": pairs}
                for _ in pairs:  # what the caller left unread
                    pass
            if "values" not in fields:
                raise NotSure  # the schema refuses it: the whole reading says so
    src.end()


def _pairs(src: Any) -> Iterator[tuple[str, Any]]:
    """A metric's values, the last member of its object: each unit above the one before (so
    none twice), each value a finite number."""
    last: str | None = None
    for unit in src.members():
        value = src.value()
        if (last is not None and unit <= last) or not finite(value):
            raise NotSure
        last = unit
        yield unit, value
    if src.char() != "}":
        raise NotSure  # values was not its metric's last member


def _piece(doc: dict[str, Any]) -> None:
    """``parse_json``'s checks of one piece of the file, given at its depth."""
    _check_tree(doc, "")
    if _lone_surrogate(doc) is not None:
        raise NotSure


_METRIC = RESULTS_SCHEMA["properties"]["metrics"]["items"]


def _read_streamed(path: Path) -> dict[str, Any] | None:
    """The file as :func:`load_results` reads it, its metrics streamed; None on any doubt."""
    fh = None
    try:
        fh = open_regular(path, what="results file")
        if os.fstat(fh.fileno()).st_size > MAX_JSON_BYTES:
            raise NotSure
        rest: dict[str, Any] = {}
        count, seeds = 0, [0]
        for metric in _walk(fh, rest, seeds):
            for _ in metric["values"]:
                pass
            fields = {**metric, "values": {}}  # the values were checked one by one
            _piece({"metrics": [fields]})
            if not is_valid(fields, _METRIC) or ("tolerance" in fields and not finite(fields["tolerance"])):
                raise NotSure
            count += 1
        if "metrics" not in rest:
            raise NotSure  # the schema refuses it: the whole reading says so
        doc = {**rest, "metrics": []}
        _piece(doc)
        if doc.get("format") != FORMAT or not is_valid(doc, RESULTS_SCHEMA):
            raise NotSure
    except (NotSure, InputError, ValueError, RecursionError, OSError):
        if fh is not None:
            fh.close()
        return None
    doc["metrics"] = StreamedMetrics(fh, count)
    if "seeds" in doc:
        doc["seeds"] = StreamedItems(fh, "seeds", seeds[0])
    return doc


class StreamedMetrics:
    """results.json's metrics, read again from the file (kept open) each time they are iterated;
    each metric's ``values`` an iterator of ``(unit, value)``, units sorted, read before the next."""

    def __init__(self, fh: BinaryIO, count: int) -> None:
        self.fh, self.count = fh, count

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return _walk(self.fh, {})

    def __len__(self) -> int:
        return self.count

    def close(self) -> None:
        self.fh.close()


def suite_summary(suite: str, records: Iterable[Mapping[str, Any]], command: str) -> dict[str, Any]:
    """Pass rate per agent (bootstrap over tasks), pass^k, per-task and per-label tables."""
    fold = PassRates()
    for r in records:
        fold.add(r)
    return fold.summary(suite, command)


class _AgentRates:
    """One agent's episodes as :class:`PassRates` keeps them: counts per task, status and label."""

    def __init__(self) -> None:
        self.tasks: dict[str, list[int]] = {}  # task -> [successes, trials], in first-seen order
        self.statuses: Counter[str] = Counter()
        self.labels: Counter[str] = Counter()

    def add(self, r: Mapping[str, Any]) -> None:
        task = self.tasks.setdefault(r["task"], [0, 0])
        task[0] += bool(r["success"])
        task[1] += 1
        self.statuses[r["status"]] += 1
        self.labels.update(r.get("labels", []))


class PassRates:
    """:func:`suite_summary` folded one record at a time into counts per agent and task (all the
    bootstrap over tasks needs: :func:`agentbed.stats.success_rate_ci`): a run of 100,000 episodes
    summarises in the memory of one of 10."""

    def __init__(self) -> None:
        self.agents: dict[str, _AgentRates] = defaultdict(_AgentRates)
        self.seeds = Seeds()
        self.episodes = 0

    def add(self, r: Mapping[str, Any]) -> None:
        self.episodes += 1
        self.seeds.add(r["seed"])
        self.agents[r["agent"]].add(r)

    def summary(self, suite: str, command: str) -> dict[str, Any]:
        seeds = len(self.seeds)
        heads, agent_rows, task_rows, label_rows = [], [], [], []
        for agent, rates in sorted(self.agents.items()):
            ci = success_rate_ci({task: (c, n) for task, (c, n) in rates.tasks.items()})
            heads.append(headline("pass_rate", ci, agent=agent, seeds=seeds))
            k = min(n for _, n in rates.tasks.values())
            pk = pass_hat_k_ci_of_counts([(c, n) for c, n in rates.tasks.values()], k)
            agent_rows.append([agent, ci.n, seeds, fmt(ci), f"pass^{k} {fmt(pk)}",
                               ", ".join(f"{s}={n}" for s, n in sorted(rates.statuses.items()))])
            for task, (c, n) in sorted(rates.tasks.items()):
                task_rows.append([agent, task, f"{c}/{n}"])
            for label, n in rates.labels.most_common():
                label_rows.append([agent, label, n])
        return {
            "suite": suite, "title": f"{suite}: pass rates", "episodes": self.episodes, "seeds": seeds,
            "headline": heads, "command": command, "figures": [],
            "tables": [
                table("Pass rate per agent (95% bootstrap CI over tasks)",
                      ["agent", "episodes", "seeds", "pass rate", "pass^k", "status"], agent_rows),
                table("Per task", ["agent", "task", "passed"], task_rows),
                table("Labels", ["agent", "label", "episodes"], label_rows),
            ],
        }
