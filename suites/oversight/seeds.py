"""The one registry of development and held-out games per benchmark (issue 54 item 3).

Each benchmark's games fall into split units: ALFWorld's generator seed, ScienceWorld's task
variation, GraphRAG's generated world, and for a suite (``suite:NAME``: contracts, any other) a
fixed quarter of its hand-written tasks chosen by a hash of the task id. A controller, a threshold,
a regime or a slip rate may be fitted only on games of a development unit; a held-out unit's games
are for evaluation only. Every build and evaluate command says which units a dataset used, and
fitting on anything but a development unit (a held-out one, or one not registered yet: register
it here before using it) is refused with one line, and so is scoring as held out (``--train DEV``)
any game of a unit that is not held out (a development one, or one not registered).

ALFWorld's record (docs/oversight.md, docs/oversight-history.md): seed 0 is where everything was
designed and tuned; seeds 1 and 2 were held-out sets of earlier measurements, seed 3 of the
first costly-configuration headline, seed 4 of the headline (issue 34, rebuilt for issue 54), and
seed 8 of the game-level cross-validation reported in issue 54. ScienceWorld's variations 0-4 and
GraphRAG's worlds 1000 and 1001 are the ones every oversight measurement so far used (`oversight
all`); their held-out units were never branched. GraphRAG's worlds 1004-1017 were added to the
development side in session 23 (never branched before; the learning curve needed more development
questions than two worlds hold); the held-out worlds did not change. The vault is the tests' fixture: development only.

AgentDojo is split by user task (a fixed quarter by a hash of ``suite.user_task``), not by injection
task: its injection tasks are a short public list per suite that attackers reuse and the scripted
follower knows, while what a deployed controller meets anew is the user's request in which an
injection arrives; all pairs of a user task stay on one side, so no held-out request was seen.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from agentbed.errors import UsageError


@dataclass(frozen=True)
class SeedSplit:
    """Which split units of a benchmark are for development and which are held out; ``unit``
    maps a game id to its unit, ``what`` names the unit in messages."""

    development: tuple[int, ...]
    heldout: tuple[int, ...]
    unit: Callable[[str], int]
    what: str = "generator seed"

    def role(self, unit: int) -> str:
        if unit in self.development:
            return "development"
        return "held out" if unit in self.heldout else "unregistered"

    def describe(self) -> str:
        held = ", ".join(map(str, self.heldout)) or "none"
        return f"development {self.what}s {', '.join(map(str, self.development))}; held-out {self.what}s {held}"


_ALFWORLD_ID = re.compile(r"^s(\d+)-\d{3}-")
_GRAPHRAG_WORLD = re.compile(r"-(\d+)-[^-]+$")


def _alfworld_seed(game: str) -> int:
    """``NNN-type`` is seed 0, ``sS-NNN-type`` seed S (environments/alfworld/games.game_id)."""
    found = _ALFWORLD_ID.match(game)
    return int(found.group(1)) if found else 0


def _scienceworld_variation(game: str) -> int:
    """``task:variation`` (environments/scienceworld/env.task_specs)."""
    return int(game.rsplit(":", 1)[1])


def _graphrag_world(game: str) -> int:
    """``attack/world-SEED-question`` (suites/oversight/benchmarks/graphrag.py)."""
    found = _GRAPHRAG_WORLD.search(game.split("/", 1)[-1])
    return int(found.group(1)) if found else -1


def _task_quarter(game: str) -> int:
    """A hand-written task's quarter, fixed by its id: quarter 0 is held out."""
    return hashlib.sha256(game.encode("utf-8")).digest()[0] % 4


def _user_task_quarter(game: str) -> int:
    """An AgentDojo pair's user task's quarter (``suite.user_task.injection_task.attack``): every
    pair of a user task falls on one side."""
    return _task_quarter(".".join(game.split(".")[:2]))


SEEDS: dict[str, SeedSplit] = {
    "alfworld": SeedSplit(development=(0,), heldout=(1, 2, 3, 4, 8), unit=_alfworld_seed),
    "scienceworld": SeedSplit(development=(0, 1, 2, 3, 4), heldout=(5, 6, 7, 8, 9), unit=_scienceworld_variation,
                              what="variation"),
    "graphrag": SeedSplit(development=(1000, 1001, *range(1004, 1018)), heldout=(1002, 1003), unit=_graphrag_world,
                          what="world"),
    "suite:*": SeedSplit(development=(1, 2, 3), heldout=(0,), unit=_task_quarter, what="task quarter"),
    "agentdojo": SeedSplit(development=(1, 2, 3), heldout=(0,), unit=_user_task_quarter, what="user-task quarter"),
    "vault": SeedSplit(development=(0,), heldout=(), unit=lambda game: 0, what="fixture"),
}


def split_of(benchmark: str | None) -> SeedSplit | None:
    """The registered split of a benchmark (every ``suite:NAME`` shares the task-quarter rule; a
    dataset records a suite's target name, ``suite-NAME``)."""
    if benchmark and benchmark.startswith(("suite:", "suite-")):
        return SEEDS["suite:*"]
    return SEEDS.get(benchmark or "")


def _games(provenance: dict[str, Any], games: list[str] | None) -> list[str]:
    return list(games if games is not None else provenance.get("games", []))


def seeds_of(provenance: dict[str, Any], games: list[str] | None = None) -> list[int]:
    """The split units (ALFWorld: generator seeds) of a dataset's games, read from the game ids,
    so a merge of parts of several seeds shows them all; empty for an unregistered benchmark."""
    split = split_of(provenance.get("benchmark"))
    return [] if split is None else sorted({split.unit(g) for g in _games(provenance, games)})


def development_games(benchmark: str, games: list[str]) -> list[str]:
    """The games of ``games`` that lie in a development unit."""
    split = split_of(benchmark)
    return list(games) if split is None else [g for g in games if split.unit(g) in split.development]


def only_development(dataset: Any) -> Any:
    """The dataset's rows of development games only, for cross-validation (``oversight all``): its
    build counts are kept as ``counts_of_whole_dataset`` (they are per whole build)."""
    from controllers.oversight.dataset import Dataset

    games = development_games(dataset.provenance.get("benchmark", ""), dataset.provenance.get("games", []))
    if len(games) == len(dataset.provenance.get("games", [])):
        return dataset
    keep = set(games)
    prov = {**dataset.provenance, "games": games, "counts_of_whole_dataset": dataset.provenance.get("counts"),
            "counts": {}, "held_out_games_left_out": len(dataset.provenance["games"]) - len(games)}
    return Dataset(prov, [r for r in dataset.rows if r["game"] in keep])


def describe_seeds(provenance: dict[str, Any], games: list[str] | None = None) -> str:
    """One line: the units a dataset used and their roles."""
    benchmark = provenance.get("benchmark", "?")
    split = split_of(benchmark)
    if split is None:
        return f"{benchmark}: no split registered in suites/oversight/seeds.py"
    units = seeds_of(provenance, games)
    if split.what.endswith("task quarter"):
        names = _games(provenance, games)
        held = sum(split.unit(g) in split.heldout for g in names)
        return f"{benchmark}: {len(names) - held} development task(s), {held} held-out task(s) ({split.what}s)"
    return f"{benchmark} {split.what}(s) " + ", ".join(f"{s} ({split.role(s)})" for s in units)


_SIDES: dict[str, tuple[str, str, str]] = {
    # side: (what is refused, the message's verb, the fix)
    "fit": ("development", "fit on {unit}", "fit on a development dataset (evaluate --train DEV)"),
    "held out": ("heldout", "score {unit} as held out", "evaluate a held-out dataset"),
}


def check_split(provenance: dict[str, Any], what: str, side: Literal["fit", "held out"],
                games: list[str] | None = None) -> None:
    """Refuse, with one line (exit 2), games of a unit not registered for ``side``: to fit on
    (``"fit"``), only development units; to score as held out (``"held out"``), only held-out
    units (a development unit was fitted or tuned on; an unregistered one is unknown). A fixture
    that registers no held-out unit (the vault) is exempt from the held-out check: its held-out
    runs test the code."""
    benchmark = provenance.get("benchmark")
    split = split_of(benchmark)
    field, verb, fix = _SIDES[side]
    allowed = () if split is None else getattr(split, field)
    if split is None or not allowed:
        return
    bad = [s for s in seeds_of(provenance, games) if s not in allowed]
    if bad:
        unit = f"{benchmark} {split.what} {bad[0]} ({split.role(bad[0])})"
        raise UsageError(f"{what}: refusing to {verb.format(unit=unit)}; {split.describe()} in "
                         f"suites/oversight/seeds.py; {fix}")
