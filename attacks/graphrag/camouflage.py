"""An attacker's documents dressed as the clean corpus's: each takes the shape of a clean page.

A document an attacker writes is short, titled after its purpose ("Update on X"), often dated
"today", and states one to four facts; a clean page of its length states more, on more
subjects. Each of these separates poison from clean, and a learned defense would read that tell
instead of the content (issue #50 item 3, issue #51 item 1). With ``dress="shape"`` (opt-in:
the pipeline's default is still ``"length"``, below), before publishing, every added document
is matched to a clean page drawn from a shuffled deck of the clean corpus (without
replacement, so the templates are a near-exact sample of the corpus), and takes that page's
shape, as the attacker measures it by running the pipeline's rule extractor over the page:

- its title and template: the name of an entity the document names (or of the template's),
  taking the shape of that entity's page the attacker's lines fit best (below), or the next number of a series ("News 7",
  never a number the corpus has used, in the series whose numbers' digits that tells least)
  taking a page of that series' shape: whichever a classifier on the title's kind (series and
  digits) and the documents sharing it tells least (:mod:`attacks.graphrag.titles`);
- its statements: the attacker's fact-stating sentences, as many as the template's statement
  count allows (in the attack's order), then true filler written by the corpus's own writer
  until the page states as many facts, on as many distinct subjects, as the template: for an
  entity template a page about the subject (its own facts, then facts naming it as object), for
  a series template true facts on the template's relations, each in full names. Filler never
  states a fact on an (entity, relation) pair an attacker document contests with a false or
  negated claim (it neither restates nor denies what the attack claims there), and the attacker keeps only filler the extractor reads exactly
  (the document is extracted and any filler sentence that yields a statement it does not state
  is dropped);
- negation: a negated claim of the attack is kept only where the template carries one (nor
  is it the sentence always kept first);
- its length: fact-free mentions ("Visitors often confuse X with Y", never hedges, which an
  extractor can misread) up to the template's characters (chunks follow);
- its dates: the template's, one per fact-stating sentence, the attacker's first; no others;
- its whole profile at once (:mod:`attacks.graphrag.profile`): statements, heads, tails,
  relations, statements on the title, negated and dated ones, chunks, sentences and characters,
  read together as a tell classifier reads them. Filler may restate a subject's fact in other
  words (clean pages do), mentions are drawn to fill the template's sentence count at its
  length, and of :data:`CANDIDATES` pages written per template (and per page of the title's
  entity) the one whose profile is nearest its template's is published.

So titles, lengths, dates and what the graph holds per document (statements, heads, flags)
follow the clean corpus's distributions, jointly, more closely than before though not yet
closely enough to hide them (docs/graphrag-tells.md). The attack pays for it: a template with few
statements leaves room for few claims, one without a negation drops the attack's "no longer"
sentence, and a corpus with few dated documents leaves it few temporal markers. Filler is true
and is not charged to the attack's budget (it states nothing false). The cross-document tell is
a duplicated title: on a corpus with one page per entity an attacker page titled after an
entity is the title's second copy, which no clean page is; on a corpus whose entities have
several pages (``pages="several"``) it is not the attacker's alone (docs/graphrag.md).

``dress="length"`` (the default, the dress before issue #50 item 3): each document is cut to a
template's length (its fact-stating sentences kept first) or padded to it with fact-free
mentions, its first fact-stating sentences carry the template's dates, and it keeps its
attacker's title.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from attacks.graphrag.lengthdress import DATED, by_length, deal, redate, template_dates
from attacks.graphrag.lengthdress import read_near as _read
from attacks.graphrag.lengthdress import reading as _reading
from attacks.graphrag.placement import entity_pages, host_templates
from attacks.graphrag.profile import Profile, Shape, clean_reading
from attacks.graphrag.titles import SERIES, Titles, least_told, named_pages
from environments.graphrag.corpus import Claim, Document, Fact, Statement
from environments.graphrag.dataset import Dataset
from environments.graphrag.lexicon import LexiconExtractor


def _claims(line: str) -> tuple[Claim, ...]:
    return getattr(line, "claims", ())


def _names(line: str, entity: str | None) -> bool:
    return any(entity in (c.fact.head, c.fact.tail) for c in _claims(line))


def _attack_lines(doc: Document, shape: Shape, target: int, entity: str | None) -> list[str]:
    """The attacker's sentences kept for a template of ``shape`` and ``target`` characters
    about ``entity``: fact-stating ones first (the first always), no more claims naming
    ``entity`` and no more naming others than the template's statements, a negated one only where
    the template carries a negation, then the others within the length."""
    kept, size, on, off = [], -1, 0, 0
    # fact-stating sentences first; without a negation in the template, negated ones last (the
    # first sentence is always kept, and a clean page without one has no negation to match)
    order = sorted(range(len(doc.sentences)), key=lambda i: (
        not _claims(doc.sentences[i]), not shape.negated and any(c.negated for c in _claims(doc.sentences[i])), i))
    for i in order:
        line = doc.sentences[i]
        n, named = len(_claims(line)), _names(line, entity)
        fits = on + n <= shape.on_title if named else off + n <= shape.off_title
        if kept and (size + 1 + len(line) > target + len(line) // 2 or (n and not fits)
                     or (not shape.negated and any(c.negated for c in _claims(line)))):
            continue
        kept.append(i)
        size += 1 + len(line)
        on, off = (on + n, off) if named else (on, off + n)
    return [doc.sentences[i] for i in sorted(kept)]


def _by_relation(facts: list[Fact], want: Counter[str]) -> list[Fact]:
    """``facts`` with those on a relation ``want`` still asks for first (each taken lowers its
    count), in their order: the filler states the template's relations, not only as many."""
    left, first, rest = Counter(want), [], []
    for f in facts:
        if left[f.relation] > 0:
            left[f.relation] -= 1
            first.append(f)
        else:
            rest.append(f)
    return first + rest


def _filler_facts(dataset: Dataset, template: Document, subject: str | None, avoid: set[tuple[str, str]],
                  heads: set[str], want_heads: int, rng: random.Random,
                  relations: Counter[str] | None = None) -> tuple[list[Fact], list[Fact]]:
    """True facts to fill a page, in the order that reaches ``want_heads`` distinct heads first,
    on the ``relations`` the template states and the attacker's lines do not first:
    (facts naming ``subject``, facts about its neighbours naming it not), or for a series
    template (``subject`` None), ([], random facts on the template's relations, then any)."""
    ok = [f for f in dataset.facts if (f.head, f.relation) not in avoid]
    if subject is None:
        carried = {c.fact.relation for _, c in template.claims}
        pools = [[], [f for f in ok if f.relation in carried] + [f for f in ok if f.relation not in carried]]
    else:
        near = {f.tail for f in ok if f.head == subject} | {f.head for f in ok if f.tail == subject}
        pools = [[f for f in ok if subject in (f.head, f.tail)],
                 [f for f in ok if f.head in near and subject not in (f.head, f.tail)]]
    out: tuple[list[Fact], list[Fact]] = ([], [])
    for k, pool in enumerate(pools):
        seen = set(heads)
        shuffled = _by_relation(rng.sample(pool, len(pool)), relations or Counter())
        # new heads first while the template has more, then facts on heads already stated, then
        # the rest (an attacker's lines already name several subjects)
        first: list[Fact] = []
        for f in shuffled:
            if f.head not in seen and len(seen) < want_heads:
                seen.add(f.head)
                first.append(f)
        rest = [f for f in shuffled if f not in first]
        out[k].extend(first + sorted(rest, key=lambda f: f.head not in seen))
    # then the subject's facts once more, restated in other words, as clean pages restate a fact
    # (a dated change of employer states the new one twice): a page whose template reads more
    # statements on its title than the subject has true facts to spare can still reach its count
    out[0].extend(rng.sample(out[0], len(out[0])))
    return out


DRESSES = ("shape", "length", "entity", "titled")
CANDIDATES = 4  # pages the shape dress writes per template, keeping the one nearest its profile


def camouflage(added: Sequence[Document], dataset: Dataset, rng: random.Random, dress: str = "length") -> list[Document]:
    """``added`` documents with ``dress="shape"`` each in the shape of a clean template (module
    docstring); with ``"length"`` (the pipeline's default, the dress TDP's shipped weights were
    trained on and every table in docs/graphrag.md measured) only cut or padded to a template's
    length and dated as it is, titled as the attacker titled it; with ``"entity"`` the claims
    first placed on pages titled after the entities they name (:mod:`attacks.graphrag.placement`),
    each then in the shape of its entity's clean page; with ``"titled"`` the length dress
    keeping the attacker's own titles (the default before session 18, on which TDP's shipped
    weights were trained)."""
    if dress in ("length", "titled"):
        return by_length(added, dataset, rng, retitle=dress == "length")
    if dress not in DRESSES:
        raise ValueError(f"dress: {dress!r} is not one of {', '.join(DRESSES)}")
    placed: Sequence[str | None] = [None] * len(added)
    degree, used = Counter(e for f in dataset.facts for e in (f.head, f.tail)), Counter[str]()
    if dress == "entity":
        added, placed = entity_pages(added, dataset)
    measured = clean_reading(dataset)  # once per dataset: the planners dress thousands of variants
    clean, read, by_doc, pages_of, entities = (measured.clean, measured.read, measured.by_doc, measured.pages_of,
                                               measured.entities)
    # Every pair an attacker document contests (a false or negated claim): filler neither restates
    # nor denies what the attack claims there.
    true = set(dataset.facts)
    avoid = {(c.fact.head, c.fact.relation) for d in added for _, c in d.claims if c.negated or c.fact not in true}
    titles, serial = Titles(clean), [d for d in clean if SERIES.match(d.title)]
    scale = measured.scale
    out: list[Document] = []
    deck: list[Document] = []
    for doc, host in zip(added, placed, strict=True):
        least = min((len(x) for x in doc.sentences if _claims(x)), default=0)
        template = deal(deck, clean, least, rng)
        if host is not None:  # placed on its entity's page: the shape of that entity's clean page
            titles.take(host)
            seen = _Seen(dataset, clean, read, by_doc, avoid, entities, scale)
            doc = Document(doc.id, doc.title, _read_once(read, clean, host, doc.sentences), doc.origin)
            dressed = [_dress_as(seen, doc, t, host, host, random.Random(rng.random()))
                       for t in host_templates(host, clean, degree, used)]
            out.append(min(dressed, key=lambda d: d[0])[1])
            continue
        # The title (attacks/graphrag/titles.py): of the entities the document names (those with
        # true facts enough to fill their page first, then the most named) and the template's own,
        # the one a classifier on title kind and sharing tells least, if no new series number tells
        # less. Its lines must read under that title as what they state ("It is no longer the
        # case that X ..." reads as about a page's entity). An entity title takes the shape of
        # one of that entity's pages, a series title a series page's.
        own = _reading(read, clean, doc.title, list(doc.sentences))
        gold = {(c.fact.head, c.fact.relation, c.fact.tail, c.negated) for _, c in doc.claims}
        named = named_pages(doc.sentences, set(pages_of))
        supply = {e: sum(e in (f.head, f.tail) and (f.head, f.relation) not in avoid for f in dataset.facts)
                  + named[e] // 2 - Shape.of(by_doc.get(pages_of[e][0].id, []), e).on_title for e in named}
        options = sorted(named, key=lambda e: (supply[e] < 0, -named[e], e))
        options += [template.title] if template.title in pages_of and template.title not in named else []
        # a new number goes to the series whose number tells least (its digits counted), and takes
        # the shape of one of that series' pages: the template, else one dealt next, else any
        name = titles.least_series()
        spare = next((d for d in [template, *deck, *rng.sample(serial, len(serial))]
                      if (m := SERIES.match(d.title)) and m.group(1) == name), None)
        numbered = SERIES.match(spare.title) if spare else None
        series_auc = titles.auc(None, numbered.group(1)) if numbered else 2.0
        subject = least_told(titles, options, series_auc, partial(_reads_within, read, clean, list(doc.sentences),
                                                                  own | gold))
        if subject is None and numbered is None:  # no series to title it with: the template's own entity
            subject = template.title
        if subject is not None:  # each of the entity's pages is tried as the template
            titles.take(subject)
            title, templates = subject, pages_of[subject]
        else:
            assert spare is not None and numbered is not None  # a series page, dealt or chosen above
            if spare in deck:
                deck.remove(spare)
            title, templates = titles.series(numbered.group(1)), [spare]
        seen = _Seen(dataset, clean, read, by_doc, avoid, entities, scale)
        dressed = [_dress_as(seen, doc, t, subject, title, random.Random(rng.random())) for t in templates]
        out.append(min(dressed, key=lambda d: d[0])[1])
    return out


def _reads_within(read: LexiconExtractor, clean: list[Document], lines: list[str], said: set[tuple], title: str) -> bool:
    """Whether ``lines`` under ``title`` read as nothing beyond ``said``."""
    return _reading(read, clean, title, lines) <= said


def _read_once(read: LexiconExtractor, clean: list[Document], title: str, lines: Sequence[str]) -> list[str]:
    """``lines`` with each claim stated once: of the lines stating the same claims, the first the
    extractor reads under ``title`` as stating them (else the first); lines stating nothing kept."""
    out, done = [], set()
    for k, line in enumerate(lines):
        claims = frozenset((c.fact.head, c.fact.relation, c.fact.tail, c.negated) for c in _claims(line))
        if claims and claims in done:
            continue
        rest = [x for x in lines[k + 1:] if frozenset((c.fact.head, c.fact.relation, c.fact.tail, c.negated)
                                                       for c in _claims(x)) == claims]
        if claims and rest and not claims <= _reading(read, clean, title, [line]):
            continue  # a later wording of the same claims may be read
        out.append(line)
        done.add(claims) if claims else None
    return out


@dataclass(frozen=True)
class _Seen:
    """What the attacker measured before dressing: the clean pages and what the extractor reads
    in each, the pairs its attack contests, the entities and each profile field's spread."""

    dataset: Dataset
    clean: list[Document]
    read: LexiconExtractor
    by_doc: dict[str, list[Statement]]
    avoid: set[tuple[str, str]]
    entities: list[str]
    scale: tuple[float, ...]


def _dress_as(seen: _Seen, doc: Document, template: Document, subject: str | None, title: str,
              rng: random.Random) -> tuple[float, Document]:
    """``doc`` in ``template``'s shape under ``title``: :data:`CANDIDATES` pages (filler drawn
    anew, its counts off by one either way), each grown until the extractor reads the template's
    counts (it misses some), and of them the one whose whole profile is nearest the template's
    (:mod:`attacks.graphrag.profile`), with its gap."""
    shape, target = Shape.of(seen.by_doc.get(template.id, []), template.title), len(template.text())
    lines = _attack_lines(doc, shape, target, subject)
    stated = _reading(seen.read, seen.clean, title, lines)  # the attacker's lines as read under their new title
    want = [shape.on_title - sum(subject in s[::2] for s in stated), shape.off_title - sum(subject not in s[::2] for s in stated)]
    mentioned = subject or next((c.fact.head for _, c in doc.claims), None) or rng.choice(seen.entities)
    aim = Profile.of(template, seen.by_doc.get(template.id, []))
    relations = Counter(dict(aim.relations)) - Counter(s[1] for s in stated)
    best: tuple[float, Document] | None = None
    for k in range(CANDIDATES):
        g = random.Random(rng.random())
        on, off = _filler_facts(seen.dataset, template, subject, seen.avoid, {s[0] for s in stated}, shape.heads, g,
                                relations)
        take = [max(0, w + (g.randint(-1, 1) if k else 0)) for w in want]
        for _ in range(3):
            got, dressed, read_there = _filled(seen.dataset, doc, title, lines, on[:take[0]], off[:take[1]], subject,
                                               stated, template_dates(template), (target, len(template.sentences)),
                                               mentioned, seen.entities, seen.clean, seen.read, g)
            gap = aim.gap(Profile.of(dressed, read_there, subject or title), seen.scale)
            if best is None or gap < best[0]:
                best = (gap, dressed)
            short = [shape.on_title - got[0], shape.off_title - got[1]]
            grow = [min(len(pool), t + max(0, d)) for pool, t, d in zip((on, off), take, short, strict=True)]
            if grow == take:
                break
            take = grow
    assert best is not None
    return best


def _filled(dataset: Dataset, doc: Document, title: str, lines: list[str], on: list[Fact], off: list[Fact],
            subject: str | None, stated: set[tuple], dates: list[str], target: tuple[int, int], mentioned: str,
            entities: list[str], clean: list[Document], read: LexiconExtractor,
            rng: random.Random) -> tuple[tuple[int, int], Document, list[Statement]]:
    """The attacker's ``lines``, then ``on`` as a page about ``subject`` and ``off`` one full-name
    sentence each, as the corpus's writer writes them, with only the filler the extractor reads
    exactly, padded to ``target`` (characters, sentences); how many statements it reads naming
    ``subject`` and not, the page, and what it reads there."""
    table = dataset.table
    first = list(dict.fromkeys(on))
    again = on[len(first):] if on[:len(first)] == first else []
    filler = list(table.page(subject, [f for f in first if f.head == subject],
                             [f for f in first if f.head != subject], rng).sentences) if first and subject else []
    filler += [table.sentence(f, variant=rng.randrange(1 << 30)) for f in again]
    filler += [table.sentence(f, variant=rng.randrange(1 << 30)) for f in off]
    for attempt in range(3):
        sentences, source = _dressed(dataset, lines, filler, dates, target, mentioned, entities, rng)
        dressed = Document(doc.id, title, sentences, doc.origin)
        got = _read(read, clean, dressed)
        true = {(c.fact.head, c.fact.relation, c.fact.tail, False) for x in filler for c in _claims(x)}
        wrong = [s for s in got if (s.head, s.relation, s.tail, s.negated) not in stated | true]
        counts = (sum(subject in (s.head, s.tail) for s in got), sum(subject not in (s.head, s.tail) for s in got))
        if not wrong:
            break
        chunk = [cid for cid, part in dressed.chunks() for _ in part]
        # per misread, a filler line of its chunk goes: the one naming its object, else the last
        # (whose reference it followed); later attempts drop every filler line of its chunk.
        # The attacker's own lines are never dropped.
        cut = set()
        for w in wrong:
            near = sorted((table.show(w.tail) in sentences[k], k) for k in range(len(sentences))
                          if source[k] is not None and chunk[k] == w.chunk)
            cut |= {source[k] for _, k in (near if attempt else near[-1:])}
        filler = [x for k, x in enumerate(filler) if k not in cut]
    else:  # still misread: no filler at all
        sentences, _ = _dressed(dataset, lines, [], dates, target, mentioned, entities, rng)
        dressed = Document(doc.id, title, sentences, doc.origin)
        got = _read(read, clean, dressed)
        counts = (sum(subject in (s.head, s.tail) for s in got), sum(subject not in (s.head, s.tail) for s in got))
    return counts, dressed, got


def _dressed(dataset: Dataset, lines: list[str], filler: list[str], dates: list[str], size: tuple[int, int],
             mentioned: str, entities: list[str], rng: random.Random) -> tuple[list[str], list[int | None]]:
    """The attacker's ``lines`` (those stating no fact only where the length leaves room), then
    ``filler``, dated with the template's ``dates`` (the attacker's fact-stating sentences first),
    padded with mentions of ``mentioned`` to about ``size`` (characters, sentences): while
    sentences are short, the mention of three drawn whose length best fits the characters left
    per sentence left, then any while nearer the characters; and for each sentence, its index in
    ``filler`` (None if not filler)."""
    target, count = size
    room = target - len(" ".join([*(x for x in lines if _claims(x)), *filler]))
    asides = set()
    for k, x in enumerate(lines):
        if not _claims(x) and len(x) + 1 <= room + len(x) // 2:
            asides.add(k)
            room -= len(x) + 1
    lines = [x for k, x in enumerate(lines) if _claims(x) or k in asides]
    sentences = [*lines, *filler]
    source: list[int | None] = [None] * len(lines) + list(range(len(filler)))
    dated = sorted((i for i, x in enumerate(sentences) if DATED.match(x) or _claims(x)), key=lambda i: (i >= len(lines), i))
    dates = list(dates)
    for i in dated:
        sentences[i] = redate(sentences[i], dates.pop(0) if dates else None, rng)
    others = [e for e in entities if e != mentioned]
    while True:
        length = len(" ".join(sentences))
        if len(sentences) < count:
            fits = (target - length) / (count - len(sentences)) - 1
            extra = min((dataset.table.mention(mentioned, rng, others) for _ in range(3)), key=lambda x: abs(len(x) - fits))
        else:
            extra = dataset.table.mention(mentioned, rng, others)
        if length + 1 + len(extra) > target + len(extra) // 2:
            return sentences, source  # the nearer of the two lengths around the template's
        at = rng.randrange(len(sentences) + 1)
        sentences.insert(at, extra)
        source.insert(at, None)
