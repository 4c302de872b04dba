"""Real knowledge graphs read offline from the pykeen 1.11.1 wheel: Nations, Kinships, UMLS.

``scripts/fetch-pykeen`` downloads the wheel pinned by sha256 and extracts the tab-separated
triple files into ``.cache/pykeen/<name>/{train,valid,test}.txt``. Triples become encyclopedia
pages in prose (one per entity, several surface forms per relation, several objects per
sentence, pronouns, distractors; every triple on its head's page, half of them also on their
object's); questions follow chains of (entity, relation) pairs that have exactly one object in
the whole graph, worded in English (:mod:`environments.graphrag.realquestions`), never with a
relation's identifier.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

from agentbed.errors import UsageError
from environments.graphrag.corpus import Fact
from environments.graphrag.dataset import Dataset, objects_index, sample_questions
from environments.graphrag.prose import Writer, real_forms, write_pages
from environments.graphrag.realquestions import question_text

REAL_DATASETS = ("nations", "kinships", "umls")
FETCH_COMMAND = "scripts/fetch-pykeen"


def cache_dir() -> Path:
    default = Path(__file__).resolve().parents[2] / ".cache" / "pykeen"
    return Path(os.environ.get("AGENTBED_PYKEEN_DIR", default))


def available(name: str) -> bool:
    return all((cache_dir() / name / f"{split}.txt").is_file() for split in ("train", "valid", "test"))


def read_triples(name: str) -> list[Fact]:
    if name not in REAL_DATASETS:
        raise UsageError(f"--dataset: {name!r} is not one of {', '.join(REAL_DATASETS)}")
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


def load_real(name: str, *, questions: int = 40, seed: int = 0, max_hops: int = 2) -> Dataset:
    facts = read_triples(name)
    relations = sorted({f.relation for f in facts})
    forms = {r: real_forms(r) for r in relations}
    writer = Writer({r: f[0] for r, f in forms.items()}, {r: f[1] for r, f in forms.items()}, show=display,
                    phrases={r: f"is linked by {r} to" for r in relations})
    index = objects_index(facts)
    rng = random.Random(seed)
    plans: list[tuple[str, ...]] = [(r,) for r in relations]
    unique = {(h, r): objs[0] for (h, r), objs in index.items() if len(set(objs)) == 1}
    if max_hops >= 2:
        by_head: dict[str, set[str]] = {}
        for h, r in unique:
            by_head.setdefault(h, set()).add(r)
        two = sorted({(r1, r2) for (_, r1), t in unique.items() for r2 in by_head.get(t, ())})
        plans += [p for p in two if p[0] != p[1]][:60]
    phrasing = random.Random(f"{name}-questions-{seed}")
    qs = sample_questions(index, plans, questions, rng, lambda topic, plan: question_text(name, topic, plan, phrasing),
                          prefix=f"{name}-q")
    docs = write_pages(facts, writer, random.Random(f"{name}-prose-{seed}"), tail_share=0.5)
    return Dataset(name, facts, writer, docs, qs, index)


def display(entity: str) -> str:
    """How a page writes an entity's identifier: ``acquired_abnormality`` as "Acquired abnormality"."""
    text = entity.replace("_", " ")
    return text[:1].upper() + text[1:]
