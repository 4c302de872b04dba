"""The spaCy extractor's parses (:mod:`environments.graphrag.nlp_extract`), batched.

spaCy's ``pipe`` over many short lines costs about 60% of what it costs a paragraph at a time
(every foreign-prose set: 27 s against 43 s of CPU), so a call parses the lines of all its
documents in one stream, and a caller that reads many documents one call each (a user's
paragraphs, each against its own context) can parse them all ahead. A line's parse does not
depend on the lines batched with it: on every foreign-prose set's 8,342 lines, parsed alone, a
paragraph at a time and in one stream, every token's tag, part of speech, lemma, arc, entity
and sentence start is the same.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any


class Parses:
    """Lines parsed ahead, kept by text until a call reads them (each once)."""

    def __init__(self) -> None:
        self._ahead: dict[str, Any] = {}

    def ahead(self, nlp: Any, texts: Sequence[str]) -> None:
        self._ahead.update(zip(texts, nlp.pipe(texts), strict=True))

    def of(self, nlp: Any, groups: Sequence[tuple[str, ...]]) -> Iterator[list[Any]]:
        """Per group of lines (a document's), their parses in order: those parsed ahead, the
        others parsed in one stream over every group."""
        ready = [[self._ahead.pop(t, None) for t in group] for group in groups]
        stream = nlp.pipe(t for group, got in zip(groups, ready, strict=True)
                          for t, parsed in zip(group, got, strict=True) if parsed is None)
        for got in ready:
            yield [parsed if parsed is not None else next(stream) for parsed in got]
