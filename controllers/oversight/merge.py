"""Several branching datasets of one benchmark, built in parts (e.g. ``--offset 0``, ``--offset 10``
of the same configuration), as one: rows concatenated, counts added, games kept disjoint.

Building in parts bounds what a stopped build loses; the merged file is what one build over all
the parts' games would have written, but for the provenance's ``parts``. And the other way round,
one dataset's rows of some base agents, with their counts (:func:`only_flaws`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

from agentbed.errors import UsageError
from controllers.oversight.dataset import Dataset, _Counts

# what may differ between parts of one build; every other configuration field must agree
PART_FIELDS = ("games", "skip_games", "workers")
SAME_PROVENANCE = ("schema", "benchmark", "actions", "primary_intervention", "max_steps", "feature_names", "flaws")


def _comparable(config: dict[str, Any]) -> dict[str, Any]:
    """The configuration without what differs between parts: which games (ALFWorld's loader is
    told the offset plus the part's games, and parts may come from several generator seeds: the
    game ids carry the seed)."""
    same = {"max_steps": None, **{k: v for k, v in config.items() if k not in PART_FIELDS}}  # older files lack it
    same["target_options"] = {k: v for k, v in config.get("target_options", {}).items()
                              if k not in ("games", "games_seed")}
    return same


def _counts(raw: dict[str, Any]) -> _Counts:
    return _Counts(**{k: v for k, v in raw.items() if k in _Counts.__dataclass_fields__})


def merge_datasets(parts: Sequence[tuple[str, Dataset]]) -> Dataset:
    """``parts``: (name, dataset) pairs, the name used in error messages and the provenance."""
    if len(parts) < 2:
        raise UsageError("merge: give at least two dataset files")
    (first_name, first), games = parts[0], set()
    config = _comparable(first.provenance["config"])
    counts, per_flaw = _Counts(), {f: _Counts() for f in first.provenance["flaws"]}
    for name, part in parts:
        prov = part.provenance
        for key in SAME_PROVENANCE:
            if prov.get(key) != first.provenance.get(key):
                raise UsageError(f"{name}: provenance field {key!r} differs from {first_name}'s")
        other = _comparable(prov["config"])
        differing = sorted(k for k in set(config) | set(other) if config.get(k) != other.get(k))
        if differing:
            raise UsageError(f"{name}: config field {differing[0]!r} differs from {first_name}'s")
        shared = games & set(prov["games"])
        if shared:
            raise UsageError(f"{name}: game {sorted(shared)[0]!r} is in another part too")
        games |= set(prov["games"])
        counts.add(_counts(prov["counts"]))
        for flaw, raw in prov.get("counts_per_flaw", {}).items():
            per_flaw[flaw].add(_counts(raw))
    rows = [row for _, part in parts for row in part.rows]
    provenance = {**first.provenance, "games": [g for _, p in parts for g in p.provenance["games"]],
                  "counts": asdict(counts), "counts_per_flaw": {f: asdict(c) for f, c in per_flaw.items()},
                  "rows": len(rows), "git_commit": first.provenance.get("git_commit", ""),
                  "parts": [{"file": name, "games": len(p.provenance["games"]),
                             "skip_games": p.provenance["config"].get("skip_games", 0),
                             "git_commit": p.provenance.get("git_commit", ""),
                             "command": p.provenance.get("command", "")} for name, p in parts]}
    provenance["config"] = {**first.provenance["config"], "games": len(provenance["games"]),
                            "skip_games": min(p.provenance["config"].get("skip_games", 0) for _, p in parts)}
    return Dataset(provenance, rows)


def load_parts(paths: Sequence[str], load: Callable[[str], Dataset] = Dataset.load) -> Dataset:
    """One dataset from one file, or the in-memory merge of several parts (each its own build, so
    each stays rebuildable from its own recorded command); ``load`` reads one file (a caller that
    reads the same files again may pass a cached one: the merge leaves the parts unchanged)."""
    if len(paths) == 1:
        return load(paths[0])
    return merge_datasets([(p, load(p)) for p in paths])


def _trajectory_key(row: dict[str, Any]) -> tuple:
    return (row["trajectory"], row["checkpoint"], row["action"], row["rollout"])


def swap_action_rows(base: Dataset, other: Dataset, action: str, names: tuple[str, str] = ("base", "other")
                     ) -> Dataset:
    """``base`` with the rows of one intervention taken from ``other``: a build of the same games,
    agents and checkpoints in which only that intervention was set differently (e.g. the expert's
    slip rate, built with ``--interventions expert``). Every ``continue`` row must be identical in
    both (the same base trajectories, checkpoints and features), else it is an error; the
    intervention's rows of ``other`` must cover every checkpoint of ``base``'s."""
    if action not in other.provenance.get("actions", []) or action not in base.provenance.get("actions", []):
        raise UsageError(f"swap: both datasets must branch {action!r}")
    cont = [sorted((r for r in d.rows if r["action"] == "continue"), key=_trajectory_key) for d in (base, other)]
    if cont[0] != cont[1]:
        raise UsageError(f"{names[1]}: its continue rows differ from {names[0]}'s (other trajectories or checkpoints)")
    taken = [r for r in other.rows if r["action"] == action]
    covered = {(r["trajectory"], r["checkpoint"]) for r in taken}
    missing = {(r["trajectory"], r["checkpoint"]) for r in base.rows} - covered
    if missing:
        raise UsageError(f"{names[1]}: no {action!r} rows at {len(missing)} of {names[0]}'s checkpoints")
    rows = [r for r in base.rows if r["action"] != action] + taken
    rows.sort(key=lambda r: (r["trajectory"], r["checkpoint"], base.provenance["actions"].index(r["action"]),
                             r["rollout"]))
    config = {**base.provenance["config"]}
    config["target_options"] = {**config.get("target_options", {}),
                                **{k: v for k, v in other.provenance["config"].get("target_options", {}).items()
                                   if k != "interventions"}}
    notes = {**base.provenance.get("target_notes", {}), action: other.provenance.get("target_notes", {}).get(action)}
    provenance = {**base.provenance, "config": config, "target_notes": notes, "rows": len(rows),
                  "swapped": {"action": action, "rows_from": names[1], "rest_from": names[0],
                              "git_commits": [base.provenance.get("git_commit", ""),
                                              other.provenance.get("git_commit", "")]}}
    return Dataset(provenance, rows)


def only_flaws(dataset: Dataset, flaws: Sequence[str]) -> Dataset:
    """The rows of the named base agents; their counts are the dataset's, kept for the record
    under ``counts_of_whole_dataset`` (built/dropped accounting is per whole build)."""
    unknown = sorted(set(flaws) - {r["flaw"] for r in dataset.rows})
    if unknown:
        raise UsageError(f"--flaws: the dataset has no rows of base agent {unknown[0]!r}")
    rows = [r for r in dataset.rows if r["flaw"] in set(flaws)]
    per_flaw = dataset.provenance.get("counts_per_flaw", {})
    counts = _Counts()
    for f in flaws:
        if f in per_flaw:
            counts.add(_counts(per_flaw[f]))
    prov = {**dataset.provenance, "flaws": list(flaws), "counts_of_whole_dataset": dataset.provenance.get("counts"),
            "counts": asdict(counts) if per_flaw else {}}  # an older dataset: per-agent counts unknown
    return Dataset(prov, rows)
