"""The GraphRAG poisoning suite: generated worlds and real graphs, attacks, defenses, the reader."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from suites.graphrag.scenarios import graphrag_suite


def _demo(out_dir: Path) -> dict[str, Any]:
    from suites.graphrag.demo import demo

    return demo(out_dir)


SUITE = graphrag_suite(demo=_demo)
