"""The one extractor interface: ``rules`` (the baseline, :mod:`~environments.graphrag.lexicon`),
``spacy`` (:mod:`~environments.graphrag.nlp_extract`, its rule stage rescored by the learned pair
stage of :mod:`~environments.graphrag.nlp_pairs`), ``spacy-rules`` (the rule stage alone) and ``llm``
(:class:`~environments.graphrag.extract.LLMExtractor`), each built from the relation names alone
and called as ``extractor(documents, context=pages)``; every one is scored by
:func:`environments.graphrag.extract.extraction_intervals`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from environments.graphrag.corpus import Document, Statement

EXTRACTORS = ("rules", "spacy", "llm", "spacy-rules")


class Extractor(Protocol):
    def __call__(self, documents: Sequence[Document],
                 context: Sequence[Document] | None = None) -> list[Statement]: ...


def make_extractor(name: str, relations: Sequence[str], *, model: str | None = None, timeout: float = 300.0,
                   max_tokens: int = 160) -> Extractor:
    """An extractor by name; ``llm`` needs ``model`` (``local:NAME`` or ``provider:model``).
    Raises ValueError naming what is wrong."""
    if name == "rules":
        from environments.graphrag.lexicon import LexiconExtractor

        return LexiconExtractor(list(relations))
    if name in ("spacy", "spacy-rules"):
        from environments.graphrag.nlp_extract import SpacyExtractor, load_pipeline
        from environments.graphrag.nlp_pairs import PairStage, shipped_model

        load_pipeline()  # a missing pipeline fails here, naming what to install
        if name == "spacy-rules":  # the rule stage alone, without the learned pair stage (the old path)
            return SpacyExtractor(list(relations))
        return SpacyExtractor(list(relations), stage=PairStage(model=shipped_model()))
    if name == "llm":
        if not model:
            raise ValueError("--extractor llm needs --model (local:gemma-3-270m or provider:model)")
        from environments.graphrag.extract import LLMExtractor

        return LLMExtractor.from_model_string(model, relations, timeout=timeout, max_tokens=max_tokens)
    raise ValueError(f"--extractor: {name!r} is not one of {', '.join(EXTRACTORS)}")
