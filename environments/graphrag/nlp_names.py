"""Names in a parsed line, for the spaCy extractor (:mod:`environments.graphrag.nlp_extract`):
spaCy's named entities of name types joined with runs of proper nouns it missed, and what a
document's reading remembers (:class:`State`) so a later mention or pronoun finds its name."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from environments.graphrag.lexicon_forms import FUNCTION_WORDS, ROLES

KEEP = {"PERSON", "ORG", "GPE", "LOC", "FAC", "WORK_OF_ART", "EVENT", "PRODUCT"}
# Lower-case particles inside a name in the languages English prose quotes names from, which English
# itself never writes between two capitalised words: "Anna Fontcuberta i Morral", "Dennis te Kloese",
# "Bad Homburg vor der Höhe", "Ried im Innkreis", "Sheikha Moza bint Nasser", "Dar es Salaam".
PARTICLES = {"i", "te", "ter", "ten", "den", "des", "las", "los", "le", "vor", "unter", "im", "bei", "bin", "bint",
             "ibn", "nad", "pri", "na", "sul", "degli", "es", "zu", "zum", "zur", "ul"}
NAME_GLUE = {"of", "de", "von", "am", "&", "du", "la", "del", "van", "der", "and",
             "do", "da", "dos", "das", "di", "della", "y", "el"} | PARTICLES  # "São José dos Campos", "Jaraguá do Sul"
HYPHENS = {"-", "\u2010", "\u2011"}  # a hyphen written inside a word ("May-Britt", "Juvisy-sur-Orge")
NEGATORS = {"not", "never", "no", "nor"}
PERSONAL = {"he": "person", "she": "person", "him": "person", "his": "person", "her": "person",
            "it": "thing", "its": "thing", "they": "any", "their": "any", "them": "any"}
FIRST_PERSON = {"i", "my", "me", "we", "our", "us"}
HONORIFICS = {"dr", "professor", "prof", "mr", "mrs", "ms", "sir", "dame", "lord", "lady"}
CLERICAL = {"cardinal", "archbishop", "bishop", "pope", "rabbi", "imam", "reverend", "rev"}  # a rank, not a name
# A title or office written before a person's name, which spaCy leaves out of the PERSON span and the
# proper-noun run takes in ("Coach José Luis Mendilibar", "Prime Minister Kyriakos Mitsotakis").
TITLES = ROLES | CLERICAL | {"coach", "king", "queen", "duke", "duchess", "emperor", "empress",
                             "general", "canon", "prime", "public", "protector", "judge", "justice", "ambassador",
                             "commissioner", "secretary", "deputy", "vice", "captain", "colonel", "admiral"}
# A mention spaCy reads as a place or a person is not a school that adds its word to it ("Kyoto" is not
# "Kyoto University"); a company's word may ("Velmora" for "Velmora Corporation": spaCy's label is unsure).
PLACE_LABELS = {"GPE", "LOC", "PERSON"}
# Capitalised closed-class words opening a sentence, no part of the name after them ("Among X's
# colleagues"); a salutation's "Dear" stays (the letter's addressee is no topic).
LEADING = FUNCTION_WORDS - {"dear", "hi", "hello"} | {"among", "besides"} | {  # a question's auxiliary: "Is Aalto
    "is", "are", "was", "were", "does", "did", "do", "has", "have", "can", "will"}  # University in Espoo?"
# A school's word in another language, whose name goes on in lower case ("École polytechnique
# fédérale de Lausanne") or which follows the town's name ("Uppsala universitet").
FOREIGN_SCHOOLS = {"école", "ecole", "université", "universität", "universitet", "università", "universidad",
                   "universidade", "universiteit", "politecnico", "scuola", "escuela", "hochschule", "yliopisto",
                   "uniwersytet", "institut", "instituto", "istituto", "högskola"}
ENGLISH_CLOSED = FUNCTION_WORDS | {"is", "was", "are", "were", "has", "had", "the", "a", "an", "which", "who",
                                   "where", "that", "and", "in", "on", "at", "since", "as"}
DASH = {"-", "\u2013", "\u2014", "|"}
# A date's words the tagger leaves as proper nouns ("Born: 13 July 1934, Abeokuta"): no name.
MONTHS = {"january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"}
WEEKDAYS = {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
_ABBREV = re.compile(r"^(?:[A-Z]\.){2,}$")
ENGLISH_LEGAL = {"co", "ltd", "limited", "inc"}  # "Acme Co., Ltd." under the title "Acme" is Acme
COMPANY_SUFFIXES = {"inc", "ltd", "llc", "corp", "co", "plc", "ag", "sa", "gmbh", "oyj", "ab", "nv", "spa", "limited"}
LEGAL_FORMS = COMPANY_SUFFIXES | {"hf", "ehf", "asa", "as", "oy", "bv", "se", "kk", "bhd", "tbk", "sro", "zrt"}
SCHOOL_WORDS = ("university", "college", "school", "institute", "academy", "polytechnic", "école")
ORG_NAME_WORDS = {"group", "labs", "systems", "company", "corporation", "foundation", "works", "holdings",
                  "industries", "bank", "technologies", "&"}


@dataclass
class Entity:
    name: str
    kind: str  # person, thing (organisation or place), any
    start: int  # token offsets in the line's doc
    end: int


@dataclass
class State:
    """What coreference knows while a document is read."""

    topic: str = ""
    last: dict[str, str] = field(default_factory=dict)  # kind -> last subject of that kind
    names: list[str] = field(default_factory=list)  # every name so far, for aliases
    speaker: str = ""
    addressee: str = ""  # the person a question's "you" is (a vocative "Dr Jane Roe, you ...")
    place: str = ""  # the last place an object named ("there")
    organisation: str = ""  # the last organisation named, subject or not ("the company")
    person: str = ""  # the last person named, subject or not ("she" when no person was a subject)
    people: set[str] = field(default_factory=set)  # every name read as a person's
    kinds: dict[str, str] = field(default_factory=dict)  # name -> its spaCy label (ORG, a school shape: ORG)
    described: dict[str, str] = field(default_factory=dict)  # a noun -> the name it last described ("orchestra")
    defined: dict[str, str] = field(default_factory=dict)  # a defined term ("company", "tüpraş") -> its name


def entities(doc: Any, state: State, titled: Sequence[tuple[int, int, str]] = ()) -> list[Entity]:
    """Names in a line: spans that are a known page's title (``titled``: start, end, title), then
    spaCy's entities of name types and runs of proper nouns it missed."""
    spans: list[tuple[int, int, str]] = []
    for ent in doc.ents:
        if ent.label_ not in KEEP:
            continue
        start = ent.start + (1 if doc[ent.start].lower_ == "the" else 0)
        start += 1 if start < ent.end - 1 and doc[start].lower_ in ROLES else 0  # "Footballer Ann Lee"
        while start < ent.end and doc[start].is_punct:
            start += 1
        end = ent.end
        while end > start and (doc[end - 1].is_punct and doc[end - 1].text not in ".") or (
                end > start and doc[end - 1].lower_ in ("'s", "\u2019s")):
            end -= 1
        dash = next((k for k in range(start, end) if doc[k].text in DASH and (doc[k].whitespace_ or
                                                                              doc[k - 1].whitespace_)), end)
        kind = "person" if ent.label_ == "PERSON" and not organisation_shaped(doc[start:end].text) else "thing"
        cut = start
        for k in range(start, dash + 1):  # "Corsab and Lodru" tagged as one: a list is several names
            if k == dash or doc[k].lower_ in ("and", ",", "or", ";", "(", ")", "[", "]") and \
                    not _and_in_name(doc, ent, start, k):  # "Bostavan (Moldova"
                if k > cut:
                    spans.append((cut, k, kind))
                cut = k + 1
    covered = {k for s, e, _ in spans for k in range(s, e)}
    k = 0
    while k < len(doc):
        if doc[k].pos_ == "PROPN" and k not in covered and doc[k].is_title or (
                doc[k].pos_ == "PROPN" and k not in covered and doc[k].text[:1].isupper()):
            end = k + 1
            while end < len(doc) and end not in covered:
                if doc[end].pos_ == "PROPN" and name_word(doc[end]):
                    end += 1
                elif (g := link(doc, end)) and end + g not in covered and doc[end + g].pos_ == "PROPN":
                    end += g + 1  # "Bad Homburg vor der Höhe", "May-Britt Moser"
                else:
                    break
            spans.append((k, end, "any"))
            k = end
        else:
            k += 1
    spans = _merged(doc, sorted(spans))
    titled = [(s, e, t) for s, e, t in titled  # a longer name around a title is that name ("Siemens AG")
              if not any(a <= s and e <= b and b - a > e - s for a, b, _ in spans)]
    taken = {k for s, e, _ in titled for k in range(s, e)}
    spans = [(s, e, kind) for s, e, kind in spans if not taken & set(range(s, e))]
    out = [Entity(title, "person" if doc[s].ent_type_ == "PERSON" else "thing" if doc[s].ent_type_ in KEEP else "any",
                  s, e) for s, e, title in titled]
    for title in dict.fromkeys(title for _, _, title in titled):
        state.names += [] if title in state.names else [title]
        if organisation_shaped(title):
            state.kinds.setdefault(title, "ORG")
    for s, e, kind in spans:
        while e - s > 2 and doc[s].lower_.rstrip(".") in HONORIFICS | CLERICAL:  # "Dr Jane Roe" is Jane Roe
            s += 1
        if e - s > 2 and kind != "thing" and doc[s].lower_ in ROLES:  # "Chancellor Ann Lee", a run spaCy missed
            s += 1
        while e - s > 2 and kind != "thing" and (doc[s].lower_ in TITLES or doc[s].text in HYPHENS) \
                and doc[s].ent_type_ != "PERSON" \
                and not organisation_shaped(doc[s:e].text):
            s += 1  # "Coach José Luis Mendilibar", "Prime Minister Kyriakos Mitsotakis", "Vice-Chancellor Ann Lee"
        if e - s > 1 and doc[s].is_sent_start and doc[s].lower_ in LEADING:
            s += 1  # "Among Ostpel's colleagues": a sentence's capitalised opener is no part of a name
        name = alias(doc[s:e].text, state, doc[e - 1].ent_type_)
        if organisation_shaped(name) or organisation_shaped(doc[s:e].text):  # spaCy's labels of unfamiliar names
            # are too unsure to drop facts on
            state.kinds.setdefault(name, "ORG")
        if name.lower() in FIRST_PERSON or name.lower() in PERSONAL or _a_date(name):
            continue
        out.append(Entity(name, kind, s, e))
    return sorted(out, key=lambda x: x.start)


def _and_in_name(doc: Any, ent: Any, start: int, k: int) -> bool:
    """The "and" at token ``k`` of spaCy's entity ``ent`` (its name from ``start``) joins words of
    one name, not two names: after the name's "of" or "for" ("Norwegian University of Science and
    Technology", "Centers for Disease Control and Prevention"), or between the two words of a place
    spaCy tags as one ("Bosnia and Herzegovina")."""
    if doc[k].lower_ != "and" or k + 1 >= ent.end or not doc[k + 1].text[:1].isupper():
        return False
    if any(doc[x].lower_ in ("of", "for") for x in range(start + 1, k)):
        return True
    return ent.label_ in ("GPE", "LOC") and k - start == 1 and ent.end - k == 2


def _a_date(name: str) -> bool:
    """"July", "June 2024", "3 April", "Tuesday": a month or a weekday and numbers only."""
    words = name.lower().replace(",", " ").replace(".", " ").split()
    return bool(words) and any(w in MONTHS | WEEKDAYS for w in words) and \
        all(w in MONTHS | WEEKDAYS or w.isdigit() for w in words)


def _school_words(words: set[str]) -> bool:
    return any(w.startswith(SCHOOL_WORDS) for w in words)


def organisation_shaped(name: str) -> bool:
    words = name.lower().replace(",", " ").replace(".", " ").split()
    return any(w in name.lower() for w in SCHOOL_WORDS) or bool(set(words) & (COMPANY_SUFFIXES | ORG_NAME_WORDS))


def _merged(doc: Any, spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Adjacent name spans are one name, and so are spans joined by a name's glue word
    ("University of Danpelul", "Frankfurt am Main"); a capitalised word after the glue joins too."""
    out: list[tuple[int, int, str]] = []
    for s, e, kind in spans:
        if out and (out[-1][1] == s or (out[-1][1] + 1 == s and doc[s - 1].lower_ in NAME_GLUE - {"and"}
                                        and not (doc[s - 1].lower_ == "of" and _two_names(doc, out[-1], (s, e, kind))))
                    or out[-1][1] + link(doc, out[-1][1]) == s > out[-1][1] + 1):  # "van der", "-sur-"
            ps, _, pk = out.pop()
            s, kind = ps, pk if pk != "any" else kind
        out.append((s, e, kind))
    final: list[tuple[int, int, str]] = []
    for s, e, kind in out:
        if doc[e - 1].lower_ in FOREIGN_SCHOOLS:  # "École normale supérieure": lower-case words of its name
            while e < len(doc) and e - s < 8 and doc[e].is_alpha and doc[e].text[:1].islower() \
                    and doc[e].lower_ not in ENGLISH_CLOSED | NAME_GLUE - PARTICLES and doc[e].pos_ in ("ADJ", "NOUN", "PROPN", "X"):
                e += 1
            if e + 1 < len(doc) and doc[e].lower_ in NAME_GLUE - {"and"} and doc[e + 1].text[:1].isupper():
                e += 2  # "... fédérale de Lausanne"
        if e < len(doc) and doc[e].lower_ in FOREIGN_SCHOOLS:  # "Uppsala universitet"
            e += 1
        if e + 1 < len(doc) and doc[e].text == "," and (_ABBREV.match(doc[e + 1].text) or
                                                       doc[e + 1].text.rstrip(".").lower() in COMPANY_SUFFIXES) \
                and not (e + 2 < len(doc) and not doc[e + 1].whitespace_ and doc[e + 2].text in DASH):
            e += 2  # "Washington, D.C.", "Tesla, Inc.": one name; "Ann Lee, co-founder" is Ann Lee
        if e < len(doc) and e - s > 1 and doc[e - 1].lower_ in NAME_GLUE - {"and", "&"} and name_word(doc[e]) \
                and not doc[e].is_sent_start:
            e += 1  # spaCy's "Pieter van der" before "Does", a word it reads as a verb
        while e < len(doc) and doc[e].text[:1] in ("d", "l") and name_word(doc[e]):
            e += 1  # "Caran d'Ache"
        while (g := link(doc, e)) and not doc[e + g].is_sent_start and all(e + g < x for x, _, _ in out if x > s):
            e += g + 1
        while s > 1 and doc[s - 1].text in HYPHENS and not doc[s - 1].whitespace_ and not doc[s - 2].whitespace_ \
                and name_word(doc[s - 2]) and (not final or final[-1][1] <= s - 2):
            s -= 2  # "May-Britt Moser" where spaCy's name starts at "Britt"
        if e + 2 < len(doc) and doc[e].lower_ == "an" and doc[e + 1].lower_ in ("der", "den") and \
                doc[e + 2].text[:1].isupper():
            e += 3  # "Mülheim an der Ruhr"
        if e < len(doc) and doc[e].text == "." and not doc[e - 1].whitespace_ and e - 1 > s and (
                "." in doc[e - 1].text or doc[e - 1].text.islower() and doc[e - 1].lower_ in LEGAL_FORMS):
            e += 1  # "Kofola ČeskoSlovensko a.s.", "Landsbankinn hf.": a legal form keeps its full stop
        if not final or s >= final[-1][1]:  # a span a name above grew over is part of it
            final.append((s, e, kind))
    return final


def name_word(t: Any) -> bool:
    """A word a name may hold: capitalised, or an elided article before a capital ("d'Ache", "l'Alleud")."""
    x = t.text
    return x[:1].isupper() or (x[:1] in ("d", "l") and x[1:2] in ("'", "\u2019") and x[2:3].isupper())


def link(doc: Any, e: int) -> int:
    """How many tokens from ``e`` join a name to the name word after them (0: none): one or two
    particles ("van der Does", "de las Casas"; "and" is left to :func:`_and_in_name`), a hyphen
    inside a word ("May-Britt", "Villeneuve-d'Ascq"), or hyphens around a short lower-case word
    ("Juvisy-sur-Orge", "Stoke-on-Trent"). A hyphen before a lower-case word ("Munich-based")
    joins nothing."""
    n, g = len(doc), 0
    while g < 2 and e + g < n and doc[e + g].lower_ in NAME_GLUE - {"and"}:
        g += 1
    if g and e + g < n and name_word(doc[e + g]):
        return g
    if not (0 < e < n - 1 and doc[e].text in HYPHENS and not doc[e].whitespace_ and not doc[e - 1].whitespace_):
        return 0
    if name_word(doc[e + 1]):
        return 1
    if e + 3 < n and doc[e + 1].is_lower and doc[e + 1].is_alpha and len(doc[e + 1]) <= 5 and doc[e + 2].text in HYPHENS \
            and not doc[e + 1].whitespace_ and not doc[e + 2].whitespace_ and name_word(doc[e + 3]):
        return 3
    return 0


def _two_names(doc: Any, left: tuple[int, int, str], right: tuple[int, int, str]) -> bool:
    """Two of spaCy's entities around "of", the first of two words or more and no school's name,
    are two names ("the Antofagasta Region of Chile", "Kirsty Coventry of Zimbabwe",
    "Embracer Group of Karlstad"); "University of Vienna" and "Bank of Georgia" stay one."""
    (a, b, kind_a), (_, _, kind_b) = left, right
    return kind_a != "any" and kind_b != "any" and b - a > 1 and not any(
        w in doc[a:b].text.lower() for w in SCHOOL_WORDS)


def alias(name: str, state: State, label: str = "") -> str:
    """A later mention whose words are all in one earlier name is that name ("Kapelsab"); the
    page's subject with a legal suffix ("Acme Co., Ltd." under the title "Acme") is the subject."""
    if state.topic and (name.startswith(state.topic + " ") or name.startswith(state.topic + ",")):
        rest = name[len(state.topic):].replace(",", " ").replace(".", " ").lower().split()
        if rest and all(w in ENGLISH_LEGAL for w in rest):
            return state.topic
    if name == state.topic:  # the page's own subject, though a longer name holds its words ("Charles Pfizer")
        return name
    words = set(name.split())
    matches = [n for n in state.names if words < set(n.split())  # "Vienna" is not "University of Vienna",
               and not set(n.lower().split()) & NAME_GLUE and not set(n.split()) & FOREIGN_SCHOOLS]  # "Uppsala universitet"
    if label in PLACE_LABELS:  # spaCy's label of a short mention is unsure: only an added school's word counts
        matches = [n for n in matches if not _school_words(set(n.lower().split()) - set(name.lower().split()))]
    if len(set(matches)) == 1:
        return matches[0]
    if name not in state.names:
        state.names.append(name)
    return name


def ent_at(doc: Any, i: int, ents: list[Entity] | None = None) -> Entity | None:
    if ents is None:
        return Entity("", "", i, i + 1) if doc[i].ent_type_ in KEEP or doc[i].pos_ == "PROPN" else None
    return next((e for e in ents if e.start <= i < e.end), None)


def conjuncts(doc: Any, token: Any, ents: list[Entity]) -> list[str]:
    """Names coordinated with ``token`` ("A, B and C")."""
    out = []
    for c in token.conjuncts:
        e = ent_at(doc, c.i, ents)
        if e is not None and not negated_before(doc, e.start):
            out.append(e.name)
    return out


def is_subject(doc: Any, e: Entity) -> bool:
    return any(doc[k].dep_ in ("nsubj", "nsubjpass") for k in range(e.start, e.end))


def negated_before(doc: Any, start: int) -> bool:
    return any(doc[k].lower_ in NEGATORS for k in range(max(0, start - 2), start))


def verb_negated(doc: Any, i: int) -> bool:
    """"not", "never", "no longer" on the cue's verb or just before the cue."""
    t = doc[i]
    verb = t if t.pos_ in ("VERB", "AUX") else t.head
    if any(c.dep_ == "neg" for c in verb.children):
        return True
    window = [doc[k].lower_ for k in range(max(0, i - 3), i)]
    return any(w in NEGATORS for w in window) or "longer" in window
