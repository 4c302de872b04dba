"""The length dress (the pipeline's default): an attacker's document cut or padded to a clean
template's length and dated as it is, and titled as a clean page is (issue #50 item 3: until
session 18 it kept the attacker's own title, "Update on X", which alone told its pages from clean
ones at AUC 1.00); and what both dresses of :mod:`attacks.graphrag.camouflage` share (templates
dealt from the clean corpus, their dates, what the extractor reads in a page)."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from attacks.graphrag.perdataset import PerDataset
from attacks.graphrag.titles import SERIES, Titles, named_pages
from environments.graphrag.corpus import Claim, Document, Line, Statement
from environments.graphrag.dataset import Dataset
from environments.graphrag.lexicon import LexiconExtractor
from environments.graphrag.lexicon_pages import gazetteer_of, mentions
from environments.graphrag.prose import DATE_PREFIXES

_DATE = re.compile(r"\d{4}/\d{2}/\d{2}")
# a sentence opening with a date prefix of the corpus's writer ("On 2019/03/01, "), the date its group
DATED = re.compile("^(?:" + "|".join(re.escape(p.split("{d}")[0]) for p in DATE_PREFIXES) + r")(\d{4}/\d{2}/\d{2}), ")


def template_dates(doc: Document) -> list[str]:
    return [m.group(0) for s in doc.sentences for m in [_DATE.search(s)] if m]


def redate(line: str, new: str | None, rng: random.Random) -> str:
    """``line`` carrying the date ``new`` (replacing its own, or as a new prefix when it states
    a fact), or without any date prefix (``None``)."""
    m = DATED.match(line)
    claims = getattr(line, "claims", ())
    if m:
        rest = line[m.end():]
        text = line.replace(m.group(1), new, 1) if new else rest[:1].upper() + rest[1:]
    elif new and claims:
        body = line[:1].lower() + line[1:] if line.startswith("It ") else line
        text = rng.choice(DATE_PREFIXES).format(d=new) + body
    else:
        return line
    return Line(text, tuple(Claim(c.fact, c.negated, new or "") for c in claims))


def deal(deck: list[Document], clean: Sequence[Document], least: int, rng: random.Random) -> Document:
    """The next clean template from a shuffled deck of the clean documents (refilled when
    empty) that can hold a sentence of ``least`` characters; drawing without replacement makes
    the templates' lengths and dates a near-exact sample of the clean corpus's, where
    independent draws scatter around it."""
    for attempt in range(2):
        for k, d in enumerate(deck):
            if len(d.text()) >= least:
                return deck.pop(k)
        if attempt == 0:
            deck.extend(rng.sample(list(clean), len(clean)))
    return rng.choice(list(clean))


def _fit(sentences: Sequence[str], target: int) -> list[str]:
    """The sentences kept within about ``target`` characters: those stating facts first (the
    first always), in their own order."""
    order = sorted(range(len(sentences)), key=lambda i: (not getattr(sentences[i], "claims", ()), i))
    kept: list[int] = []
    size = -1
    for i in order:
        if kept and size + 1 + len(sentences[i]) > target + len(sentences[i]) // 2:
            continue
        kept.append(i)
        size += 1 + len(sentences[i])
    return [sentences[i] for i in sorted(kept)]


_WORD = re.compile(r"\w+")
_TITLE_WORDS: dict[str, frozenset[str]] = {}


def _title_words(title: str) -> frozenset[str]:
    if title not in _TITLE_WORDS:
        _TITLE_WORDS[title] = frozenset(_WORD.findall(title.lower()))
    return _TITLE_WORDS[title]


class _Near:
    """A clean corpus's pages by the words of their titles, and each page's title mention
    (:func:`~environments.graphrag.lexicon_pages.mentions`), for :func:`read_near`."""

    def __init__(self, clean: Sequence[Document]) -> None:
        self.clean, self.size = clean, len(clean)
        self.by_word: dict[str, list[int]] = {}
        for k, d in enumerate(clean):
            for w in _title_words(d.title):
                self.by_word.setdefault(w, []).append(k)
        self.mention = [next(iter(mentions([d])), None) for d in clean]


NEAR_KEPT = 8  # clean corpora whose index is kept (a dress's, a titler's: one list per dataset)
_NEAR: dict[int, _Near] = {}


def _near(clean: Sequence[Document]) -> _Near:
    held = _NEAR.get(id(clean))
    if held is None or held.clean is not clean or held.size != len(clean):
        if len(_NEAR) >= NEAR_KEPT:
            _NEAR.pop(next(iter(_NEAR)))
        held = _NEAR[id(clean)] = _Near(clean)
    return held


def read_near(read: LexiconExtractor, clean: Sequence[Document], doc: Document) -> list[Statement]:
    """What the extractor reads in ``doc`` published beside ``clean``. Entity linking knows a
    page only through the words of its title, so the pages whose titles share no word with
    ``doc`` are left out of the context (the same reading, without re-indexing the corpus): the
    gazetteer of those pages, in the corpus's order, and ``doc`` (``clean`` indexed once per list
    object, which its callers, a dataset's clean pages, never change)."""
    words = set(_WORD.findall((doc.title + " " + doc.text()).lower()))
    near = _near(clean)
    picked = sorted({k for w in words for k in near.by_word.get(w, ())})
    found = [m for k in picked if (m := near.mention[k]) is not None]
    return read.read([doc], gazetteer_of([*found, *mentions([doc])]))


def reading(read: LexiconExtractor, clean: Sequence[Document], title: str, lines: Sequence[str]) -> set[tuple]:
    """(head, relation, tail, negated) of every statement :func:`read_near` reads in ``lines`` under ``title``."""
    return {(s.head, s.relation, s.tail, s.negated) for s in read_near(read, clean, Document("attacker", title, list(lines)))}


TITLERS_KEPT = 8  # datasets whose titler is kept (as attacks.graphrag.profile keeps readings)


class CleanTitles:
    """How the length dress titles a page: as the clean corpus titles its own. The attacker sees
    every published page's title (:class:`Titles`, the clean corpus's only) and reads pages with
    the pipeline's rule extractor; it reads no clean page's gold claims."""

    def __init__(self, dataset: Dataset, clean: Sequence[Document]) -> None:
        self.clean = list(clean)
        self.titles = Titles(clean)
        self.pages = {d.title for d in clean if not SERIES.match(d.title)}
        self.read = LexiconExtractor(sorted(dataset.table.phrases))

    @classmethod
    def of(cls, dataset: Dataset) -> CleanTitles:
        """A titler of ``dataset``'s clean pages with no attacker page taken yet: built once per
        dataset object (its last :data:`TITLERS_KEPT`; the planners dress some 29 variants per
        target, each dress a titler of its own), each call a fresh copy of its titles."""
        first = _TITLERS.get(dataset, lambda d: cls(d, [p for p in d.documents if p.origin == "clean"]))
        titler = object.__new__(cls)
        titler.__dict__.update(first.__dict__)
        titler.titles = first.titles.copy()
        return titler

    def title(self, own: str, lines: Sequence[str], template: Document) -> str:
        """The title of a page of ``lines`` the attacker titled ``own``, cut to ``template``'s
        length: a title of the template's kind, so the kinds follow the clean corpus's as the
        templates dealt from it do, under which the extractor reads no more than under ``own``
        and the claims the lines state (a pronoun reads as the page's entity). A series page's
        template ("News 3"): the series' next number no clean page uses ("News 15"). An entity
        page's (or a series number misread): of the entities with a clean page that its claims
        name, the most named (the subject first), else the template's own, that no attacker page
        took; else a new number of the series whose number tells least (:class:`Titles`), then
        of any series; and with none (a real graph's pages are one per entity) the first of
        those entities read as above, taken again, else the template's title."""
        claims = {(c.fact.head, c.fact.relation, c.fact.tail, c.negated) for x in lines for c in getattr(x, "claims", ())}
        under_own: list[set[tuple]] = []  # what it reads under ``own``, read once when needed

        def reads_as_own(title: str) -> bool:
            read = reading(self.read, self.clean, title, lines) - claims
            if read and not under_own:
                under_own.append(reading(self.read, self.clean, own, lines))
            return not read or read <= under_own[0]

        def numbered(series: str | None) -> bool:  # the series' next number reads as the page's own
            return series is not None and reads_as_own(f"{series} {self.titles.next[series]}")

        kind = SERIES.match(template.title)
        if kind and kind.group(1) in self.titles.next and numbered(kind.group(1)):
            return self.titles.series(kind.group(1))
        named = named_pages(lines, self.pages)
        options = [*sorted(named, key=lambda e: (-named[e], e)), *([template.title] if template.title in self.pages
                                                                   and template.title not in named else [])]
        subject = next((e for e in options if not self.titles.mine[e] and reads_as_own(e)), None)
        if subject is None:
            series = next((name for name in [self.titles.least_series(), *sorted(self.titles.next)] if numbered(name)),
                          None)
            if series is not None:
                return self.titles.series(series)
            subject = next((e for e in options if reads_as_own(e)), template.title)
        self.titles.take(subject)
        return subject


_TITLERS: PerDataset[CleanTitles] = PerDataset(TITLERS_KEPT)


def by_length(added: Sequence[Document], dataset: Dataset, rng: random.Random, retitle: bool = True) -> list[Document]:
    """``added`` documents, each cut or padded to a clean template's length and dated as it is,
    titled as a clean page is (:class:`CleanTitles`), or with ``retitle=False`` as the attacker
    titled it (the dress before session 18)."""
    clean = [d for d in dataset.documents if d.origin == "clean"]
    titler = CleanTitles.of(dataset) if retitle else None
    entities = sorted({f.head for f in dataset.facts} | {f.tail for f in dataset.facts})
    out: list[Document] = []
    deck: list[Document] = []
    for doc in added:
        least = min((len(x) for x in doc.sentences if getattr(x, "claims", ())), default=0)
        template = deal(deck, clean, least, rng)
        target, dates = len(template.text()), template_dates(template)
        sentences = []
        for line in _fit(doc.sentences, target):
            dated = bool(DATED.match(line)) or bool(getattr(line, "claims", ()))
            sentences.append(redate(line, dates.pop(0) if dates and dated else None, rng))
        subject = next((c.fact.head for _, c in doc.claims), None) or rng.choice(entities)
        others = [e for e in entities if e != subject]
        while True:
            filler = dataset.table.mention(subject, rng, others)
            if len(" ".join(sentences)) + 1 + len(filler) > target + len(filler) // 2:
                break  # the nearer of the two lengths around the template's
            sentences.insert(rng.randrange(len(sentences) + 1), filler)
        title = titler.title(doc.title, sentences, template) if titler else doc.title
        out.append(Document(doc.id, title, sentences, doc.origin))
    return out
