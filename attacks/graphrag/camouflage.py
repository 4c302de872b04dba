"""An attacker's documents dressed as the clean corpus's: lengths and dates drawn from it.

A document an attacker writes is short and (in GragPoison's recipe) dated "today"; clean pages
are longer and rarely dated. Metadata alone would then separate them, and any learned defense
would read that tell instead of the content. Before publishing, every added document is
matched to a clean document drawn at random among those that can hold one of its
fact-stating sentences (its template). It is cut to about the template's
length in characters (chunks follow from it) (its fact-stating sentences kept first) or padded to it with sentences that
state no fact (the writer's own mentions of the document's subject beside another entity, never
its hedged sentences: an extractor that does not know a hedge reads a claim into it, and on a real
graph, whose pages are long, the padding of one document held dozens of them); its first fact-
stating sentences carry the template's dates, one each, and no others carry a date. So the
lengths and dates of poison documents follow the clean corpus's distributions, and the
attack pays for it: a short template leaves room for one claim, and a corpus with few dated
documents leaves it few temporal markers (none on the real graphs, whose pages carry no
dates).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from environments.graphrag.corpus import Claim, Document, Line
from environments.graphrag.dataset import Dataset
from environments.graphrag.prose import DATE_PREFIXES

_DATE = re.compile(r"\d{4}/\d{2}/\d{2}")
_PREFIX = re.compile("^(?:" + "|".join(re.escape(p.split("{d}")[0]) for p in DATE_PREFIXES) + r")(\d{4}/\d{2}/\d{2}), ")


def _dates(doc: Document) -> list[str]:
    return [m.group(0) for s in doc.sentences for m in [_DATE.search(s)] if m]


def redate(line: str, new: str | None, rng: random.Random) -> str:
    """``line`` carrying the date ``new`` (replacing its own, or as a new prefix when it states
    a fact), or without any date prefix (``None``)."""
    m = _PREFIX.match(line)
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


def _fit(sentences: Sequence[str], target: int) -> list[str]:
    """The sentences kept within about ``target`` characters: those stating facts first (the
    first always), in their own order."""
    order = sorted(range(len(sentences)), key=lambda i: (not getattr(sentences[i], "claims", ()), i))
    kept, size = [], -1
    for i in order:
        if kept and size + 1 + len(sentences[i]) > target + len(sentences[i]) // 2:
            continue
        kept.append(i)
        size += 1 + len(sentences[i])
    return [sentences[i] for i in sorted(kept)]


def _deal(deck: list[Document], clean: Sequence[Document], least: int, rng: random.Random) -> Document:
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


def camouflage(added: Sequence[Document], dataset: Dataset, rng: random.Random) -> list[Document]:
    """``added`` documents, each cut or padded to a clean template's length and dated as it is
    (module docstring)."""
    clean = [d for d in dataset.documents if d.origin == "clean"]
    entities = sorted({f.head for f in dataset.facts} | {f.tail for f in dataset.facts})
    out: list[Document] = []
    deck: list[Document] = []
    for doc in added:
        least = min((len(x) for x in doc.sentences if getattr(x, "claims", ())), default=0)
        template = _deal(deck, clean, least, rng)
        target, dates = len(template.text()), _dates(template)
        sentences = []
        for line in _fit(doc.sentences, target):
            dated = bool(_PREFIX.match(line)) or bool(getattr(line, "claims", ()))
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
