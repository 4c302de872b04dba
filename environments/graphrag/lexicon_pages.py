"""The rule extractor's gazetteer (:mod:`environments.graphrag.lexicon`, step 1): the pages a corpus
holds, by normalised title, each named as :func:`~environments.graphrag.corpus.canonical_names`
names it, with the entities each title word can name and the longest title in words.

A white-box attacker reads each candidate page it writes with the whole clean corpus as context,
hundreds of times per corpus; :class:`Pages` counts a fixed corpus's title mentions once and
extends them per call by the pages read beside it. A name is a function of the mentions as a
multiset, so the extended gazetteer is the one built from scratch over both
(``tests/graphrag/test_lexicon_pages.py`` checks it, names in the same order).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from environments.graphrag.corpus import Document, canonical_names, most_used
from environments.graphrag.lexicon_forms import GENERIC_NAME_WORDS


@lru_cache(maxsize=1 << 16)  # a pure function called per token and per page: the shape dress reads pages hundreds of times
def normalise(text: str) -> str:
    """Lower case in NFC, ``_`` and ``-`` as spaces, commas and semicolons as words of their own
    (so a name with a comma, "Paris, Texas", reads as the text's tokens do)."""
    text = unicodedata.normalize("NFC", text).lower()
    return " ".join(re.sub(r"[_\-]", " ", re.sub(r"([,;])", r" \1 ", text)).split())


@dataclass(frozen=True)
class Gazetteer:
    """Entity linking's pages: ``names`` (normalised title -> entity), ``by_word`` (a title word ->
    the entities whose titles hold it, generic words left out), ``longest`` (words in the
    longest title, 1 without any) and ``firsts`` (the first word of every title, where a match
    can start). Read only: a reader never changes it."""

    names: dict[str, str]
    by_word: dict[str, set[str]]
    longest: int
    firsts: frozenset[str]


def mentions(pages: Iterable[Document]) -> list[tuple[str, str]]:
    """(normalised title, title) of every page whose own text names its title: a page about that entity."""
    return [(key, d.title) for d in pages for key in [normalise(d.title)] if key in normalise(d.text())]


def gazetteer(pages: Iterable[Document]) -> Gazetteer:
    """The gazetteer of ``pages``, built from scratch."""
    return gazetteer_of(mentions(pages))


def gazetteer_of(found: Iterable[tuple[str, str]]) -> Gazetteer:
    """The gazetteer of the pages whose :func:`mentions` are ``found``, in their order."""
    names = canonical_names(found)
    by_word: dict[str, set[str]] = {}
    for name, entity in names.items():
        for w in set(name.split()) - GENERIC_NAME_WORDS:
            by_word.setdefault(w, set()).add(entity)
    return Gazetteer(names, by_word, max((len(n.split()) for n in names), default=1), first_words(names))


def first_words(names: Iterable[str]) -> frozenset[str]:
    return frozenset(n.partition(" ")[0] for n in names)


class Pages:
    """The gazetteer of a fixed corpus ``base`` (its title mentions counted once), and of ``base``
    with other pages beside it (:meth:`extended`). ``base`` must not change afterwards (the
    attacker's copy of the clean corpus, which no caller edits)."""

    def __init__(self, base: Iterable[Document]) -> None:
        self._counts: dict[str, dict[str, int]] = {}
        for key, spelling in mentions(base):
            c = self._counts.setdefault(key, {})
            c[spelling] = c.get(spelling, 0) + 1
        names = {key: most_used(c) for key, c in self._counts.items()}
        by_word: dict[str, set[str]] = {}
        for name, entity in names.items():
            for w in set(name.split()) - GENERIC_NAME_WORDS:
                by_word.setdefault(w, set()).add(entity)
        self._longest = max((len(n.split()) for n in names), default=0)
        self.base = Gazetteer(names, by_word, self._longest if names else 1, first_words(names))

    def extended(self, pages: Sequence[Document]) -> Gazetteer:
        """The gazetteer of ``[*base, *pages]``, equal to :func:`gazetteer` of it: the keys the
        pages mention counted again with theirs (new keys after the base's, in the order the
        pages first mention them, as a from-scratch count orders them), the words of each key
        whose name changed pointed at the new name (one entity per key: a name normalises to its key)."""
        added = mentions(pages)
        if not added:
            return self.base
        counts: dict[str, dict[str, int]] = {}
        for key, spelling in added:
            c = counts.get(key)
            if c is None:
                c = counts[key] = dict(self._counts.get(key, ()))
            c[spelling] = c.get(spelling, 0) + 1
        names = dict(self.base.names)
        by_word = dict(self.base.by_word)
        longest, new = self._longest, []
        for key, c in counts.items():
            entity, old = most_used(c), names.get(key)
            names[key] = entity
            if old is None:
                longest = max(longest, len(key.split()))
                new.append(key)
            if entity != old:
                for w in set(key.split()) - GENERIC_NAME_WORDS:
                    held = set(by_word.get(w, ()))
                    if old is not None:
                        held.discard(old)
                    held.add(entity)
                    by_word[w] = held
        return Gazetteer(names, by_word, longest if names else 1, self.base.firsts | first_words(new))
