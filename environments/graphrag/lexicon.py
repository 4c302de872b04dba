"""A rule-based triple extractor for prose: entity linking, a relation lexicon, simple coreference.

It reads documents' text and titles and is given only the relation names (the schema), as the
LLM extractor is; it never sees how the corpus was written (a test checks that this module
imports no generator module). The pipeline follows classic open-domain KG construction
(Mintz et al., "Distant supervision for relation extraction without labeled data", ACL 2009:
entity mentions, then a lexical relation pattern between them):

1. Entity linking: a gazetteer of page titles (a document whose title its own text names is a
   page about that entity), longest match over normalised words; other capitalised spans are
   new entities, or aliases of an entity whose name contains all their words (the page's own
   subject and entities already named in the document first, then a unique gazetteer entry).
2. Coreference: a pronoun in subject position is the page's subject, else the last subject.
3. Relations: cue phrases per relation name (the name's own words, and English words for the
   common names), each a verb (subject is the head), an inverse verb ("employs": the subject is
   the object) or a relational noun ("birthplace": the possessor, "X's" or "of X", is the head).
   A sentence splits into one segment per cue at "and", commas and "which"; a segment without
   its own subject inherits the previous one's ("which" takes the entity before it); objects
   are every entity after the cue, so lists give several triples.
4. Modality: a date anywhere in the sentence dates it; "no longer", "not", "never", "ceased"
   before a cue, or a negative cue ("left"), negate; questions and hedged sentences ("whether",
   "rumours", "allegedly") state nothing.

Its errors (missed forms, hedges it does not know, ambiguous aliases) are measured by
:func:`environments.graphrag.extract.extraction_quality` and flow into the graph.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from environments.graphrag.corpus import Document, Statement

# English cue phrases for common relation names: (phrase, kind); kind is "verb", "inverse" or "noun".
ENGLISH: dict[str, tuple[tuple[str, str], ...]] = {
    "born_in": (("born in", "verb"), ("native of", "verb"), ("hails from", "verb"), ("birthplace", "noun"),
                ("comes from", "verb")),
    "located_in": (("located in", "verb"), ("lies in", "verb"), ("situated in", "verb"), ("contains", "inverse"),
                   ("part of", "verb")),
    "citizen_of": (("citizen of", "verb"), ("national of", "verb"), ("citizenship of", "verb"),
                   ("nationality", "noun")),
    "works_for": (("works for", "verb"), ("work for", "verb"), ("employed by", "verb"), ("works at", "verb"),
                  ("employs", "inverse"), ("employer", "noun"), ("joined", "verb"), ("left", "negative")),
    "lives_in": (("lives in", "verb"), ("resides in", "verb"), ("home in", "verb"), ("home to", "inverse")),
    "studied_at": (("studied at", "verb"), ("graduated from", "verb"), ("educated at", "verb"),
                   ("alma mater", "noun")),
    "headquartered_in": (("headquartered in", "verb"), ("based in", "verb"), ("headquarters in", "verb"),
                         ("headquarters", "noun")),
    "founded_by": (("founded by", "verb"), ("established by", "verb"), ("set up by", "verb"),
                   ("founded", "inverse"), ("founder", "noun")),
    "colleague_of": (("colleague of", "verb"), ("colleagues", "verb"), ("works alongside", "verb")),
    "partners_with": (("partners with", "verb"), ("collaborates with", "verb"), ("partnership with", "verb"),
                      ("partners", "verb")),
    "affiliated_with": (("affiliated with", "verb"), ("associated with", "verb")),
    "office_in": (("offices in", "verb"), ("branch in", "verb"), ("branches in", "verb"), ("offices", "noun")),
}
NEGATIONS = {"no", "not", "never", "ceased", "longer", "nor"}
HEDGE_WORDS = {"whether", "rumour", "rumours", "rumor", "rumors", "allegedly", "unconfirmed", "denied", "if", "might",
          "may"}
PRONOUNS = {"he", "she", "it", "they"}
BOUNDARIES = {"and", ",", ";", "which", "who", "where"}
STOP_CAPS = {"the", "a", "an", "it", "he", "she", "they", "in", "on", "as", "since", "through", "its", "his", "her",
             "their", "this", "that", "there", "some", "according", "after", "before", "when", "while"}
GENERIC_NAME_WORDS = {"of", "the", "university", "labs", "works", "group", "systems", "and", "or"}
# Words in any script ("Zürich", "São Paulo"), dates, the possessive and list punctuation.
_TOKEN = re.compile(r"\d{4}/\d{2}/\d{2}|[^\W_][\w\-]*|['\u2019]s|[,;?]")
_DATE = re.compile(r"\d{4}/\d{2}/\d{2}")


def normalise(text: str) -> str:
    """Lower case in NFC, ``_`` and ``-`` as spaces, commas and semicolons as words of their own
    (so a name with a comma, "Paris, Texas", reads as the text's tokens do)."""
    text = unicodedata.normalize("NFC", text).lower()
    return " ".join(re.sub(r"[_\-]", " ", re.sub(r"([,;])", r" \1 ", text)).split())


@dataclass(frozen=True)
class Cue:
    relation: str
    kind: str  # verb | inverse | noun | negative


@dataclass
class _Item:
    kind: str  # ent | pron | cue | word | bound | poss | neg
    text: str
    entity: str = ""
    cue: Cue | None = None


@dataclass
class LexiconExtractor:
    """Extracts :class:`Statement` objects from documents, knowing only the relation names."""

    relations: Sequence[str]
    cues: dict[tuple[str, ...], Cue] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for r in self.relations:  # a relation's own name first: "part of" is part_of where the schema has it
            self.cues.setdefault(tuple(normalise(r).split()), Cue(r, "noun"))
        for r in self.relations:
            for phrase, kind in ENGLISH.get(r, ()):
                self.cues.setdefault(tuple(phrase.split()), Cue(r, kind))
        self._longest_cue = max((len(k) for k in self.cues), default=1)

    def __call__(self, documents: Sequence[Document], context: Sequence[Document] | None = None) -> list[Statement]:
        """Statements of ``documents``; entity linking knows the pages of ``context`` (default:
        the documents themselves, the corpus being indexed)."""
        pages = documents if context is None else context
        gazetteer = {normalise(d.title): d.title for d in pages if normalise(d.title) in normalise(d.text())}
        by_word: dict[str, set[str]] = {}
        for name, entity in gazetteer.items():
            for w in set(name.split()) - GENERIC_NAME_WORDS:
                by_word.setdefault(w, set()).add(entity)
        longest = max((len(n.split()) for n in gazetteer), default=1)
        out: list[Statement] = []
        for doc in documents:
            out += self._document(doc, gazetteer, by_word, longest)
        return out

    def _document(self, doc: Document, gazetteer: dict[str, str], by_word: dict[str, set[str]],
                  longest: int) -> list[Statement]:
        page = gazetteer.get(normalise(doc.title))
        seen: list[str] = [page] if page else []
        last_subject = page or ""
        out = []
        for i, text in enumerate(doc.sentences):
            if text.rstrip().endswith("?") or set(normalise(text).split()) & HEDGE_WORDS:
                continue
            items = self._items(text, gazetteer, by_word, longest, seen)
            date = m.group(0) if (m := _DATE.search(text)) else ""
            for head, relation, tail, negated in self._triples(items, page or last_subject):
                out.append(Statement(head, relation, tail, doc.id, doc.chunk_of(i), negated, date))
                last_subject = head if head != tail else last_subject
        return out

    def _items(self, text: str, gazetteer: dict[str, str], by_word: dict[str, set[str]], longest: int,
               seen: list[str]) -> list[_Item]:
        tokens = _TOKEN.findall(unicodedata.normalize("NFC", text))
        low = [normalise(t) for t in tokens]
        items: list[_Item] = []
        i = 0
        while i < len(tokens):
            for n in range(min(longest, len(tokens) - i), 0, -1):  # entity names first, longest match
                name = " ".join(low[i:i + n])
                if name in gazetteer:
                    items.append(_Item("ent", name, gazetteer[name]))
                    seen.append(gazetteer[name])
                    i += n
                    break
            else:
                i = self._other(tokens, low, i, items, by_word, seen)
        return items

    def _other(self, tokens: list[str], low: list[str], i: int, items: list[_Item], by_word: dict[str, set[str]],
               seen: list[str]) -> int:
        for n in range(min(self._longest_cue, len(tokens) - i), 0, -1):
            cue = self.cues.get(tuple(low[i:i + n]))
            if cue is not None:
                items.append(_Item("cue", " ".join(low[i:i + n]), cue=cue))
                return i + n
        t, w = tokens[i], low[i]
        if w in PRONOUNS:
            items.append(_Item("pron", w))
        elif w in BOUNDARIES:
            items.append(_Item("bound", w))
        elif t in ("'s", "\u2019s"):
            items.append(_Item("poss", t))
        elif w in NEGATIONS:
            items.append(_Item("neg", w))
        elif t[:1].isupper() and not (i == 0 and w in STOP_CAPS):
            j = i + 1
            while j < len(tokens) and (tokens[j][:1].isupper() or (low[j] == "of" and j + 1 < len(tokens)
                                                                    and tokens[j + 1][:1].isupper())):
                j += 1
            span = tokens[i:j]
            items.append(_Item("ent", " ".join(span), self._link(span, by_word, seen)))
            seen.append(items[-1].entity)
            return j
        else:
            items.append(_Item("word", w))
        return i + 1

    @staticmethod
    def _link(span: list[str], by_word: dict[str, set[str]], seen: list[str]) -> str:
        """An alias names the entity whose name holds all its words: one the document already
        named (latest first), else the only such gazetteer entity; otherwise it is a new entity."""
        words = set(normalise(" ".join(span)).split()) - GENERIC_NAME_WORDS
        if words:
            for entity in reversed(seen):
                if words <= set(normalise(entity).split()):
                    return entity
            sets = [by_word.get(w, set()) for w in words]
            common = set.intersection(*sets) if sets else set()
            if len(common) == 1:
                return next(iter(common))
        return " ".join(span)

    def _triples(self, items: list[_Item], fallback: str) -> list[tuple[str, str, str, bool]]:
        cue_at = [k for k, it in enumerate(items) if it.kind == "cue"]
        out = []
        prev_subject, prev_object = "", ""
        start = 0
        for n, k in enumerate(cue_at):
            end = cue_at[n + 1] if n + 1 < len(cue_at) else len(items)
            if n + 1 < len(cue_at):  # the segment ends at the last boundary before the next cue
                bounds = [b for b in range(k + 1, end) if items[b].kind == "bound"]
                end = bounds[-1] if bounds else end
            before, after = items[start:k], items[k + 1:end]
            ents_before = [self._resolve(it, fallback) for it in before if it.kind in ("ent", "pron")]
            ents_after = [self._resolve(it, fallback) for it in after if it.kind in ("ent", "pron")]
            relative = any(it.kind == "bound" and it.text in ("which", "who", "where") for it in before)
            cue = items[k].cue
            negated = cue.kind == "negative" or any(it.kind == "neg" for it in before)
            if relative and n > 0:
                head_side = [prev_object] if prev_object else ents_before[-1:]
            elif ents_before:
                head_side = ents_before[:1]
            elif n > 0 and prev_subject:
                head_side = [prev_subject]
            else:
                head_side, ents_after = ents_after[:1], ents_after[1:]
            if not ents_after and len(ents_before) >= 2:  # "X and Y are colleagues"
                head_side, ents_after = ents_before[:1], ents_before[1:2]
            if not head_side or not ents_after:
                start = end
                continue
            subject = head_side[0]
            possessive = any(it.kind == "poss" for it in before)
            of_after = any(it.text == "of" for it in after[:3])
            for obj in ents_after:
                if cue.kind == "inverse" or (cue.kind == "noun" and of_after and not possessive
                                             and any(it.text == "the" for it in before[-3:])):
                    head, tail = obj, subject
                else:
                    head, tail = subject, obj
                if head != tail:
                    out.append((head, cue.relation, tail, negated))
            prev_subject, prev_object = subject, ents_after[-1]
            start = end
        return out

    @staticmethod
    def _resolve(item: _Item, fallback: str) -> str:
        return item.entity if item.kind == "ent" else fallback
