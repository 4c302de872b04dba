"""Triple extraction with a LangChain chat model, and how any extractor is scored.

Each chunk is sent to the model with the list of allowed relations. The default prompt
(``graphrag``) follows the shape of Microsoft GraphRAG's entity-extraction prompt (Edge et al.,
"From Local to Global: A Graph RAG Approach to Query-Focused Summarization", 2024; the
``entity_extraction`` prompt of github.com/microsoft/graphrag, MIT): entities first, then
relationships, each a parenthesised record of fields split by ``<|>``, records split by ``##``,
the list closed by ``<|COMPLETE|>``; here a relationship names one of the schema's relations
in place of GraphRAG's free description and strength, with a status ("current" or "no longer")
and a date. The wording is ours; GraphRAG's "gleaning" rounds (asking again for missed
entities) are not made. The ``json`` prompt asks for ``{"triples": [{"head", "relation", "tail",
"negated", "date"}]}``. Malformed replies and records are counted and skipped, never fatal: an
LLM's bad output is data, not a crash.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from agentbed.stats import Interval
from environments.graphrag.corpus import Document, Statement

PROMPT = (
    "Extract every fact stated in the text as a knowledge-graph triple. Use only these relations: {relations}. "
    "Copy entity names exactly as written. Mark a fact the text says is no longer true with \"negated\": true, "
    "and give its date (YYYY/MM/DD) when the text dates it. Reply with JSON only: "
    '{{"triples": [{{"head": "...", "relation": "...", "tail": "...", "negated": false, "date": ""}}]}}'
)
GRAPHRAG_PROMPT = (
    "Goal: given a text, find the entities it names (people, organisations, places) and every relationship "
    "between them that the text states, using only these relations: {relations}.\n"
    "Steps:\n"
    "1. For each entity, write (\"entity\"<|>NAME<|>TYPE) with NAME exactly as written and TYPE one of "
    "person, organisation, place.\n"
    "2. For each stated relationship, write (\"relationship\"<|>HEAD<|>RELATION<|>TAIL<|>STATUS<|>DATE) where "
    "RELATION is one of the relations above, STATUS is current, or no longer if the text says it has ended, and "
    "DATE is YYYY/MM/DD when the text dates it, else empty.\n"
    "3. Separate the records with ##.\n"
    "4. When finished, write <|COMPLETE|>.\n"
    "Example: text \"Ann Lee, born in Tiszel, no longer works for Acme.\" gives "
    "(\"entity\"<|>Ann Lee<|>person)##(\"entity\"<|>Tiszel<|>place)##(\"entity\"<|>Acme<|>organisation)##"
    "(\"relationship\"<|>Ann Lee<|>born_in<|>Tiszel<|>current<|>)##"
    "(\"relationship\"<|>Ann Lee<|>works_for<|>Acme<|>no longer<|>)<|COMPLETE|>"
)
PROMPTS = {"graphrag": GRAPHRAG_PROMPT, "json": PROMPT}
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")
_DATE = re.compile(r"^\d{4}/\d{2}/\d{2}$")


@dataclass
class LLMExtractor:
    model: BaseChatModel
    relations: Sequence[str]
    prompt: str = "graphrag"  # a key of PROMPTS
    skipped: int = 0
    failed: int = 0  # calls that raised (timeouts, server errors): counted, the chunk yields nothing
    calls: int = 0
    errors: list[str] = field(default_factory=list)  # the first few failures' messages, for the report
    usage: dict[str, int] = field(default_factory=lambda: {"input_tokens": 0, "output_tokens": 0})
    name: str = ""  # the model string, part of each call's cache key
    cache: Any = None  # an agentbed.agents.cache.ModelCallCache: a repeated call is answered from it
    cached: int = 0  # calls answered from the cache

    @classmethod
    def from_model_string(cls, model: str, relations: Sequence[str], *, timeout: float = 300.0,
                          max_tokens: int = 160, cache: Any = True, **kwargs: Any) -> LLMExtractor:
        """``provider:model`` through LangChain's ``init_chat_model`` (temperature 0); ``local:NAME``
        is the llama.cpp server the run started (:mod:`agentbed.agents.local`), whose calls ``timeout``
        and ``max_tokens`` bound (a loaded machine generates its replies at under one token a second).
        ``cache``: True for the per-user model-call cache every run uses by default
        (:class:`agentbed.agents.cache.ModelCallCache`), a cache, or None for none."""
        if cache is True:
            from agentbed.agents.cache import ModelCallCache

            cache = ModelCallCache()
        if model.startswith("local:"):
            from agentbed.agents.local.profile import LocalProfile, local_chat_model

            return cls(local_chat_model(model, LocalProfile(max_tokens=max_tokens), timeout=timeout, **kwargs),
                       relations, name=f"{model}|max_tokens={max_tokens}", cache=cache)
        from langchain.chat_models import init_chat_model

        return cls(init_chat_model(model, temperature=0, **kwargs), relations, name=model,  # the provider's limits
                   cache=cache)

    def _invoke(self, messages: list[Any]) -> Any:
        """The model's reply to ``messages``, from the model-call cache when this request was made
        before (keyed by the model string, the messages and the prompt's name), else from the model,
        then stored. A failed call is not stored."""
        if self.cache is None or not self.name:
            return self.model.invoke(messages)
        from langchain_core.messages import message_to_dict, messages_from_dict

        from agentbed.agents.cache import CachedReply, cache_key

        key = cache_key(provider="graphrag-extractor", model=self.name,
                        messages=[message_to_dict(m) for m in messages], tools=[],
                        params={"prompt": self.prompt, "temperature": 0}, seed=0, epoch=0)
        held = self.cache.get(key)
        if held is not None:
            self.cached += 1
            return messages_from_dict([held.message])[0]
        reply = self.model.invoke(messages)
        held = self.cache.put(key, CachedReply(message_to_dict(reply), {}), model=self.name)
        return messages_from_dict([held.message])[0]

    def __call__(self, documents: Sequence[Document], context: Sequence[Document] | None = None) -> list[Statement]:
        """Statements of ``documents``, one call per chunk (``context``: unused, each chunk is read alone)."""
        system = SystemMessage(PROMPTS[self.prompt].format(relations=", ".join(sorted(self.relations))))
        out: list[Statement] = []
        for doc in documents:
            for chunk_id, sentences in doc.chunks():
                self.calls += 1
                try:
                    reply = self._invoke([system, HumanMessage(" ".join(sentences))])
                except Exception as exc:  # noqa: BLE001 - a failed call is data about the model, not a crash
                    self.failed += 1
                    if len(self.errors) < 3:
                        self.errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
                    continue
                meta = getattr(reply, "usage_metadata", None) or {}
                for key in self.usage:
                    self.usage[key] += int(meta.get(key, 0))
                out += self.parse(reply.content, doc.id, chunk_id)
        return out

    def parse(self, content: Any, doc: str, chunk: str) -> list[Statement]:
        text = content if isinstance(content, str) else json.dumps(content)
        if self.prompt == "graphrag":
            return self.parse_records(text, doc, chunk)
        try:
            data = json.loads(_FENCE.sub("", text.strip()))
            triples = data["triples"]
            if not isinstance(triples, list):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            self.skipped += 1
            return []
        statements = []
        for t in triples:
            ok = (isinstance(t, dict) and all(isinstance(t.get(k), str) and t.get(k) for k in ("head", "relation", "tail"))
                  and t["relation"] in self.relations)
            date = t.get("date") or "" if isinstance(t, dict) else ""
            if not ok or not isinstance(date, str) or (date and not _DATE.match(date)):
                self.skipped += 1
                continue
            statements.append(Statement(t["head"], t["relation"], t["tail"], doc, chunk,
                                        negated=bool(t.get("negated", False)), dated=date))
        return statements


    def parse_records(self, text: str, doc: str, chunk: str) -> list[Statement]:
        """The ``graphrag`` prompt's records: relationships become statements, entities are read
        past, anything else is counted as skipped (a reply of only ``<|COMPLETE|>`` states nothing)."""
        body = _FENCE.sub("", text.strip()).split("<|COMPLETE|>")[0]
        statements = []
        for record in (r.strip().strip("()").strip() for r in re.split(r"##|\n", body) if r.strip()):
            fields = [f.strip().strip('"').strip() for f in record.split("<|>")]
            if fields[0].lower() == "entity":
                continue
            if fields[0].lower() != "relationship" or len(fields) < 4:
                self.skipped += 1
                continue
            head, relation, tail = fields[1:4]
            status = fields[4].lower() if len(fields) > 4 else ""
            date = fields[5] if len(fields) > 5 else ""
            if not (head and tail and relation in self.relations) or (date and not _DATE.match(date)):
                self.skipped += 1
                continue
            statements.append(Statement(head, relation, tail, doc, chunk, negated=status.startswith("no"),
                                        dated=date))
        return statements


@dataclass(frozen=True)
class ExtractionQuality:
    """Extracted statements against the gold triples the documents state."""

    extracted: int
    correct: int
    gold: int
    found: int

    @property
    def precision(self) -> float:
        return self.correct / self.extracted if self.extracted else 0.0

    @property
    def recall(self) -> float:
        return self.found / self.gold if self.gold else 0.0


def extraction_quality(extracted: Sequence[Statement], gold: Sequence[Statement]) -> ExtractionQuality:
    """Precision and recall of (head, relation, tail, negated) per document: a triple counts
    when the same document states it (the gold statements are what the writer's sentences claim)."""
    got, want = _keys(extracted), _keys(gold)
    return ExtractionQuality(len(got), len(got & want), len(want), len(got & want))


def _keys(statements: Sequence[Statement]) -> set[tuple[str, str, str, str, bool]]:
    return {(s.doc, s.head, s.relation, s.tail, s.negated) for s in statements}


def extraction_intervals(extracted: Sequence[Statement], gold: Sequence[Statement], *,
                         seed: int = 0, resamples: int = 2000) -> dict[str, Interval]:
    """Micro precision and recall with 95% cluster-bootstrap intervals over documents (whole
    documents are resampled; the statistic is pooled hits over pooled triples)."""
    got, want = _keys(extracted), _keys(gold)
    docs = sorted({k[0] for k in got | want})
    where = {d: i for i, d in enumerate(docs)}

    def per_doc(keys: set, other: set) -> tuple[np.ndarray, np.ndarray]:
        hits, total = np.zeros(len(docs)), np.zeros(len(docs))
        for k in keys:
            total[where[k[0]]] += 1
            hits[where[k[0]]] += k in other
        return hits, total

    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(docs), size=(resamples, len(docs))) if docs else np.zeros((0, 0), dtype=int)
    out = {}
    for name, (hits, total) in (("precision", per_doc(got, want)), ("recall", per_doc(want, got))):
        n = int(total.sum())
        if n == 0:
            out[name] = Interval(float("nan"), float("nan"), float("nan"), 0)
            continue
        sums_h, sums_t = hits[draws].sum(axis=1), total[draws].sum(axis=1)
        ratios = sums_h[sums_t > 0] / sums_t[sums_t > 0]
        lo, hi = np.quantile(ratios, [0.025, 0.975])
        out[name] = Interval(float(hits.sum() / n), float(lo), float(hi), n)
    return out
