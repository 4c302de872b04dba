"""A team plan: who writes which unit, in which conversation, and with which pieces.

Its own module so that the scheduler (which simulates a plan) and the strategies (which build
plans and simulate candidates) both import it without importing each other."""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx

from controllers.cocoder.chunking import Piece


@dataclass(frozen=True)
class Plan:
    strategy: str
    context: dict[str, str]  # module -> context id
    worker: dict[str, int] | None  # module -> its agent, or None: any free worker of the pool
    workers: int
    respect_deps: bool  # False: all files at once, dependencies seen as interfaces only
    groups: list[list[str]] = field(default_factory=list)
    graph: nx.DiGraph | None = None  # the work graph when it differs from the module graph (pieces)
    pieces: dict[str, Piece] = field(default_factory=dict)
    variant: str = ""  # cocoder: "file", "split-simultaneous", "split-ordered" or "split-ordered-late" (the winner)
    fresh_context: bool = False  # every turn starts a new conversation (its own earlier units shown, not kept)

    def work_graph(self, modules: nx.DiGraph) -> nx.DiGraph:
        return self.graph if self.graph is not None else modules

    def module_of(self, node: str) -> str:
        return self.pieces[node].module if node in self.pieces else node
