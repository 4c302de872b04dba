"""How well the extractors read the corpora the index is built from: precision and recall of
their triples against the claims the writer's (and the attacker's) sentences make.

Clean corpora of the evaluation worlds and of a real graph, and the poison documents of an
attack (the attack's prose goes through the same extractor), read by the rules (the suite's
extractor); the clean worlds and the newest foreign-prose set also by spaCy (a user's own text's
extractor, issue 50), where its pipeline is installed. Intervals are 95% cluster bootstraps over
documents.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from agentbed.stats import Interval
from agentbed.summary import fmt, table
from attacks.graphrag import ATTACKS, plan_attack
from attacks.graphrag.scenario import target_questions
from attacks.graphrag.targets import AttackBudget
from environments.graphrag.corpus import Document, Statement, gold_statements
from environments.graphrag.dataset import Dataset
from environments.graphrag.extract import extraction_intervals
from environments.graphrag.extractors import make_extractor
from suites.graphrag.scenarios import EVAL_WORLD_BASE, load_dataset

Corpus = tuple[str, Dataset, Sequence[Document], Sequence[Document]]  # label, dataset, scored, linking context


# The newest foreign-prose set: real entities in issue 50's eight styles, by a writer who saw no
# project code; held out until its one measurement (docs/graphrag-extraction.md).
PROSE_SET = "set-13"


def _measure(corpora: Sequence[Corpus], extractor: str = "rules") -> tuple[int, int, int, dict]:
    """Pooled over the corpora: documents, gold and extracted triples, precision and recall."""
    got: list[Statement] = []
    gold: list[Statement] = []
    docs = 0
    for label, data, scored, corpus in corpora:
        extract = make_extractor(extractor, sorted(data.table.phrases))
        tag = {d.id: f"{label}/{d.id}" for d in scored}
        got += [_tagged(s, tag) for s in extract(scored, context=corpus)]
        gold += [_tagged(s, tag) for s in gold_statements(scored)]
        docs += len(scored)
    return docs, len(gold), len(got), extraction_intervals(got, gold)


def _tagged(s: Statement, tag: dict[str, str]) -> Statement:
    return Statement(s.head, s.relation, s.tail, tag[s.doc], s.chunk, s.negated, s.dated)


def extraction_rows(worlds: int, real: str | None, attack: str = "gragpoison") -> tuple[list[list[Any]], Interval]:
    """Table rows, and the clean worlds' recall (for a finding)."""
    from environments.graphrag.nlp_extract import pipeline_available

    rows = []
    datas = [load_dataset("world", EVAL_WORLD_BASE + w) for w in range(worlds)]
    clean = [(d.name, d, d.documents, d.documents) for d in datas]
    measured = _measure(clean)
    rows.append(_row(f"generated worlds ({worlds}), clean", measured))
    if pipeline_available():
        rows.append(_row(f"generated worlds ({worlds}), clean", _measure(clean, "spacy"), "spacy"))
    recall = measured[3]["recall"]
    poison = []
    for w, data in enumerate(datas):
        seed = EVAL_WORLD_BASE + w
        plan = plan_attack(data, target_questions(data, 12), seed)
        added = ATTACKS[attack](data, plan, random.Random(seed), budget=AttackBudget.of(5)).added
        poison.append((data.name, data, added, [*data.documents, *added]))
    rows.append(_row(f"generated worlds ({worlds}), {attack} poison documents", _measure(poison)))
    if real:
        data = load_dataset(real, 0)
        rows.append(_row(f"{real}, clean", _measure([(real, data, data.documents, data.documents)])))
    rows += prose_rows(("rules", "spacy") if pipeline_available() else ("rules",))
    return rows, recall


def prose_rows(extractors: Sequence[str]) -> list[list[Any]]:
    """The newest foreign-prose set, per extractor: real people, places and organisations."""
    from suites.graphrag.foreign import SETS, extract_paragraphs, load_paragraphs

    paragraphs = [p for p in load_paragraphs(SETS[PROSE_SET][0]) if p.kind == "real"]
    rows = []
    for extractor in extractors:
        got, gold = extract_paragraphs(paragraphs, extractor=extractor)  # each paragraph read once
        rows.append(_row(f"foreign prose {PROSE_SET} (real entities, another writer)",
                         (len(paragraphs), len(gold), len(got), extraction_intervals(got, gold)), extractor))
    return rows


def _row(label: str, measured: tuple[int, int, int, dict], extractor: str = "rules") -> list[Any]:
    docs, gold, got, iv = measured
    return [label, extractor, docs, gold, got, fmt(iv["precision"], 3), fmt(iv["recall"], 3)]


def extraction_table(worlds: int, real: str | None) -> tuple[dict[str, Any], Interval]:
    rows, recall = extraction_rows(worlds, real)
    command = f"agentbed graphrag extract --docs 1000 (per world; --dataset {real or 'nations'})"
    from environments.graphrag.nlp_extract import INSTALL, pipeline_available

    missing = "" if pipeline_available() else f"; spaCy rows left out: its pipeline is not installed ({INSTALL})"
    return table("Triple extraction: the rule-based and spaCy extractors against the writers' claims",
                 ["corpus", "extractor", "documents", "gold triples", "extracted", "precision", "recall"], rows,
                 note="the suite's index is built from the rules' triples, errors included (spaCy reads a user's own "
                      f"text: graphrag extract FILE); 95% cluster-bootstrap intervals over documents; per corpus: "
                      f"{command}; foreign prose: python -m suites.graphrag.foreign --set {PROSE_SET} --extractor "
                      "rules|spacy (held out until its one measurement: docs/graphrag-extraction.md); the local "
                      f"model's LLM extractor: docs/graphrag.md{missing}"), recall
