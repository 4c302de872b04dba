"""The one registry of generator seeds per benchmark: which are for development, which held out.

A controller, a threshold, a regime or a slip rate may be fitted only on games of a development
seed; a held-out seed's games are for evaluation only. Every build and evaluate command says
which seeds a dataset used, and fitting on anything but a development seed (a held-out seed, or
a seed not registered yet: register a fresh seed here before using it) is refused with one line.

ALFWorld's record (docs/oversight.md, docs/oversight-history.md): seed 0 is where everything was
designed and tuned; seeds 1 and 2 were held-out sets of earlier measurements, seed 3 of the
first costly-configuration headline, seed 4 of the current headline (issue 34), and seed 8 of
the game-level cross-validation reported in issue 54. Benchmarks without a game generator
(ScienceWorld, GraphRAG, the suites) have no seeds here: their splits are by game.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agentbed.errors import UsageError


@dataclass(frozen=True)
class SeedSplit:
    development: tuple[int, ...]
    heldout: tuple[int, ...]

    def role(self, seed: int) -> str:
        if seed in self.development:
            return "development"
        return "held out" if seed in self.heldout else "unregistered"

    def describe(self) -> str:
        return (f"development seeds {', '.join(map(str, self.development))}; "
                f"held-out seeds {', '.join(map(str, self.heldout))}")


SEEDS: dict[str, SeedSplit] = {
    "alfworld": SeedSplit(development=(0,), heldout=(1, 2, 3, 4, 8)),
}

_ALFWORLD_ID = re.compile(r"^s(\d+)-\d{3}-")


def _alfworld_seed(game: str) -> int:
    """``NNN-type`` is seed 0, ``sS-NNN-type`` seed S (environments/alfworld/games.game_id)."""
    found = _ALFWORLD_ID.match(game)
    return int(found.group(1)) if found else 0


def seeds_of(provenance: dict[str, Any], games: list[str] | None = None) -> list[int]:
    """The generator seeds of a dataset's games (read from the game ids, so a merge of parts of
    several seeds shows them all); empty for a benchmark without a generator."""
    if provenance.get("benchmark") not in SEEDS:
        return []
    return sorted({_alfworld_seed(g) for g in (games if games is not None else provenance.get("games", []))})


def describe_seeds(provenance: dict[str, Any], games: list[str] | None = None) -> str:
    """One line: the seeds a dataset used and their roles."""
    benchmark = provenance.get("benchmark", "?")
    seeds = seeds_of(provenance, games)
    if benchmark not in SEEDS:
        return f"{benchmark}: no game generator (split by game)"
    split = SEEDS[benchmark]
    return f"{benchmark} generator seed(s) " + ", ".join(f"{s} ({split.role(s)})" for s in seeds)


def check_fit(provenance: dict[str, Any], what: str, games: list[str] | None = None) -> None:
    """Refuse to fit on games that are not of a development seed (one line, exit 2)."""
    benchmark = provenance.get("benchmark")
    if benchmark not in SEEDS:
        return
    split = SEEDS[benchmark]
    bad = [s for s in seeds_of(provenance, games) if s not in split.development]
    if bad:
        raise UsageError(f"{what}: refusing to fit on {benchmark} generator seed {bad[0]} ({split.role(bad[0])}; "
                         f"{split.describe()} in suites/oversight/seeds.py); fit on a development dataset "
                         "(evaluate --train DEV)")
