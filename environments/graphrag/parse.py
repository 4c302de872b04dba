"""Question interpretation from the question's text alone: entity linking, then relation matching.

Nobody downstream of the environment (the reader, any defense) is handed a question's gold
relation plan; they call :func:`interpret`. It links the topic entity (the longest entity name
the text contains, as GraphRAG's local search seeds entities by lexical match) and matches
relations in two ways, as a semantic parser over a schema does (Berant et al., "Semantic
Parsing on Freebase from Question-Answer Pairs", EMNLP 2013: lexicon, then composition):

- a relation's *cues* (its name's words, and English synonyms a reader knows for the common
  relation names: "employer" for ``works_for``) mark relations the question mentions;
- the *answer type* ("which country") and each relation's domain and range types compose the
  mentioned relations into a chain, adding at most one unmentioned connecting relation.

A graph published with descriptions of its relations (a real graph: ``ngo``, ``isa``,
``located_in``) is read only through them (:mod:`environments.graphrag.glosses`:
"embassy|embassies", "relative"), whatever names it shares with the world schema: the world's
synonyms and types belong to the world schema, not to a name. Without descriptions (a generated
world), the typed reading applies when the schema has typed names:
the words before and after the topic are cut into at most ``max_hops`` spans, each span takes the
relation whose gloss it names best, and the spans are ordered as English nests them: "the A of
the B of X" applies B first, "X's B" and "what X causes" next to the entity apply first. The
interpreter can be wrong; its errors are the reader's own and show up in clean accuracy.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from environments.graphrag.glosses import concepts, stem

_WORD = re.compile(r"\w+")  # any script: "Zürich" is one word

# The reader's English: words that name a relation, beyond the words of the relation's name.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "born_in": ("born", "birth", "birthplace"),
    "works_for": ("work", "works", "employer", "employs", "employed"),
    "headquartered_in": ("headquartered", "headquarters", "based"),
    "founded_by": ("founder", "founded", "established"),
    "studied_at": ("studied", "study", "alma", "graduated", "educated"),
    "located_in": ("located", "lies", "situated"),
    "lives_in": ("lives", "live", "resides", "home"),
    "citizen_of": ("citizen", "citizenship", "nationality"),
    "colleague_of": ("colleague",),
    "partners_with": ("partner", "partners"),
    "affiliated_with": ("affiliated",),
    "office_in": ("office", "offices", "branch", "branches"),
}
# (domain type, range type) signatures the reader knows for the common relation names.
SIGNATURES: dict[str, tuple[tuple[str, str], ...]] = {
    "born_in": (("person", "city"),),
    "works_for": (("person", "company"),),
    "headquartered_in": (("company", "city"),),
    "founded_by": (("company", "person"),),
    "studied_at": (("person", "university"),),
    "located_in": (("city", "country"), ("university", "city")),
    "lives_in": (("person", "city"),),
    "citizen_of": (("person", "country"),),
    "office_in": (("company", "city"),),
}
TYPE_WORDS = {"city": "city", "town": "city", "country": "country", "nation": "country", "company": "company",
              "firm": "company", "university": "university", "college": "university", "person": "person"}
_GENERIC = {"in", "of", "at", "with", "for", "by", "to", "the", "is", "a"}


@dataclass(frozen=True)
class Interpretation:
    topic: str
    plan: tuple[str, ...]


def words(text: str) -> list[str]:
    return _WORD.findall(unicodedata.normalize("NFC", text).lower())


@lru_cache(maxsize=65536)
def _name(entity: str) -> str:
    return " ".join(words(entity))


@lru_cache(maxsize=64)
def _by_first_word(entities: tuple[str, ...]) -> dict[str, list[tuple[str, str]]]:
    """Entity names (normalised) keyed by their first word: only those can occur in a text."""
    out: dict[str, list[tuple[str, str]]] = {}
    for entity in entities:
        name = _name(entity)
        if name:
            out.setdefault(name.split(" ", 1)[0], []).append((name, entity))
    return out


def link_entity(text: str, entities: Iterable[str]) -> str | None:
    """The longest entity name occurring in ``text`` as whole words (case-insensitive; between
    names of one length, the last in case-folded order, never decided by a name's spelling)."""
    tokens = words(text)
    padded = " " + " ".join(tokens) + " "
    index = _by_first_word(tuple(entities))
    best: tuple[str, str] | None = None
    for word in set(tokens):
        for name, entity in index.get(word, ()):
            if f" {name} " in padded and (best is None or (len(name), name, entity) > (len(best[0]), best[0], best[1])):
                best = (name, entity)
    return best[1] if best else None


@lru_cache(maxsize=4096)
def cues(relation: str) -> frozenset[str]:
    own = {w for w in words(relation.replace("_", " ")) if w not in _GENERIC and len(w) > 1}
    return frozenset({relation.lower(), *own, *SYNONYMS.get(relation, ())})


def answer_type(tokens: Sequence[str]) -> str | None:
    for i, w in enumerate(tokens):
        if w in ("which", "what") and i + 1 < len(tokens) and tokens[i + 1] in TYPE_WORDS:
            return TYPE_WORDS[tokens[i + 1]]
    return None


@lru_cache(maxsize=4096)
def _chain_ends(plan: tuple[str, ...]) -> tuple[str, ...] | None:
    """The types a typed ``plan`` can end in (empty: it does not compose); ``None`` when a
    relation has no known signature (then composition is decided by word order). Memoised: every
    question tries each permutation of its relations."""
    if any(r not in SIGNATURES for r in plan):
        return None
    ends = []
    for _, current in SIGNATURES[plan[0]]:
        for r in plan[1:]:
            nxt = [rng for dom, rng in SIGNATURES[r] if dom == current]
            if not nxt:
                break
            current = nxt[0]
        else:
            ends.append(current)
    return tuple(ends)


Glosses = Mapping[str, str]  # relation -> its published description (:func:`glosses.concepts`)


def interpret_plan(text: str, topic: str, relations: Sequence[str], max_hops: int = 3,
                   glosses: Glosses | None = None) -> tuple[str, ...]:
    """The relation chain ``text`` asks about, starting at ``topic`` (empty when no relation is
    mentioned). ``glosses``: the graph's own descriptions of its relations; when given, only
    they (and each name's own words) are read, never the world schema's types or synonyms."""
    if glosses is not None:
        described = tuple((r, glosses.get(r, "")) for r in sorted(relations))
        return interpret_untyped(text, topic, described, max_hops)
    if relations and not any(r in SIGNATURES for r in relations):
        return interpret_untyped(text, topic, tuple((r, None) for r in sorted(relations)), max_hops)
    topic_words = set(words(topic))
    tokens = [w for w in words(text) if w not in topic_words]
    position: dict[str, int] = {}
    for r in relations:
        cue_words = cues(r)
        hits = [i for i, w in enumerate(tokens) if w in cue_words]
        if hits:
            position[r] = hits[-1]
    mentioned = sorted(position)
    if not mentioned:
        return ()
    wanted = answer_type(tokens)
    best: tuple[tuple[int, int, int], tuple[str, ...]] | None = None
    connectors: list[list[str]] = [[]] + [[c] for c in relations if c in SIGNATURES and c not in position]
    for extra in connectors:
        if extra and best is not None and best[0][0] == 0:  # a connector only when nothing composes without one
            break
        chosen = mentioned + extra
        if len(chosen) > max_hops:
            continue
        for plan in itertools.permutations(chosen):
            ends = _chain_ends(plan)
            if ends is not None:
                if not ends or (wanted and wanted not in ends):
                    continue
                order_penalty = 0
            else:  # untyped relations: the relation mentioned last is applied first
                order_penalty = sum(position.get(a, -1) < position.get(b, -1) for a, b in zip(plan, plan[1:], strict=False))
            key = (len(extra), order_penalty, len(plan))
            if best is None or (key, plan) < best:
                best = (key, plan)
    return best[1] if best else tuple(sorted(mentioned, key=lambda r: -position[r]))


HOP_COST = 1.0  # a further hop must name more than one concept's worth: "the kin of term six" is one hop
MISSING_COST = 0.5  # a gloss concept the span does not name
STRAY_COST = 0.25  # a word of some gloss inside the span that the chosen relation's gloss lacks


Described = tuple[tuple[str, str | None], ...]  # (relation, its gloss or None), sorted by relation


@lru_cache(maxsize=4096)
def _concepts(relation: str, gloss: str | None) -> tuple[frozenset[str], ...]:
    """A relation's concepts: its gloss's, else one concept of its cue words (the name's own
    words only, for a described graph: ``gloss`` is then ``""`` for a relation it leaves
    undescribed)."""
    if gloss:
        return concepts(gloss)
    own = cues(relation) if gloss is None else {relation.lower(), *(w for w in words(relation.replace("_", " "))
                                                                    if w not in _GENERIC and len(w) > 1)}
    return (frozenset(stem(w) for w in own),)


@lru_cache(maxsize=65536)
def _span_score(span: tuple[str, ...], relations: Described) -> tuple[float, str] | None:
    """The relation whose gloss ``span`` names best, and its score (concepts named, minus half
    the concepts missing and a quarter per stray word); ``None`` when the span names nothing."""
    words_in = set(span)
    best: tuple[float, int, str] | None = None
    for r, gloss in relations:
        cs = _concepts(r, gloss)
        named = sum(1 for c in cs if c & words_in)
        if named:
            stray = sum(1 for w in span if not any(w in c for c in cs))
            key = (-(named - MISSING_COST * (len(cs) - named) - STRAY_COST * stray), len(cs), r)
            best = key if best is None or key < best else best
    return (-best[0], best[2]) if best else None


def _splits(tokens: tuple[str, ...], parts: int) -> Iterable[list[tuple[str, ...]]]:
    if parts == 0:
        yield []
        return
    for cuts in itertools.combinations(range(1, len(tokens)), parts - 1):
        bounds = (0, *cuts, len(tokens))
        yield [tokens[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


@lru_cache(maxsize=64)
def _known(relations: Described) -> frozenset[str]:
    return frozenset(w for r, gloss in relations for c in _concepts(r, gloss) for w in c)


def _readings(before: tuple[str, ...], after: tuple[str, ...], max_hops: int) -> Iterable[list[tuple[str, ...]]]:
    """Every cut of the words into spans (each word in one), innermost first: spans after the
    topic in order, then those before it in reverse; the spans either side of the topic may also be one span (a
    phrase around the entity: "the trade partner of X, on the second measure")."""
    for k_before in range(min(1, len(before)), min(len(before), max_hops + 1) + 1):
        for k_after in range(min(1, len(after)), min(len(after), max_hops + 1 - k_before) + 1):
            for spans_b in _splits(before, k_before):
                for spans_a in _splits(after, k_after):
                    spans = [*spans_a, *reversed(spans_b)]
                    if 1 <= len(spans) <= max_hops:
                        yield spans
                    if k_after == 1 and k_before >= 1 and len(spans) - 1 <= max_hops:
                        yield [spans_a[0] + spans_b[-1], *reversed(spans_b[:-1])]


def interpret_untyped(text: str, topic: str, relations: Described, max_hops: int = 3) -> tuple[str, ...]:
    """The chain an untyped question names: spans before the topic apply outermost-last ("the A
    of the B of X": B, then A), spans after it innermost-first ("X's B", "what X causes")."""
    rels = relations
    known = _known(rels)
    tokens, own = words(text), words(topic)
    at = next((i for i in range(len(tokens)) if tokens[i:i + len(own)] == own), None) if own else None
    before, after = (tokens[:at], tokens[at + len(own):]) if at is not None else (tokens, [])
    sides = [tuple(s for s in map(stem, side) if s in known) for side in (before, after)]
    best: tuple[tuple[float, int, tuple[str, ...]], tuple[str, ...]] | None = None
    for spans in _readings(sides[0], sides[1], max_hops):
        scored = [_span_score(s, rels) for s in spans]
        if any(x is None for x in scored):
            continue
        plan = tuple(r for _, r in scored)
        key = (-(sum(v for v, _ in scored) - HOP_COST * (len(spans) - 1)), len(spans), plan)
        if best is None or key < best[0]:
            best = (key, plan)
    return best[1] if best else ()


def interpret(text: str, entities: Iterable[str], relations: Sequence[str],
              glosses: Glosses | None = None) -> Interpretation | None:
    """Entity linking, then relation matching (through the graph's ``glosses`` when it has
    them); ``None`` when no entity of the graph is named."""
    topic = link_entity(text, entities)
    if topic is None:
        return None
    return Interpretation(topic, interpret_plan(text, topic, relations, glosses=glosses))
