"""The periodic table as a real graph, in mendeleev's own schema: the held-out graph ``periodic``
(session 19), the first whose relations the project never used (not the world's, Nations', UMLS',
Kinships' or GeoNames').

``scripts/fetch-mendeleev`` downloads the mendeleev 1.3.0 wheel pinned by sha256 and extracts its
SQLite database into ``.cache/mendeleev/elements.db`` (read here with :mod:`sqlite3`; mendeleev is
not installed). One relation per field of its ``elements`` table, named as the table names it:
``block`` (s-, p-, d-, f-block), ``period`` (Period 1-7), ``group`` (Group 1-18, from
``group_id``; none for the lanthanides and actinides), ``series`` (the ``series`` table's names:
"Noble gases", "Transition metals"), ``goldschmidt_class`` ("Siderophile"; as the table spells
it), ``lattice_structure`` (its codes written out: "HEX" as "Hexagonal"), ``discoverers`` (one
fact per discoverer, "Known to the ancients" and "et al" left out) and ``discovery_location`` ("England/France"
as two places). The data is written as shipped; only names are made readable (an initial's period
gets a space after it, "G.T.Seaborg" as "G. T. Seaborg"; a parenthesised acronym is dropped).
"""

from __future__ import annotations

import os
import re
import sqlite3
from functools import lru_cache
from pathlib import Path

from agentbed.errors import UsageError
from environments.graphrag.corpus import Fact

FETCH_COMMAND = "scripts/fetch-mendeleev"
LATTICES = {"BCC": "Body-centred cubic", "CUB": "Cubic", "DIA": "Diamond cubic", "FCC": "Face-centred cubic",
            "HEX": "Hexagonal", "MCL": "Monoclinic", "ORC": "Orthorhombic", "RHL": "Rhombohedral",
            "SC": "Simple cubic", "TET": "Tetragonal"}
ANCIENT = "known to the ancients"


def database() -> Path:
    default = Path(__file__).resolve().parents[2] / ".cache" / "mendeleev"
    return Path(os.environ.get("AGENTBED_MENDELEEV_DIR", default)) / "elements.db"


def available() -> bool:
    return database().is_file()


def _person(text: str) -> str:
    text = re.sub(r"\s*\([^)]*\)", "", text).strip().rstrip(".")
    return " ".join(re.sub(r"\.(?=[^\W\d_])", ". ", text).split())


@lru_cache(maxsize=1)
def read_elements() -> list[Fact]:
    path = database()
    if not path.is_file():
        raise UsageError(f"{path}: missing; run {FETCH_COMMAND} to fetch mendeleev's elements database")
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        series = dict(db.execute("SELECT id, name FROM series"))
        rows = db.execute("SELECT name, block, period, group_id, series_id, goldschmidt_class, lattice_structure, "
                          "discoverers, discovery_location FROM elements ORDER BY atomic_number").fetchall()
    facts: set[Fact] = set()
    for name, block, period, group, series_id, goldschmidt, lattice, discoverers, location in rows:
        facts.add(Fact(name, "block", f"{block}-block"))
        facts.add(Fact(name, "period", f"Period {period}"))
        if group:
            facts.add(Fact(name, "group", f"Group {group}"))
        if series_id in series:
            facts.add(Fact(name, "series", series[series_id]))
        if goldschmidt:
            facts.add(Fact(name, "goldschmidt_class", goldschmidt.capitalize()))
        if lattice in LATTICES:
            facts.add(Fact(name, "lattice_structure", LATTICES[lattice]))
        if discoverers and not discoverers.lower().startswith(ANCIENT):
            for who in map(_person, re.split(r"[,;/]\s*|\s+and\s+", discoverers)):
                if who and who.lower() != "et al":
                    facts.add(Fact(name, "discoverers", who))
        for place in filter(None, (location or "").split("/")):
            facts.add(Fact(name, "discovery_location", place.strip()))
    return sorted(facts, key=lambda f: (f.head, f.relation, f.tail))
