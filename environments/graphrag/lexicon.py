"""A rule-based triple extractor for prose: entity linking, a relation lexicon, simple coreference.

It reads documents' text and titles and is given only the relation names (the schema), as the
LLM extractor is; it never sees how the corpus was written (a test checks that this module and
its helpers, :mod:`~environments.graphrag.lexicon_forms` (tables of English forms),
:mod:`~environments.graphrag.lexicon_items` (sentence items, references, object lists),
:mod:`~environments.graphrag.lexicon_pages` (the gazetteer) and
:mod:`~environments.graphrag.lexicon_triples` (segments to triples), import no generator module). The pipeline follows classic open-domain KG construction (Mintz et al.,
"Distant supervision for relation extraction without labeled data", ACL 2009: entity mentions,
then a lexical relation pattern between them):

1. Entity linking: a gazetteer of page titles (a document whose title its own text names is a
   page about that entity; pages whose titles differ only in spelling are one entity, named by
   :func:`~environments.graphrag.corpus.canonical_names`, never by whichever page came last), longest match over normalised words; other capitalised spans are
   new entities (joined over "of", "de", "von", "&", inner periods, "Inc." after a comma; not
   over sentence openers such as "Today", titles such as "CEO", or a field label), or aliases of
   an entity whose name contains all their words (the page's own subject and entities already
   named in the document first, then a unique gazetteer entry; "Vienna" is not "University of
   Vienna").
2. Coreference: a pronoun is the page's subject, else the last subject (in an untitled
   paragraph, a user's text: its first name when no subject is known yet, and the subject
   follows each statement); "I" is a quoted speaker ("'...,' says X") or the topic; "there" is
   the last place; "the company ..." and other subject-less predicates, fields ("Born: X") and
   fronted clauses ("Born in X, Y ...") take the topic or the name after the clause.
3. Relations: cue phrases per relation name (the name's own words, English words for the common
   names and their paraphrases), each a verb (subject is the head), an inverse verb ("employs";
   passive with "by": "founded in 1976 by"), a relational noun ("birthplace": the possessor),
   a field label, a noun with its object before it ("an Aldovia citizen") or a hyphenated prefix
   ("Paris-based X"); appositions ("X, a city in Y") state ``located_in``. A sentence splits into
   one segment per cue at "and", commas and "which"; a segment without its own subject inherits
   the previous one's ("which" takes the entity before it, "who" after a place the subject);
   objects are every entity after the cue, so lists give several triples, except a qualifier
   after a comma in a list without "and" ("Austin, Texas"), names in parentheses and names after
   a dash or "but".
4. Modality: a date anywhere in the sentence dates it; "no longer", "not", "never", "ceased"
   before a cue, or a negative cue ("left"), negate; questions and hedged sentences ("whether",
   "rumours", "allegedly") state nothing.

Rules added for other writers' prose (issue 38.3) leave extraction on the project's own corpora
unchanged (``tests/graphrag/test_extraction_snapshot.py``); those for untitled paragraphs only (a
user's text: more cues and labels, landmarks, qualifiers, openers) end with the type checks of
:mod:`~environments.graphrag.lexicon_types`, which drop statements whose ends' kinds clash. Its errors (missed forms, hedges it
does not know, ambiguous aliases) are measured by
:func:`environments.graphrag.extract.extraction_quality` and flow into the graph.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from environments.graphrag import lexicon_items as parts
from environments.graphrag import lexicon_types
from environments.graphrag.corpus import Document, Statement, has_ends
from environments.graphrag.lexicon_forms import (
    ENGLISH,
    FIELDS,
    FUNCTION_WORDS,
    GENERIC_NAME_WORDS,
    MORE,
    NAME_CONNECTORS,
    NAME_SUFFIXES,
    NEEDS_NAME,
    OPENERS,
    POSSESSIVE_PRONOUNS,
    ROLES,
    TITLES,
    UNTITLED,
    UNTITLED_FIELDS,
    appositions,
    fronted_subject,
)
from environments.graphrag.lexicon_items import DASHES, Context, Cue, Item
from environments.graphrag.lexicon_pages import Gazetteer, gazetteer, normalise
from environments.graphrag.lexicon_triples import triples

NEGATIONS = {"no", "not", "never", "ceased", "longer", "nor"}
HEDGE_WORDS = {"whether", "rumour", "rumours", "rumor", "rumors", "allegedly", "unconfirmed", "denied", "if", "might",
          "may"}
PRONOUNS = {"he", "she", "it", "they"}
BOUNDARIES = {"and", ",", ";", "which", "who", "where"}
STOP_CAPS = {"the", "a", "an", "it", "he", "she", "they", "in", "on", "as", "since", "through", "its", "his", "her",
             "their", "this", "that", "there", "some", "according", "after", "before", "when", "while"}
# Words in any script ("Zürich", "São Paulo"), dates, dotted abbreviations ("D.C.", "Inc."), names
# with an inner period or apostrophe ("Amazon.com", "L'Oréal"), the possessive, list punctuation,
# colons (field labels) and free-standing dashes.
_TOKEN = re.compile(r"\d{4}/\d{2}/\d{2}|(?:[^\W\d_]\.){2,}|(?:Inc|Ltd|Co|Corp|Jr|Sr|St)\."
                    r"|[A-Za-z]['\u2019][A-ZÀ-ÖØ-Þ][\w\-]*|[^\W_][\w\-\u2013]*(?:\.[^\W\d_][\w\-]*)*"
                    r"|['\u2019]s|[,;?:&()]|(?<=\s)[\-\u2013\u2014](?=\s)")
_ELIDED = re.compile(r"[a-z]['\u2019][A-ZÀ-ÖØ-Þ]")  # an elided article inside a name: "d'Ivoire"
_DATE = re.compile(r"\d{4}/\d{2}/\d{2}")


@lru_cache(maxsize=1 << 16)  # a white-box attacker reads the same sentences in each of its candidate pages
def _tokens(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A sentence's tokens (a dateline or kicker dropped, affixes split) and each one's normalised
    form (an affix token as written), in order."""
    tokens = parts.without_header(parts.split_affixes(_TOKEN.findall(unicodedata.normalize("NFC", text))))
    return tuple(tokens), tuple(t if t[:1] == "-" and len(t) > 1 else normalise(t) for t in tokens)


@dataclass
class LexiconExtractor:
    """Extracts :class:`Statement` objects from documents, knowing only the relation names."""

    relations: Sequence[str]
    cues: dict[tuple[str, ...], Cue] = field(default_factory=dict)
    fields: dict[tuple[str, ...], Cue] = field(default_factory=dict)
    _untitled: bool = field(default=False, init=False, repr=False)  # the document being read has no title

    def __post_init__(self) -> None:
        for r in self.relations:  # a relation's own name first: "part of" is part_of where the schema has it
            self.cues.setdefault(tuple(normalise(r).split()), Cue(r, "noun"))
        for cue_table in (ENGLISH, MORE):
            for r in self.relations:
                for phrase, kind in cue_table.get(r, ()):
                    self.cues.setdefault(tuple(phrase.split()), Cue(r, kind))
        self.fields = {tuple(label.split()): Cue(r, "field") for label, r in FIELDS.items() if r in self.relations}
        # A user's untitled paragraph reads these too (its own table first, then the others).
        self._more_cues = {tuple(p.split()): Cue(r, kind) for r in self.relations for p, kind in UNTITLED.get(r, ())}
        self._more_cues = {**self.cues, **self._more_cues}
        self._more_fields = {**self.fields, **{tuple(label.split()): Cue(r, "field")
                                               for label, r in UNTITLED_FIELDS.items() if r in self.relations}}
        self._longest_cue = max((len(k) for k in [*self._more_cues, *self._more_fields]), default=1)
        self._located = "located_in" in self.relations
        # the words a cue phrase or field label starts with: at any other word there is none
        self._starts = {k[0] for k in [*self.cues, *self.fields] if k}
        self._more_starts = {k[0] for k in [*self._more_cues, *self._more_fields] if k}

    def __call__(self, documents: Sequence[Document], context: Sequence[Document] | None = None) -> list[Statement]:
        """Statements of ``documents``; entity linking knows the pages of ``context`` (default:
        the documents themselves, the corpus being indexed)."""
        return self.read(documents, gazetteer(documents if context is None else context))

    def read(self, documents: Sequence[Document], pages: Gazetteer) -> list[Statement]:
        """Statements of ``documents`` with entity linking on the gazetteer ``pages``
        (:class:`~environments.graphrag.lexicon_pages.Pages` keeps a fixed corpus's)."""
        out: list[Statement] = []
        for doc in documents:
            out += self._document(doc, pages)
        return out

    def _document(self, doc: Document, pages: Gazetteer) -> list[Statement]:
        gazetteer = pages.names
        page = gazetteer.get(normalise(doc.title))
        seen: list[str] = [page] if page else []
        last_subject = page or ""
        context = Context("", follow=not page, untitled=not doc.title)
        self._untitled = not doc.title
        out = []
        chunk = doc.chunk_ids()
        for i, text in enumerate(doc.sentences):
            if text.rstrip().endswith("?") or set(normalise(text).split()) & HEDGE_WORDS:
                continue
            items = self._items(text, pages, seen)
            date = m.group(0) if (m := _DATE.search(text)) else ""
            context.fallback = page or last_subject
            context.topic = context.fallback or next((e for e in seen if e and (page or lexicon_types.named(e))),
                                                     next((e for e in seen if e), ""))
            if not doc.title:  # a user's untitled paragraph: its pronouns name its topic
                context.fallback = context.topic
            if not page and (speaker := parts.speaker(items)):
                context.topic = speaker
            if context.untitled and self._located:
                for school, city in parts.sited(items):
                    out.append(Statement(school, "located_in", city, doc.id, chunk[i], False, date))
            for head, relation, tail, negated in triples(items, context, self._located):
                out.append(Statement(head, relation, tail, doc.id, chunk[i], negated, date))
                if (head, tail) not in context.aside:
                    last_subject = head if head != tail else last_subject
        out = [s for s in out if has_ends(s)]  # a pronoun with no subject to refer to states nothing
        if not doc.title:  # a user's paragraph: drop statements whose ends' kinds clash with the relation
            keep = lexicon_types.typed((s.head, s.relation, s.tail) for s in out)
            out = [s for s, ok in zip(out, keep, strict=True) if ok]
        return out

    def _items(self, text: str, pages: Gazetteer, seen: list[str]) -> list[Item]:
        gazetteer, by_word, longest, firsts = pages.names, pages.by_word, pages.longest, pages.firsts
        held_tokens, held_low = _tokens(text)
        tokens, low = list(held_tokens), list(held_low)
        items: list[Item] = []
        i = 0
        while i < len(tokens):
            # entity names first, longest match; a name starts with the first word of its first token
            for n in range(min(longest, len(tokens) - i) if low[i].partition(" ")[0] in firsts else 0, 0, -1):
                name = " ".join(low[i:i + n])
                if name in gazetteer and low[i]:
                    items.append(Item("ent", name, gazetteer[name]))
                    seen.append(gazetteer[name])
                    i += n
                    break
            else:
                i = self._other(tokens, low, i, items, by_word, seen)
        appositions(items, self._located, lambda: Item("cue", "", cue=Cue("located_in", "appos")))
        return fronted_subject(items)

    def _cue(self, tokens: list[str], low: list[str], i: int) -> tuple[Cue | None, int]:
        """The longest field label before a colon, or cue phrase, at ``i``: (cue, tokens used)."""
        fields, cues = (self._more_fields, self._more_cues) if self._untitled else (self.fields, self.cues)
        if low[i] not in (self._more_starts if self._untitled else self._starts):
            return None, 0
        for n in range(min(self._longest_cue, len(tokens) - i - 1), 0, -1):
            if low[i + n] == ":" and (cue := fields.get(tuple(low[i:i + n]))) is not None:
                return cue, n + 1
        for n in range(min(self._longest_cue, len(tokens) - i), 0, -1):
            key = tuple(low[i:i + n])
            cue = cues.get(key)
            if cue is not None and (key not in NEEDS_NAME or (i + n < len(tokens) and (
                    tokens[i + n][:1].isupper() or low[i + n] == "there"))):
                return cue, n
        return None, 0

    def _field_at(self, low: list[str], i: int) -> bool:
        fields = self._more_fields if self._untitled else self.fields
        return any(i + n < len(low) and low[i + n] == ":" and tuple(low[i:i + n]) in fields
                   for n in range(1, 4))

    def _other(self, tokens: list[str], low: list[str], i: int, items: list[Item], by_word: dict[str, set[str]],
               seen: list[str]) -> int:
        cue, used = self._cue(tokens, low, i)
        if cue is not None:
            items.append(Item("cue", " ".join(low[i:i + used]), cue=cue))
            return i + used
        t, w = tokens[i], low[i]
        first = i == 0 or (bool(items) and items[-1].kind == "bound" and items[-1].text == ":")
        if w in PRONOUNS or t == "I":
            items.append(Item("pron", w))
        elif w == "there":
            items.append(Item("there", w))
        elif w in POSSESSIVE_PRONOUNS:
            items.append(Item("ppos", w))
        elif w in BOUNDARIES or w in (":", "(", ")") or t in DASHES:
            items.append(Item("bound", "-" if t in DASHES else w))
        elif t in ("'s", "\u2019s"):
            items.append(Item("poss", t))
        elif w in NEGATIONS:
            items.append(Item("neg", w))
        elif t[:1].isupper() and w not in TITLES and not (first and (w in STOP_CAPS or w in OPENERS)) \
                and not (self._untitled and (w in ROLES or first and self._opener(tokens, w, i))):
            j = i + 1
            while j < len(tokens):
                if self._field_at(low, j):  # "... Aldovia Employer: X": a label ends the name
                    break
                if tokens[j][:1].isupper() and low[j] not in TITLES and not (self._untitled and low[j] in ROLES):
                    j += 1
                elif low[j] in NAME_CONNECTORS and j + 1 < len(tokens) and tokens[j + 1][:1].isupper():
                    j += 1
                elif self._untitled and _ELIDED.match(tokens[j]):  # "Côte d'Ivoire"
                    j += 1
                elif self._untitled and low[j:j + 2] == ["of", "the"] and j + 2 < len(tokens) \
                        and tokens[j + 2][:1].isupper():  # "University of the Arts"
                    j += 2
                elif low[j] == "," and j + 1 < len(tokens) and low[j + 1] in NAME_SUFFIXES:
                    j += 2
                else:
                    break
            span = tokens[i:j]
            items.append(Item("ent", parts.join(span), self._link(span, by_word, seen)))
            seen.append(items[-1].entity)
            return j
        else:
            items.append(Item("word", w))
        return i + 1

    @staticmethod
    def _opener(tokens: list[str], w: str, i: int) -> bool:
        """In a user's text, a closed-class word or a lone "-ing" form opening a sentence or line
        ("With its headquarters in X", "Having studied at Y") names nothing."""
        alone = i + 1 >= len(tokens) or not tokens[i + 1][:1].isupper()
        return w in FUNCTION_WORDS or (alone and w.endswith("ing") and lexicon_types.kind(w) == lexicon_types.UNKNOWN)

    @staticmethod
    def _link(span: list[str], by_word: dict[str, set[str]], seen: list[str]) -> str:
        """An alias names the entity whose name holds all its words: one the document already
        named (latest first), else the only such gazetteer entity; otherwise it is a new entity."""
        words = set(normalise(" ".join(span)).split()) - GENERIC_NAME_WORDS
        if words:
            for entity in reversed(seen):
                full = normalise(entity).split()
                if words <= set(full) and len(span) <= len(full) and not parts.generic_prefix(full, words):
                    return entity
            sets = [by_word.get(w, set()) for w in words]
            common = set.intersection(*sets) if sets else set()
            if len(common) == 1:
                return next(iter(common))
        return parts.join(span)
