"""How well the deployed extractor reads the corpora the index is built from: precision and
recall of its triples against the claims the writer's (and the attacker's) sentences make.

Clean corpora of the evaluation worlds and of a real graph, and the poison documents of an
attack (the attack's prose goes through the same extractor). Intervals are 95% cluster
bootstraps over documents.
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
from environments.graphrag.lexicon import LexiconExtractor
from suites.graphrag.scenarios import EVAL_WORLD_BASE, load_dataset

Corpus = tuple[str, Dataset, Sequence[Document], Sequence[Document]]  # label, dataset, scored, linking context


def _measure(corpora: Sequence[Corpus]) -> tuple[int, int, int, dict]:
    """Pooled over the corpora: documents, gold and extracted triples, precision and recall."""
    got: list[Statement] = []
    gold: list[Statement] = []
    docs = 0
    for label, data, scored, corpus in corpora:
        extract = LexiconExtractor(sorted(data.table.phrases))
        tag = {d.id: f"{label}/{d.id}" for d in scored}
        got += [_tagged(s, tag) for s in extract(scored, context=corpus)]
        gold += [_tagged(s, tag) for s in gold_statements(scored)]
        docs += len(scored)
    return docs, len(gold), len(got), extraction_intervals(got, gold)


def _tagged(s: Statement, tag: dict[str, str]) -> Statement:
    return Statement(s.head, s.relation, s.tail, tag[s.doc], s.chunk, s.negated, s.dated)


def extraction_rows(worlds: int, real: str | None, attack: str = "gragpoison") -> tuple[list[list[Any]], Interval]:
    """Table rows, and the clean worlds' recall (for a finding)."""
    rows = []
    datas = [load_dataset("world", EVAL_WORLD_BASE + w) for w in range(worlds)]
    measured = _measure([(d.name, d, d.documents, d.documents) for d in datas])
    rows.append(_row(f"generated worlds ({worlds}), clean", measured))
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
    return rows, recall


def _row(label: str, measured: tuple[int, int, int, dict]) -> list[Any]:
    docs, gold, got, iv = measured
    return [label, docs, gold, got, fmt(iv["precision"], 3), fmt(iv["recall"], 3)]


def extraction_table(worlds: int, real: str | None) -> tuple[dict[str, Any], Interval]:
    rows, recall = extraction_rows(worlds, real)
    command = f"agentbed graphrag extract --docs 1000 (per world; --dataset {real or 'nations'})"
    return table("Triple extraction: the rule-based extractor against the writers' claims",
                 ["corpus", "documents", "gold triples", "extracted", "precision", "recall"], rows,
                 note="the index is built from these extracted triples, errors included; 95% cluster-bootstrap "
                      f"intervals over documents; per corpus: {command}; the local model's LLM extractor: "
                      "docs/graphrag.md"), recall
