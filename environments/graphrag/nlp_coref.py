"""Who a cue's head is, for the spaCy extractor (:mod:`environments.graphrag.nlp_extract`): a climb
of the dependency tree from the cue to a name or a verb's subject, and light coreference: a
pronoun is the last subject of its kind else the topic, "I" the line's speaker, "the company"
the last organisation, "his colleague X" pairs X with the possessor."""

from __future__ import annotations

from typing import Any

from environments.graphrag.nlp_mentions import definite
from environments.graphrag.nlp_names import (
    FIRST_PERSON,
    PERSONAL,
    Entity,
    State,
    alias,
    conjuncts,
    ent_at,
    is_subject,
    organisation_shaped,
)

MAIN_SITE = {"main", "principal", "central", "head"}  # "its main campus": the seat

COMPANY_NOUNS = {"company", "firm", "group", "business", "organisation", "organization", "startup", "bank"}
RELATIVE = {"who", "which", "that", "whom", "whose"}
# Nouns of people an organisation has: "its president was born in X" says nothing of the organisation.
PEOPLE_NOUNS = {"president", "executive", "founder", "director", "chairman", "chairwoman", "chair", "head", "chief",
                "ceo", "staff", "employee", "student", "member", "player", "coach", "manager", "owner", "leader",
                "rector", "principal", "scientist", "engineer", "researcher", "worker", "conductor", "architect"}
# Common nouns that, as "the NOUN", refer back to the last organisation ("the carmaker" refers back
# like any other non-person noun; these say so without a person in sight).
ORG_NOUNS = COMPANY_NOUNS | {"foundation", "organisation", "university", "club", "carmaker", "charity", "institute",
                             "school", "college", "agency", "movement", "bank", "maker", "giant", "label", "lab",
                             "laboratory", "insurer", "retailer", "airline", "brand", "manufacturer", "studio"}


def mates(doc: Any, i: int, j: int, ents: list[Entity], state: State) -> tuple[list, list]:
    """"his colleague X", "X, her colleague", "X is her colleague": X and the possessor."""
    possessor = ""
    if i > 0:
        w = doc[i - 1].lower_
        if w in FIRST_PERSON:
            possessor = state.speaker or state.topic
        elif w in PERSONAL:
            possessor = state.last.get("person") or state.topic
        elif w in ("'s", "\u2019s") and i > 1:
            possessor = next((e.name for e in ents if e.end == i - 1), "")
    after = [e for e in ents if e.start >= j and e.start - j <= 2]
    if after:
        return [(after[0].name, False)], [possessor] if possessor else cue_heads(doc, i, ents, state)
    before = [e for e in ents if e.end <= i]
    if before and possessor:
        return [(before[-1].name, False)], [possessor]
    return [], []


def cue_heads(doc: Any, i: int, ents: list[Entity], state: State, owned: bool = False) -> list[str]:
    """Climb from the cue to the first name, or to a verb's subject (with its conjuncts);
    ``owned`` (a site's cue): a subject "its NOUN" that names nothing is its owner's."""
    anchor = apposed(doc, i, ents)
    if anchor is not None:
        return [anchor.name]
    t, came = doc[i], ""
    for _ in range(12):
        e = ent_at(doc, t.i, ents)
        if e is not None and t.i != i and t.i < i and not (came == "conj" and t.dep_ in ("pobj", "dobj", "conj")):
            return listed([e.name, *conjuncts(doc, t, ents)], doc, e, ents)  # "in X and a citizen of Y": X is no head
        subject = next((c for c in t.children if c.dep_ in ("nsubj", "nsubjpass")), None)
        if subject is not None:
            if subject.lower_ in RELATIVE and subject.i > 1 and doc[subject.i - 1].text == ",":
                before = ent_at(doc, subject.i - 2, ents)  # "X, which is in Y": X, whatever the parse
                if before is not None:
                    first = repeated_antecedent(doc, subject, before, ents)
                    return [(first or before).name] if first else joined_before(doc, before, ents)
            if subject.lower_ in RELATIVE and t.dep_ in ("relcl", "acl") and t.head.i != t.i:
                came, t = t.dep_, t.head
                continue
            owner = next((c for c in subject.children if c.dep_ == "poss" and c.lower_ in ("its", "their")), None)
            heads = resolve(doc, subject, ents, state)
            if not heads and owned and owner is not None and subject.lemma_.lower() not in PEOPLE_NOUNS:
                return resolve(doc, owner, ents, state)  # "its cars are built at a plant in X": the owner's site
            return heads
        if t.head.i == t.i:
            break
        came, t = t.dep_, t.head
    if state.speaker and any(w.lower_ in FIRST_PERSON for w in doc[:i]):
        return [state.speaker]
    return [state.topic] if state.topic else []


def repeated_antecedent(doc: Any, pronoun: Any, before: Entity, ents: list[Entity]) -> Entity | None:
    """"X, who was born in Y, who studied at Z, and who ...": "who" right after the object of a
    preposition that is no person (Y) repeats an earlier relative clause of the sentence with the same
    pronoun, whose antecedent (X, or "X, the historian who") it shares; None when there is none."""
    if pronoun.lower_ != "who" or doc[before.end - 1].dep_ != "pobj" or before.kind == "person":
        return None
    for r in doc[pronoun.sent.start:before.start]:
        if r.lower_ != pronoun.lower_:
            continue
        e = ent_at(doc, r.i - 2, ents) if r.i >= 2 and doc[r.i - 1].text == "," else None
        if e is None and r.head.dep_ == "relcl":  # "X, the historian who": the noun apposed to X
            noun = r.head.head
            e = ent_at(doc, noun.i, ents) or (ent_at(doc, noun.head.i, ents) if noun.dep_ == "appos" else None)
        if e is not None and doc[e.end - 1].dep_ != "pobj" and e.end <= r.i:
            return e
    return None


def joined_before(doc: Any, e: Entity, ents: list[Entity]) -> list[str]:
    """A person ``e`` with the people a list joins before it: "A and B, who are colleagues at X"
    is about A and B (a list with "and", nothing but "," and "and" between its names)."""
    chain = [e]
    for x in reversed([] if e.kind != "person" else [x for x in ents if x.end <= e.start]):
        between = [t.lower_ for t in doc[x.end:chain[-1].start]]
        if not between or not all(w in (",", "and") for w in between) or x.kind != e.kind:
            break
        chain.append(x)
    if len(chain) > 1 and any(t.lower_ == "and" for t in doc[chain[-1].end:e.start]):
        return [x.name for x in reversed(chain)]
    return [e.name]


def apposed(doc: Any, i: int, ents: list[Entity]) -> Entity | None:
    """"Geely, the group founded by X and headquartered in Y": a participle cue inside an
    apposition (", the|a NOUN ... founded by", no comma or finite verb between) is about the name
    before the apposition, whatever the parse of an unfamiliar name."""
    if doc[i].tag_ != "VBN":
        return None
    for k in range(i - 1, doc[i].sent.start, -1):
        t = doc[k]
        if t.text in (",", ";", ":") or t.tag_ in ("VBZ", "VBD", "VBP", "MD"):
            return None
        if t.lower_ in ("the", "a", "an") and k >= 2 and doc[k - 1].text == ",":
            e = ent_at(doc, k - 2, ents)
            return e if e is not None and e.end == k - 1 else None
    return None


def listed(heads: list[str], doc: Any, e: Entity, ents: list[Entity]) -> list[str]:
    """``heads`` with the names a list joins to the subject ``e`` ("A, B and C were born in X"),
    which the parser does not always coordinate for names it does not know."""
    chain, at = [e], ents.index(e) if e in ents else -1
    while at >= 0 and at + 1 < len(ents):
        between = [t.lower_ for t in doc[chain[-1].end:ents[at + 1].start]]
        if not between or not all(w in (",", "and") for w in between):
            break
        at += 1
        chain.append(ents[at])
    if len(chain) > 1 and any(t.lower_ == "and" for t in doc[e.end:chain[-1].start]):
        return list(dict.fromkeys([*heads, *(c.name for c in chain)]))
    return heads


def resolve(doc: Any, token: Any, ents: list[Entity], state: State) -> list[str]:
    e = ent_at(doc, token.i, ents)
    if e is not None:
        return listed([e.name, *conjuncts(doc, token, ents)], doc, e, ents)
    if token.pos_ == "NOUN":  # "Its chief executive, Mikheil Lomtadze, was born in ...": the name apposed
        named = apposed_name(doc, token, ents)
        if named is not None:
            return [named.name]
        referent = definite(token, state, ents)  # "the orchestra": the name last described as one
        if referent:
            return [referent]
    for span in (token.subtree,):  # "the capital of X is ...": a name inside the subject phrase
        inside = [x for x in ents if any(x.start <= s.i < x.end for s in span)]
        if inside and token.pos_ == "PROPN":
            return [inside[0].name]
    w = token.lower_
    if w in ("you", "your"):  # an interview's "you": the person addressed, else the topic
        return [state.addressee or state.topic] if (state.addressee or state.topic) else []
    if w in FIRST_PERSON:
        return [state.speaker or state.topic] if (state.speaker or state.topic) else []
    if w in PERSONAL and PERSONAL[w] != "any":  # a subject named before it in the same line comes first
        near = next((e for e in reversed(ents) if e.end <= token.i and is_subject(doc, e)
                     and (e.kind == "person") == (PERSONAL[w] == "person")), None)
        if near is not None:
            return [near.name]
    if w in PERSONAL:
        kind = PERSONAL[w]
        who = state.last.get(kind) or state.last.get("any") if kind != "any" else state.last.get("any")
        if kind == "thing":  # "it": an organisation named since, before a name of unknown kind
            who = state.last.get("thing") or state.organisation or who
        if not who and kind == "person":  # no person yet: the nearest one named before it in the line
            who = next((e.name for e in reversed(ents) if e.kind == "person" and e.end <= token.i), "")
            if not who and state.topic not in state.people:  # a topic that is no person: the last person named
                who = state.person
        return [who or state.topic] if (who or state.topic) else []
    if token.pos_ == "NOUN" and any(c.lower_ in ("the", "this") for c in token.children):
        if token.lemma_.lower() in ORG_NOUNS or not state.last.get("person"):  # "the company", "the striker"
            who = (salient_organisation(state) if token.lemma_.lower() in ORG_NOUNS else "") or \
                state.last.get("thing") or state.topic
        else:
            who = state.last["person"]
        return [who] if who else []
    return []


def salient_organisation(state: State) -> str:
    """What "the company" (no name described by its noun) refers back to: the last organisation
    that was a clause's subject, else the last organisation named. A subject is more salient than
    an object named since ("Cochlear Limited ... on the campus of Macquarie University. The
    company is led by X": Cochlear Limited; Grosz et al., "Centering", Computational Linguistics
    1995)."""
    thing = state.last.get("thing", "")
    if thing and thing not in state.people and (state.kinds.get(thing) == "ORG" or thing == state.topic):
        return thing
    return state.organisation


def apposed_name(doc: Any, token: Any, ents: list[Entity]) -> Entity | None:
    """The name apposed to a common noun: "its chief executive, Mikheil Lomtadze," (the parse's
    apposition, else a name right after the noun's comma that a comma or a verb closes)."""
    for c in token.children:
        if c.dep_ == "appos":
            e = ent_at(doc, c.i, ents)
            if e is not None:
                return e
    if token.i + 2 < len(doc) and doc[token.i + 1].text == ",":
        e = ent_at(doc, token.i + 2, ents)
        if e is not None and e.start == token.i + 2 and e.end < len(doc) and doc[e.end].text == ",":
            return e
    return None


def possessor(doc: Any, i: int, ents: list[Entity], state: State) -> str:
    """Whose seat a "headquarters"/"main campus" cue names: "its" (the organisation last named),
    "X's", "the committee's" (the organisation last named); "" for none."""
    k = i - 1
    while k >= 0 and doc[k].lower_ in MAIN_SITE | {"oldest", "registered", "global", "new"}:
        k -= 1
    if k < 0:
        return ""
    if doc[k].lower_ in ("its", "their"):
        return state.organisation or state.last.get("thing") or state.topic
    if doc[k].lower_ in ("'s", "\u2019s") and k > 0:
        named = ent_at(doc, k - 1, ents)
        if named is not None and named.end == k:
            return named.name if named.kind != "person" else ""
        if doc[k - 1].pos_ == "NOUN" and definite(doc[k - 1], state, ents):  # "the federation's headquarters"
            return definite(doc[k - 1], state, ents)
        if doc[k - 1].pos_ == "NOUN" and doc[k - 1].lemma_.lower() in ORG_NOUNS | {"alliance", "committee", "federation"}:
            return last_organisation(doc, k, ents, state)
    return ""


def described(doc: Any, j: int, ents: list[Entity], state: State) -> list[str]:
    """"the Veldhoven-based company": the organisation last named (the noun after the cue with
    "the" or "its"), not the clause's subject ("Fouquet, who joined the Veldhoven-based company")."""
    noun = next((t for t in doc[j:j + 3] if t.pos_ == "NOUN"), None)
    det = next((c for c in noun.children if c.lower_ in ("the", "this", "its")), None) if noun is not None else None
    if det is None:
        return []
    if det.i >= 2 and doc[det.i - 1].text == ",":  # "Nokia, the Espoo-based group": the name it apposes
        named = ent_at(doc, det.i - 2, ents)
        if named is not None and named.end == det.i - 1:
            return [named.name]
    org = last_organisation(doc, det.i, ents, state)  # named before the description, not its own place
    return [org] if org and not any(e.name == org and e.kind == "person" for e in ents) else []


def last_organisation(doc: Any, j: int, ents: list[Entity], state: State | None) -> str:
    """The organisation named last before token ``j``: in the line, else in the document."""
    line = [e.name for e in ents if e.end <= j and (organisation_shaped(e.name) or doc[e.start].ent_type_ == "ORG")
            and e.kind != "person"]
    return line[-1] if line else (state.organisation if state is not None else "")


def affixed(doc: Any, pre: bool, i: int, j: int, ents: list[Entity],
            state: State) -> tuple[list[tuple[str, bool]], list[str]] | None:
    """(objects, heads) of a cue joined to the name before it: "a Veneskost citizen" (``post``),
    "Paris-born", "the Oslo-based group" (``pre``); None when no name stands right before it.
    A ``pre`` cue's head is a name right after it in the same noun phrase ("the Oslo-based energy
    group Equinor", not "maker of Dove soap" or "practice that Ann Lee founded"), else the
    organisation the description names (:func:`described`), else the clause's subject (no person)."""
    before = [e for e in ents if e.end <= i]
    if not pre and (not before or before[-1].end < i) and doc[i - 1].text[:1].isupper():
        before = [Entity(alias(doc[i - 1].text, state), "thing", i - 1, i)]  # "a Veneskost citizen"
    if not before or before[-1].end < i - (1 if pre else 0):
        return None
    objects = [(before[-1].name, False)]
    if not pre:
        return objects, cue_heads(doc, i, ents, state)
    if doc[i - 1].whitespace_ or doc[i].whitespace_:
        return None  # "Paris-born", not "Pamuk - born in"
    after = [e for e in ents if e.start >= j]
    if after and after[0].start - j <= 2 and all(t.pos_ in ("NOUN", "ADJ", "PROPN") for t in doc[j:after[0].start]):
        return objects, [after[0].name]
    return objects, described(doc, j, ents, state) or [h for h in cue_heads(doc, i, ents, state) if not any(
        e.name == h and e.kind == "person" for e in ents)]  # "Ann Lee said the Oslo-based group": no seat of hers
