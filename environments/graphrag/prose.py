"""The corpus writer's phrasing: how facts become prose (generator side only).

Every relation has several surface forms: verb phrases after the subject ("was born in {t}",
"hails from {t}") and whole clauses that may put the object first ("{t} is the birthplace of
{h}"). Pages combine facts ("She was born in Tisro and works for Marven Labs."; "Tisro, which
lies in Venland"), list several objects in one sentence, refer to their subject by pronoun or
alias, and carry distractor sentences (hedged claims, mentions without a relation) that state
nothing. Each sentence is a :class:`Line` carrying the claims it states, the answer key the
extractor is scored against.

The extractor (:mod:`environments.graphrag.lexicon`) never imports this module: a test checks it.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from environments.graphrag.corpus import Claim, Document, Fact, Line


@dataclass(frozen=True)
class Forms:
    """Surface forms of one relation: ``vps`` follow the subject; ``clauses`` name both ends."""

    vps: tuple[str, ...]
    clauses: tuple[str, ...] = ()
    negated_vps: tuple[str, ...] = ()

    def over(self, base: Forms) -> Forms:
        """These forms, with ``base``'s where this has none of a kind."""
        return Forms(self.vps or base.vps, self.clauses or base.clauses, self.negated_vps or base.negated_vps)


WORLD_FORMS: dict[str, Forms] = {
    "located_in": Forms(("is located in {t}", "lies in {t}", "is situated in {t}"), ("{t} contains {h}",)),
    "born_in": Forms(("was born in {t}", "is a native of {t}", "hails from {t}"),
                     ("{t} is the birthplace of {h}", "{h}'s birthplace is {t}")),
    "citizen_of": Forms(("is a citizen of {t}", "is a national of {t}", "holds the citizenship of {t}"),
                        ("{h}'s nationality is {t}",)),
    "works_for": Forms(("works for {t}", "is employed by {t}", "works at {t}"),
                       ("{t} employs {h}", "{h}'s employer is {t}"), ("no longer works for {t}", "left {t}")),
    "lives_in": Forms(("lives in {t}", "resides in {t}", "has made a home in {t}"), ("{t} is home to {h}",)),
    "studied_at": Forms(("studied at {t}", "graduated from {t}", "was educated at {t}"), ("{h}'s alma mater is {t}",)),
    "headquartered_in": Forms(("is headquartered in {t}", "is based in {t}", "has its headquarters in {t}"),
                              ("{t} hosts the headquarters of {h}",)),
    "founded_by": Forms(("was founded by {t}", "was established by {t}", "was set up by {t}"),
                        ("{t} founded {h}", "{t} is the founder of {h}")),
    "colleague_of": Forms(("is a colleague of {t}", "works alongside {t}"), ("{h} and {t} are colleagues",)),
    "partners_with": Forms(("partners with {t}", "collaborates with {t}", "has a partnership with {t}")),
    "affiliated_with": Forms(("is affiliated with {t}", "is associated with {t}")),
    # Multi-valued: a company has offices in several cities (its headquarters city among them).
    "office_in": Forms(("has offices in {t}", "has an office in {t}", "runs branches in {t}"),
                       ("{h}'s offices are in {t}",)),
}
# Held-out phrasing: written after the extractor was frozen and never tuned against (its misses
# on these are part of the measured recall and precision).
HELD_OUT_FORMS: dict[str, Forms] = {
    "located_in": Forms(("belongs to {t}", "is a city of {t}"), ("{t} includes {h}",)),
    "born_in": Forms(("is originally from {t}", "entered the world in {t}"), ("{h} was born and raised in {t}",)),
    "citizen_of": Forms(("holds a passport of {t}", "has {t} nationality")),
    "works_for": Forms(("is on the payroll of {t}", "draws a salary from {t}"), ("{t} counts {h} among its staff",),
                       ("quit {t}",)),
    "lives_in": Forms(("is a resident of {t}", "calls {t} home")),
    "studied_at": Forms(("earned a degree at {t}", "is an alumnus of {t}")),
    "headquartered_in": Forms(("runs its operations from {t}", "keeps its head office in {t}")),
    "founded_by": Forms(("owes its existence to {t}",), ("{t} started {h}",)),
    "colleague_of": Forms(("shares an office with {t}",)),
    "partners_with": Forms(("has teamed up with {t}",)),
    "affiliated_with": Forms(("has ties to {t}",)),
    "office_in": Forms(("has a presence in {t}", "operates a branch in {t}"), ("{h}'s regional offices are in {t}",)),
}


def real_forms(relation: str) -> tuple[Forms, Forms]:
    """Forms for a real graph's relation, built around its name (``location_of`` reads "location
    of"), and its held-out forms."""
    w = relation.replace("_", " ")
    return (Forms((f"{w} {{t}}", f"has a {w} link to {{t}}", f"is connected by {w} to {{t}}"),
                  (f"Through {w}, {{h}} is connected to {{t}}", f"{{t}} is the {w} counterpart of {{h}}")),
            Forms((f"relates to {{t}} via {w}",), (f"{{t}} is reached from {{h}} through {w}",)))


# Names how corpora are written and read (forms, held-out share, the extractor): trained weights
# are tied to it.
CORPUS_VERSION = "prose-2: held-out share 0.2, lexicon extractor, multi-valued offices"
DATE_PREFIXES = ("As of {d}, ", "Since {d}, ", "On {d}, ")
NO_LONGER = "it is no longer the case that "
HEDGE_FORMS = ("It is unclear whether {s} {vp}.", "Rumours that {s} {vp} were never confirmed.",
          "A novel once imagined that {s} {vp}.", "Nobody has shown that {s} {vp}.",
          "Early drafts wrongly stated that {s} {vp}.", "It was once claimed that {s} {vp}.")  # the last two held out
MENTIONS = ("{s} was mentioned alongside {x} in a survey in {y}.", "Visitors often confuse {s} with {x}.",
            "A photograph of {s} and {x} hangs in the archive.")


def _stable(*key: object) -> int:
    return zlib.crc32(repr(key).encode())


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _list(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


@dataclass
class Writer:
    """Writes facts as prose for one dataset. ``show`` renders an entity's name in text,
    ``pronoun`` and ``alias`` give the other ways a page refers to its subject."""

    forms: dict[str, Forms]
    held_out: dict[str, Forms] = field(default_factory=dict)
    held_out_share: float = 0.2  # share of sentences written in held-out forms
    show: Callable[[str], str] = str
    pronoun: Callable[[str], str] = lambda e: "it"
    alias: Callable[[str], str | None] = lambda e: None
    phrases: dict[str, str] = field(default_factory=dict)  # canonical phrase per relation (summaries)
    # the schema's published descriptions of its relations (a real graph's; None: a world's typed
    # schema); the index's graph carries them to readers and defenses
    glosses: dict[str, str] | None = None

    def __post_init__(self) -> None:
        if not self.phrases:
            self.phrases = {r: f.vps[0].replace(" {t}", "") for r, f in self.forms.items()}

    @property
    def relations(self) -> list[str]:
        return sorted(self.forms)

    def _forms(self, relation: str, roll: float) -> Forms:
        own = self.forms[relation]
        if roll < self.held_out_share and relation in self.held_out:
            return self.held_out[relation].over(own)
        return own

    def _vp(self, relation: str, tails: Sequence[str], pick: int, *, negated: bool = False) -> str:
        forms = self._forms(relation, (pick % 1009) / 1009)
        if negated and forms.negated_vps:
            return forms.negated_vps[pick % len(forms.negated_vps)].format(t=_list(tails))
        vp = forms.vps[pick % len(forms.vps)].format(t=_list(tails))
        return vp

    def sentence(self, fact: Fact, *, dated: str = "", negated: bool = False, variant: int = 0) -> Line:
        """One fact in one sentence; the form depends only on the fact, its modality and ``variant``,
        so attacks writing the same claim get the same words whatever ran before."""
        pick = _stable(fact, dated, negated, variant)
        forms = self._forms(fact.relation, (pick % 1009) / 1009)
        h, t = self.show(fact.head), self.show(fact.tail)
        if negated and forms.negated_vps:
            body = f"{h} {self._vp(fact.relation, [t], pick, negated=True)}"
        else:
            options = [f"{h} {vp.format(t=t)}" for vp in forms.vps] + [c.format(h=h, t=t) for c in forms.clauses]
            body = options[pick % len(options)]
            if negated:
                body = NO_LONGER + body
        text = (DATE_PREFIXES[pick % len(DATE_PREFIXES)].format(d=dated) + body) if dated else _cap(body)
        return Line(text + ".", [Claim(fact, negated, dated)])

    def page(self, entity: str, own: Sequence[Fact], about: Sequence[Fact], rng: random.Random,
             follow_up: Callable[[str], Fact | None] = lambda e: None, others: Sequence[str] = ()) -> Document:
        """The page of ``entity``: its own facts (grouped per relation, sometimes two in one
        sentence, sometimes with a relative clause on the object), facts naming it as object,
        and maybe a distractor."""
        lines: list[Line] = []
        groups: dict[str, list[str]] = {}
        for f in own:
            groups.setdefault(f.relation, []).append(f.tail)
        pending = list(groups.items())
        first = True
        while pending:
            relation, tails = pending.pop(0)
            subject = self.show(entity) if first else self._ref(entity, rng)
            claims = [Claim(Fact(entity, relation, t)) for t in tails]
            shown = [self.show(t) for t in tails]
            forms = self._forms(relation, rng.random())
            if len(tails) == 1 and forms.clauses and rng.random() < 0.25 and subject == self.show(entity):
                text = rng.choice(forms.clauses).format(h=subject, t=shown[0])
            else:
                text = f"{subject} {self._vp(relation, shown, rng.randrange(1 << 30))}"
                extra = follow_up(tails[0]) if len(tails) == 1 else None
                if extra is not None and rng.random() < 0.3:
                    text += f", which {self._vp(extra.relation, [self.show(extra.tail)], rng.randrange(1 << 30))}"
                    claims.append(Claim(extra))
                elif pending and rng.random() < 0.3:
                    relation2, tails2 = pending.pop(0)
                    text += f" and {self._vp(relation2, [self.show(t) for t in tails2], rng.randrange(1 << 30))}"
                    claims += [Claim(Fact(entity, relation2, t)) for t in tails2]
            lines.append(Line(_cap(text) + ".", claims))
            first = False
        for f in about:
            forms = self._forms(f.relation, rng.random())
            if forms.clauses and rng.random() < 0.3:
                clause = rng.choice(forms.clauses)
                ref = self.pronoun(entity) if clause.startswith("{t}") and rng.random() < 0.5 else self.show(entity)
                text = clause.format(h=self.show(f.head), t=ref)
            else:
                text = f"{self.show(f.head)} {self._vp(f.relation, [self.show(entity)], rng.randrange(1 << 30))}"
            lines.append(Line(_cap(text) + ".", [Claim(f)]))
        if others and lines and rng.random() < 0.7:
            lines.insert(rng.randrange(1, len(lines) + 1), self.distractor(entity, rng, others))
        return Document(f"page-{entity}", entity, list(lines))

    def _ref(self, entity: str, rng: random.Random) -> str:
        roll, alias = rng.random(), self.alias(entity)
        if roll < 0.4:
            return self.pronoun(entity)
        if roll < 0.6 and alias:
            return alias
        return self.show(entity)

    def distractor(self, entity: str, rng: random.Random, others: Sequence[str]) -> Line:
        """A sentence that names entities, sometimes with a relation's words, and states no fact."""
        x = self.show(rng.choice(others))
        if rng.random() < 0.5:
            return self._mention(entity, x, rng)
        relation = rng.choice(self.relations)
        return Line(rng.choice(HEDGE_FORMS[:4] if rng.random() >= self.held_out_share else HEDGE_FORMS[4:]).format(s=self.show(entity), vp=self._vp(relation, [x], rng.randrange(1 << 30))))

    def mention(self, entity: str, rng: random.Random, others: Sequence[str]) -> Line:
        """A sentence that names ``entity`` and another entity and no relation's words ("Visitors
        often confuse X with Y"): it states no fact, and no extractor that reads relation cues can
        read one into it (a hedge such as "A novel once imagined that X lives in Y" can be misread
        as a claim by an extractor that does not know the hedge)."""
        return self._mention(entity, self.show(rng.choice(others)), rng)

    def _mention(self, entity: str, shown: str, rng: random.Random) -> Line:
        return Line(rng.choice(MENTIONS).format(s=self.show(entity), x=shown, y=rng.randrange(1950, 2020)))

    def news(self, facts: Sequence[Fact], rng: random.Random, title: str) -> Document:
        """A short news item: each fact in full names, in one of its forms."""
        return Document(f"news-{title}", title, [self.sentence(f, variant=rng.randrange(1 << 30)) for f in facts])

    def several(self, entity: str, relation: str, tails: Sequence[str], rng: random.Random) -> list[Line]:
        """Several objects of one relation on ``entity``'s page: one sentence listing them all,
        or the first in one sentence and the rest in a second ("It also has offices in ...")."""
        parts = [tails[:1], tails[1:]] if len(tails) > 1 and rng.random() < 0.5 else [tails]
        lines = []
        for k, part in enumerate(parts):
            subject, shown = self._ref(entity, rng), _list([self.show(t) for t in part])
            forms = self._forms(relation, rng.random())
            if k == 0 and forms.clauses and rng.random() < 0.3:
                text = rng.choice(forms.clauses).format(h=self.show(entity), t=shown)
            else:
                forms_vp = self._vp(relation, [self.show(t) for t in part], rng.randrange(1 << 30))
                text = f"{subject} {'also ' if k else ''}{forms_vp}"
            lines.append(Line(_cap(text) + ".", [Claim(Fact(entity, relation, t)) for t in part]))
        return lines

    def job_change(self, person: str, old: str, new: str, dates: tuple[str, str]) -> list[Line]:
        """A superseded fact: the old job as of a date, then retracted beside the new one."""
        then, now = dates
        old_fact, new_fact = Fact(person, "works_for", old), Fact(person, "works_for", new)
        ref = self.pronoun(person)
        return [self.sentence(old_fact, dated=then),
                Line(f"On {now}, {ref} left {self.show(old)} and joined {self.show(new)}.",
                     [Claim(old_fact, True, now), Claim(new_fact, False, now)])]


# Pages per entity: "one" (every corpus measured before issue #50 item 3's second round) or
# "several": a share of the entities with facts of their own get one more page under their name,
# as wikis and news have (a profile, an update, a list page), so a title used twice is no longer
# an attacker's alone (docs/graphrag.md, "Tells").
PAGES = ("one", "several")
MORE_PAGES_SHARE = 0.5


def more_pages(facts: Sequence[Fact], writer: Writer, rng: random.Random, share: float = MORE_PAGES_SHARE
               ) -> list[Document]:
    """One more page for ``share`` of the entities that head a fact, titled with the entity's name
    like its first: a random part of its own facts (at least one) and of the facts naming it as
    object, written as :meth:`Writer.page` writes a page. The world's facts are unchanged."""
    own: dict[str, list[Fact]] = {}
    about: dict[str, list[Fact]] = {}
    for f in facts:
        own.setdefault(f.head, []).append(f)
        about.setdefault(f.tail, []).append(f)
    entities = sorted(set(own) | set(about))
    docs: list[Document] = []
    for entity in sorted(own):
        if rng.random() >= share:
            continue
        mine = rng.sample(own[entity], rng.randint(1, len(own[entity])))
        theirs = [f for f in about.get(entity, []) if f.head != entity and rng.random() < 0.3]
        page = writer.page(entity, mine, theirs, rng, others=entities)
        docs.append(Document(f"more{len(docs):05d}", page.title, page.sentences))
    return docs


def write_pages(facts: Sequence[Fact], writer: Writer, rng: random.Random, *, tail_share: float = 0.6,
                follow_up: Callable[[str], Fact | None] = lambda e: None) -> list[Document]:
    """One page per entity. Every fact is on its head's page; ``tail_share`` of them also on
    their object's page, so some facts have one source and others several."""
    own: dict[str, list[Fact]] = {}
    about: dict[str, list[Fact]] = {}
    for f in facts:
        own.setdefault(f.head, []).append(f)
        own.setdefault(f.tail, [])
        if f.tail != f.head and rng.random() < tail_share:
            about.setdefault(f.tail, []).append(f)
    entities = sorted(own)
    docs = []
    for i, entity in enumerate(entities):
        page = writer.page(entity, own[entity], about.get(entity, []), rng, follow_up, entities)
        docs.append(Document(f"page{i:05d}", page.title, page.sentences))
    return docs
