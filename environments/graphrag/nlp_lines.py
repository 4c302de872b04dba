"""What the spaCy extractor (:mod:`environments.graphrag.nlp_extract`) reads before it parses: a
document's sentences as reading units, its title as a topic, a question completed by its
answer, and the field labels and cues it reads beyond the rules' shared tables.

Each is a plain surface rule of English text layout, not of any one writer's prose:

- a sentence that ends at an initial or an abbreviation ("John D.", "R.J.", "St.") runs on into the
  next: the user-text splitter cuts at every ". ", which would cut a name in two;
- a news wire's dateline ("TOULOUSE, France (AFP) - ") places the reporter, not the story's subject;
- a table row with two cells ("| President | Jane Roe |") is the field line "President: Jane Roe";
- a headline or a labelled title ("Fact sheet: Acme Corp", "Three days in Gothenburg") is no
  name: the topic is the name after a label, else the text's own first subject;
- a wh-question answered by a fragment ("Who founded X?" / "Jane Roe, in 1889.") states the
  question with the fragment in place of the wh-word ("Jane Roe founded X."), as an
  interview's reader does.
"""

from __future__ import annotations

import re
from typing import Any

from environments.graphrag.lexicon_forms import NAME_CONNECTORS
from environments.graphrag.nlp_names import MONTHS

# A sentence ending in an initial ("D.", "R.J.") or a name's abbreviation continues the name.
_RUNS_ON = re.compile(r"(?:\b[A-Z]\.|\b(?:St|Dr|Mr|Mrs|Ms|Prof|Mt|Ft|Jr|Sr|No|Gen|Sen|Rep|Gov|Jan|Feb|Mar|Apr|Jun|Jul"
                      r"|Aug|Sep|Sept|Oct|Nov|Dec)\.)$")  # "BUENOS AIRES, Nov. 2 -": a month's abbreviation
# A legal form's abbreviation ("A.Ş.", "ČEZ, a. s.", "hf.") before "(" or a lower-case word runs on:
# 'Türkiye Petrol Rafinerileri A.Ş. ("Tüpraş" or the "Company"), ...' is one sentence.
_LEGAL_END = re.compile(r"(?:\b[^\W\d_]\.|\b(?:hf|inc|ltd|co|corp|plc|ag|nv|bv|spa|oyj|ab|asa|sa|as|se|ehf|bhd|tbk)\.)$",
                        re.I)
# A dateline's place in capitals, any script's ("REYKJAVÍK, March 4 -"): checked to be upper case.
_DATELINE = re.compile(r"^([^\W\d_][^\W\d_.'\u2019]*[.'\u2019]?(?: [^\W\d_][^\W\d_.'\u2019]*)*)"
                       r"(?:,([^-\u2013\u2014()]{0,40}))?\s*"
                       r"(?:\([^)]{1,20}\))?\s*[-\u2013\u2014]+\s+")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}")
# Field labels the spaCy extractor reads besides the shared ones (lexicon_forms.FIELDS).
SHEET_FIELDS = {
    "headquarters": "headquartered_in", "head office": "headquartered_in", "hq": "headquartered_in",
    "founded": "founded_by", "founders": "founded_by", "founder": "founded_by", "co-founders": "founded_by",
    "founded by": "founded_by", "established": "founded_by", "offices": "office_in", "office": "office_in",
    "founding partners": "founded_by", "co-founder": "founded_by", "founder and ceo": "founded_by",
    "founder and chief executive": "founded_by", "founder and first chief executive": "founded_by",
    "other sites": "office_in", "other campuses": "office_in", "campuses": "office_in", "other hospitals": "office_in",
    "regional offices include": "office_in", "key partner": "partners_with", "long-term partner": "partners_with",
    "regional offices": "office_in", "overseas offices": "office_in", "other offices": "office_in",
    "branches": "office_in", "branches abroad": "office_in", "partners": "partners_with",
    "partner": "partners_with", "partnerships": "partners_with", "studied at": "studied_at",
    "alma mater": "studied_at", "education": "studied_at", "educated at": "studied_at",
    "current residence": "lives_in", "lives": "lives_in", "based in": "lives_in", "home town": "born_in",
    "hometown": "born_in", "birthplace": "born_in", "born in": "born_in", "citizen of": "citizen_of",
    "citizenships": "citizen_of", "employer": "works_for", "employers": "works_for", "works for": "works_for",
    "affiliations": "affiliated_with", "affiliation": "affiliated_with", "member of": "affiliated_with",
    "further campus": "office_in", "second campus": "office_in", "further site": "office_in", "plants": "office_in",
    "factories": "office_in", "production site": "office_in", "production sites": "office_in",
}
# What a fact sheet's title says beside its subject's name ("Profile: Acme", "Acme: key facts").
SHEET_TITLES = {"profile", "company profile", "fact sheet", "factsheet", "fact file", "key facts", "facts",
                "at a glance", "in brief", "overview", "snapshot", "biography", "bio", "quick facts"}
# A role's label: its value works for the sheet's topic ("Chief executive: Jane Roe").
ROLE_LABELS = {"chief executive", "ceo", "president", "chairman", "chairwoman", "chair", "chairperson",
               "director", "director-general", "director general", "managing director", "rector", "chancellor",
               "head", "leader", "chief executive officer", "executive chairman", "chairman and ceo",
               "president and ceo", "cfo", "chief financial officer", "coo", "cto", "vice-chancellor", "group ceo",
               "executive director"}
# The last word of a role a field label names beside the shared labels: "Head coach", "Principal guest
# conductor", "Sporting director", "Key players" (a plural: every value holds it).
ROLE_NOUNS = {"director", "president", "chairman", "chairwoman", "chair", "chairperson", "ceo", "cfo", "cto", "coo",
              "coach", "manager", "conductor", "chef", "winemaker", "brewer", "rector", "chancellor", "officer",
              "executive", "captain", "dean", "player", "treasurer", "provost", "vice-chair", "vice-president",
              "vice-chancellor", "director-general", "secretary-general"}
_LABEL_PARTS = re.compile(r"\s*(?:,|&|/|\band\b)\s*")
# Labels of an interview's interviewer: no name, no speaker.
ASKERS = {"q", "question", "interviewer", "host", "podcast host", "moderator", "reporter", "presenter",
          "journalist", "editor", "q&a"}
# Labels that name a sheet's subject ("Name: Satya Nadella", "Company: Acme").
SUBJECT_LABELS = {"name", "company", "organisation", "organization", "institution", "person", "full name",
                  "school", "university", "subject"}
# Words marking a fact as no longer or not yet true, or as hearsay, where the schema states the present.
NOT_ASSERTED = {"former", "formerly", "ex", "previous", "previously", "rumour", "rumours", "rumor", "rumors",
                "rumoured", "rumored", "reportedly", "allegedly", "denied", "denies", "claimed", "claims", "if",
                "unless"}
# Nouns of an organisation's sites besides its seat: "a production site in X", "data centres in X
# and Y", "a small annex at X" (singular: a cue also matches its plural's lemma).
FACILITIES = ("site", "centre", "center", "laboratory", "foundry", "department", "annex", "studio", "depot",
              "warehouse", "facility", "station", "smelter", "refinery", "mill", "hangar", "plant", "factory", "hub",
              "branch", "mine", "terminal", "brewery", "shipyard")
SPACY_CUES: dict[str, tuple[tuple[str, str], ...]] = {
    "works_for": (("chief executive of", "verb"), ("president of", "verb"), ("chairman of", "verb"),
                  ("ceo of", "verb"), ("head of", "verb"), ("director-general of", "verb"), ("been with", "verb"),
                  ("left for", "verb"), ("moved on to", "verb"), ("join", "verb"), ("salary from", "verb"),
                  ("payslip comes from", "verb"), ("led by", "inverse"), ("headed by", "inverse"), ("run by", "inverse")),
    "partners_with": (("joint venture with", "verb"), ("alliance with", "verb"), ("cooperates with", "verb"),
                      ("partnering with", "verb"), ("teamed up with", "verb"), ("partner of", "verb")),
    "studied_at": (("doctorate at", "verb"), ("doctorate from", "verb"), ("phd at", "verb"), ("phd from", "verb"),
                   ("studies at", "verb"), ("educated at", "verb"), ("studying", "school"), ("enrolled at", "school"),
                   ("student at", "school")),
    "founded_by": (("co-founded by", "verb"), ("started by", "verb"), ("created by", "verb")),
    "headquartered_in": (("main campus", "noun"), ("main site", "noun"), ("head office", "noun")),
    "office_in": (("office in", "verb"), ("an office in", "verb"), ("regional office in", "verb"),
                  ("campus in", "verb"), ("plant in", "verb"), ("plants in", "verb"), ("factory in", "verb"),
                  ("factories in", "verb"), ("assembly line in", "verb"), ("research centre in", "verb"),
                  ("research center in", "verb"), ("training centre in", "verb"), ("logistics centre in", "verb"),
                  ("lab in", "verb"), ("laboratory in", "verb"), ("subsidiary in", "verb"), ("hub in", "verb"),
                  ("country offices in", "verb"), *((f"{noun} {at}", "verb") for noun in FACILITIES for at in ("in", "at"))),
}
WH_PAST = {"go": "went", "grow": "grew", "leave": "left", "come": "came", "make": "made", "get": "got",
           "teach": "taught", "begin": "began", "take": "took", "find": "found", "meet": "met", "run": "ran"}


def reading_units(sentences: list[str]) -> list[tuple[int, str]]:
    """(first sentence's index, text) per unit to parse: sentences cut at an initial are joined
    again, a dateline is dropped (its "CITY, Region" read last, as "City is located in Region."), a two-cell table row becomes a field line."""
    units: list[tuple[int, str]] = []
    for k, raw in enumerate(sentences):
        s = str(raw).strip()
        if not s:
            continue
        if units and (_RUNS_ON.search(units[-1][1]) and (s[:1].isupper() or s[:1].isdigit()) or _LEGAL_END.search(
                units[-1][1]) and (s[:1] == "(" or s[:1].islower())) and not LABEL.match(s):  # a field line starts anew
            units[-1] = (units[-1][0], f"{units[-1][1]} {s}")
            continue
        units.append((k, s))
    out, places = [], []
    for k, s in units:
        dateline = _DATELINE.match(s)
        place = ""
        if dateline and dateline.group(1).isupper() and len(dateline.group(1)) > 1:
            s, region = s[dateline.end():], (dateline.group(2) or "").split(",")[0].strip()
            if region and name_like(region) and region.split()[0].lower().rstrip(".") not in MONTHS and \
                    not any(c.isdigit() for c in region):  # "POZNAŃ, Poland, Nov. 19 -": Poznań is in Poland
                place = f"{dateline.group(1).title()} is located in {region}."
        if s.startswith("|"):
            if _TABLE_RULE.match(s):
                continue
            cells = [c.strip() for c in s.strip().strip("|").split("|") if c.strip()]
            s = f"{cells[0]}: {cells[1]}" if len(cells) == 2 else " ; ".join(cells)
        if s:
            out.append((k, s))
        places += [(k, place)] if place else []
    return out + places  # last: a dateline's place is no antecedent of the story's "the company"


def name_like(text: str) -> bool:
    """Every word of ``text`` is capitalised or a name's connector ("Procter & Gamble", "Bank of
    Japan"): a name, not a headline."""
    words = [w for w in re.split(r"[\s,]+", text.strip()) if w]
    return bool(words) and all(w[:1].isupper() or w[:1].isdigit() or w.lower() in NAME_CONNECTORS | {"and", "the"}
                               for w in words) and words[0].lower() not in ("and", "of")


def title_topic(title: str) -> str:
    """The topic a title gives: the title when it is a name; the name after a label ("Fact
    sheet: Acme Corp", "Acme Corp - key facts" gives the name before the dash); else none (the
    text's first subject will be the topic)."""
    title = " ".join(title.split())
    if ": " in title:  # "Profile: Acme", "Acme: key facts": a sheet's label on either side
        before, after = title.split(": ", 1)
        if before.lower() in SHEET_TITLES and name_like(after):
            return title_topic(after)
        if after.lower() in SHEET_TITLES and name_like(before):
            return before
    for suffix in SHEET_TITLES:  # "Acme at a glance"
        if title.lower().endswith(" " + suffix) and name_like(title[:-len(suffix) - 1]):
            return title[:-len(suffix) - 1]
    if not title or name_like(title):
        return title
    if ": " in title:  # "Fact sheet: Acme Corp": what precedes the colon is a label
        return title_topic(title.rsplit(": ", 1)[1]) if name_like(title.rsplit(": ", 1)[1]) else ""
    return next((part for part in re.split(r"\s+[-\u2013\u2014|]\s+", title) if name_like(part)), "")


_WH_SUBJECT = re.compile(r"^(?:who|what)\s+(.+?)\?$", re.I)
_WH_WHERE = re.compile(r"^where\s+(is|was|are|were|did|does|do)\s+(.+?)\s+(\w+)\?$", re.I)
_WH_WHERE_BARE = re.compile(r"^where\s+(is|was|are|were)\s+(\S+)\?$", re.I)  # "Where is it?"
POLAR = {"is", "are", "was", "were", "does", "do", "did", "has", "have", "had", "can", "will", "would", "could"}
# A "who" question's verb and its participle: "Who runs X?" / "Jane Roe." states "X is run by
# Jane Roe.", which the passive cues read whatever X is (a name, "it").
PARTICIPLES = {"founded": "founded", "started": "started", "created": "created", "established": "established",
               "set": "set", "runs": "run", "ran": "run", "leads": "led", "led": "led", "heads": "headed",
               "headed": "headed", "co-founded": "co-founded", "cofounded": "co-founded"}
_PREPOSITION = re.compile(r"^(in|at|from|to|on|by|near)\s+", re.I)
_YES_NO = re.compile(r"^(?:yes|no|yes and no|well|sure|indeed)\s*[,.;:\u2013\u2014-]\s*", re.I)
LABEL = re.compile(r"^\s*(?:[*\-\u2022]\s*)?([^:|]{1,40}):\s+(.+)$")


def answer_text(line: str) -> str:
    """A reply without its speaker's label or its "Yes," / "No,"."""
    return _YES_NO.sub("", _unlabelled(line)).strip()


def completed(question: str, answer: str, names: str = "") -> str:
    """The sentence a wh-question and its answer state together, or "" when the answer is no
    answer to a question this reads ("Who founded X?" / "Jane Roe, in 1889." gives "X was
    founded by Jane Roe."; "Where is it based?" / "In Kyoto." gives "it is based in Kyoto.").
    ``names``: the people the answer names (a list "A, B and C"), from its parse; a "who"
    question whose answer is a whole sentence is answered by them."""
    q = re.sub(r"^(?:and|so|but|then|now|ok|okay),?\s+", "", _unlabelled(question), flags=re.I)
    a = answer_text(answer)
    if not q.endswith("?") or not a:
        return ""
    return _first_person(_statement(q, a, names))


def polar(question: str) -> bool:
    """A yes/no question ("Does she still live in Spain?"): it asserts nothing itself."""
    q = _unlabelled(question).split()
    return bool(q) and q[0].lower() in POLAR and question.rstrip().endswith("?")


def affirmed(answer: str) -> bool:
    return bool(re.match(r"^(?:yes|yes,|indeed|correct)\b", _unlabelled(answer), re.I))


def _first_person(text: str) -> str:
    """The answerer states the question's "you" as "I"."""
    return re.sub(r"\byou\b", "I", re.sub(r"\byour\b", "my", text, flags=re.I), flags=re.I) if text else ""


def _statement(q: str, a: str, names: str = "") -> str:
    who = _WH_SUBJECT.match(q)
    if who and not _PREPOSITION.match(a):
        name = re.split(r",|\s[-\u2013\u2014(]\s?|\(", a)[0].strip().rstrip(".")
        name = names or (name if name and name_like(name) else "")
        if not name:
            return ""
        verb, _, rest = who.group(1).partition(" ")
        if q.lower().startswith("who ") and rest and verb.lower() in PARTICIPLES:
            if rest.lower().startswith("up "):  # "Who set up X?"
                verb, rest = verb + " up", rest[3:]
            tense = "was" if verb.lower().endswith(("ed", "up")) else "is"
            return f"{rest} {tense} {PARTICIPLES[verb.split()[0].lower()]}{verb[len(verb.split()[0]):]} by {name}."
        return f"{name} {who.group(1)}."
    where = _WH_WHERE.match(q) or _WH_WHERE_BARE.match(q)
    if where:
        aux, subject, verb = where.groups() if len(where.groups()) == 3 else (*where.groups(), "")
        if verb and not _participle(verb):  # "Where is the museum?": no verb, its last word is the subject's
            subject, verb = f"{subject} {verb}", ""
        place = a if _PREPOSITION.match(a) else f"in {a}"
        place = place[0].lower() + place[1:]
        if aux.lower() in ("is", "was", "are", "were"):
            return " ".join(w for w in (subject, aux.lower(), verb, place) if w)
        if aux.lower() == "did":
            verb = WH_PAST.get(verb.lower(), _past(verb.lower()))
        elif aux.lower() == "does":
            verb = verb + ("es" if verb.endswith(("s", "sh", "ch")) else "s")
        return f"{subject} {verb} {place}"
    return ""


def _participle(word: str) -> bool:
    return word.lower().endswith(("ed", "wn", "rn")) or word.lower() in ("study", "live", "work", "go", "grow",
                                                                        "teach", "come", "begin", "set", "found")


def _past(verb: str) -> str:
    if verb.endswith("e"):
        return verb + "d"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ied"
    return verb + "ed"


def _unlabelled(line: str) -> str:
    m = LABEL.match(line)
    return m.group(2).strip() if m and len(m.group(1).split()) <= 3 else line.strip()


def is_fragment(parsed: object) -> bool:
    """A reply with no finite verb at its root ("Jane Roe, in 1889.", "In Kyoto, Japan.")."""
    sent = next(iter(parsed.sents))  # type: ignore[attr-defined]
    return sent.root.pos_ not in ("VERB", "AUX")


def answer_names(reply: Any) -> str:
    """The people a whole-sentence answer to "Who ...?" names: its first person and the persons a
    list joins to it ("Four people built it: A, B, C and D"), as "A, B, C and D"."""
    people = [e for e in reply.ents if e.label_ in ("PERSON", "ORG", "GPE", "NORP")]
    first = next((k for k, e in enumerate(people) if e.label_ == "PERSON"), None)
    if first is None:
        return ""
    chain = [people[first]]
    for e in people[first + 1:]:
        if {t.lower_ for t in reply[chain[-1].end:e.start]} <= {",", "and"} and e.start > chain[-1].end:
            chain.append(e)
        else:
            break
    names = [e.text for e in chain]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def role_label(key: str) -> tuple[bool, list[str]]:
    """Whether a field label (lower case) names a role its values hold, and the label's other
    parts: "Chief executive", "Head coach", "Managing director and CEO", "Chairman, president and
    CEO", "Founder and president" (the other part "founder", a field of its own). A label of more
    than five words is a sentence's opening, not a role ("Stepped down as artistic director")."""
    if key in ROLE_LABELS:
        return True, []
    if not key or len(key.split()) > 5:
        return False, []
    parts = [p for p in _LABEL_PARTS.split(key) if p]
    roles = [p for p in parts if p in ROLE_LABELS or (len(p.split()) <= 3 and _role_noun(p.split()[-1]))]
    return bool(roles), [p for p in parts if p not in roles]


def _role_noun(word: str) -> bool:
    return word in ROLE_NOUNS or (word.endswith("s") and word[:-1] in ROLE_NOUNS)


def subject_value(doc: Any, colon: int | None, values: list[Any]) -> bool:
    """A field line whose whole value is one name ("Museum: Van Gogh Museum", "Club: FC Porto"):
    on a document's first line, that name is what the document is about, whatever the label."""
    if colon is None or len(values) != 1:
        return False
    v = values[0]
    start = colon + 1 + (colon + 1 < len(doc) and doc[colon + 1].lower_ == "the")
    rest = [t.text for t in doc[v.end:]]
    return v.start == start and (not rest or rest[0] == "(" or rest == ["."])
