"""The length dress (the pipeline's default): an attacker's document cut or padded to a clean
template's length and dated as it is, titled as the attacker titled it; and what both dresses of
:mod:`attacks.graphrag.camouflage` share (templates dealt from the clean corpus, their dates)."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from environments.graphrag.corpus import Claim, Document, Line
from environments.graphrag.dataset import Dataset
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


def by_length(added: Sequence[Document], dataset: Dataset, rng: random.Random) -> list[Document]:
    """``added`` documents, each cut or padded to a clean template's length and dated as it is,
    titled as the attacker titled it (the dress before issue #50 item 3)."""
    clean = [d for d in dataset.documents if d.origin == "clean"]
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
        out.append(Document(doc.id, doc.title, sentences, doc.origin))
    return out
