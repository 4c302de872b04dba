"""A user's own text as documents, read the one way ``graphrag extract FILE``, ``graphrag build``
and the foreign-prose scorer (:mod:`suites.graphrag.foreign`) read it."""

from __future__ import annotations

import re
from pathlib import Path

from agentbed.errors import UsageError
from environments.graphrag.corpus import Document

DEFAULT_WORLD = 1000  # the generated world whose entities `graphrag extract FILE` links unless --world


def split_sentences(text: str) -> list[str]:
    """A user's paragraph as sentences: they end at ., ! or ? before a space."""
    return [x for x in re.split(r"(?<=[.!?])\s+", text) if x]


def user_document(doc_id: str, title: str, lines: list[str]) -> Document:
    """A paragraph whose line structure is kept: a sentence never runs past its line's end (a
    field "Born: X", a bullet, a table row stays its own sentence)."""
    return Document(doc_id, title, [s for line in lines for s in split_sentences(" ".join(line.split()))])


def paragraph_document(doc_id: str, title: str, lines: list[str], lines_kept: bool = False) -> Document:
    """One paragraph of a user's text under its ``title`` ("" for none): its lines kept as
    sentence ends (``lines_kept``: the spaCy and LLM extractors' reading) or joined."""
    return user_document(doc_id, title, lines) if lines_kept else Document(doc_id, title, split_sentences(" ".join(lines)))


def read_user_documents(path: Path, lines_kept: bool = False) -> list[Document]:
    """A user's text as documents: one per paragraph (blank-line separated); a paragraph's first
    line is its title when it ends without sentence punctuation (a heading), and sentences end
    at ., ! or ? before a space."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read as UTF-8 text ({exc.__class__.__name__})") from None
    docs = []
    for k, block in enumerate(p for p in re.split(r"\n\s*\n", text) if p.strip()):
        lines = [line.strip() for line in block.strip().splitlines()]
        title = lines.pop(0) if len(lines) > 1 and not re.search(r"[.!?]$", lines[0]) else ""
        docs.append(paragraph_document(f"p{k}", title, lines, lines_kept))
    if not docs:
        raise UsageError(f"{path}: no text to extract from")
    return docs


def own_text_extractor(chosen: str | None, about_world: bool = False) -> tuple[str, str]:
    """The extractor for a user's own files and the note saying why, when ``--extractor`` is not
    given: ``spacy`` for prose about real people and organisations (it beats the rules on every
    foreign-prose set's real entities: docs/graphrag-extraction.md), ``rules`` for text about a
    generated world (``graphrag extract FILE --world N``), whose invented names the rules link
    through the world's own pages and spaCy's pipeline does not know. The caller prints the note
    (stderr, after the input was read), so the choice is never hidden."""
    if chosen:
        return chosen, ""
    extractor = "rules" if about_world else "spacy"
    why = "text about a generated world (--world)" if about_world else "your own text"
    other = "spacy" if about_world else "rules"
    return extractor, f"extractor: {extractor} (the default for {why}; --extractor {other} for the other)"
