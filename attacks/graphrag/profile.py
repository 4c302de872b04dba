"""What the index and the graph hold for one document: the profile a dressed attacker page copies
from its clean template (issue #50 item 3, issue #51 item 1).

An attacker's tell classifier reads no field alone: the statements a page states, on how many
heads, tails and relations, how many name its title, which are negated or dated, in how many
chunks, beside the page's sentences, characters and chunks, read together. A dress that matches
each on average still leaves the joint pattern (few statements in many characters, more heads
than statements on the title allow). So the dress writes several candidate pages per template
and keeps the one whose whole profile is nearest the template's, each field measured in the
clean corpus's own spread of it.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from attacks.graphrag.perdataset import PerDataset
from attacks.graphrag.titles import SERIES
from environments.graphrag.corpus import Document, Statement
from environments.graphrag.dataset import Dataset
from environments.graphrag.lexicon import LexiconExtractor


@dataclass(frozen=True)
class Shape:
    """What the graph holds for one page: statements naming its title's entity and the others,
    distinct heads, negated statements."""

    on_title: int
    off_title: int
    heads: int
    negated: int

    @classmethod
    def of(cls, statements: Sequence[Statement], title: str) -> Shape:
        on = sum(title in (s.head, s.tail) for s in statements)
        return cls(on, len(statements) - on, len({s.head for s in statements}), sum(s.negated for s in statements))


FIELDS = ("statements", "heads", "tails", "relations", "on_title", "negated", "dated", "chunks_with_statements",
          "sentences", "characters", "chunks", "longest_sentence")


@dataclass(frozen=True)
class Profile:
    """One document's :data:`FIELDS`, as the index stores them and the graph holds them."""

    values: tuple[float, ...]
    relations: tuple[tuple[str, int], ...] = ()  # statements per relation, sorted: which relations, not only how many

    @classmethod
    def of(cls, doc: Document, statements: Sequence[Statement], title: str | None = None) -> Profile:
        """``doc``'s profile given what an extractor reads in it (``title``: the entity its page is
        about, the document's own title unless given)."""
        about = doc.title if title is None else title
        return cls((float(len(statements)), float(len({s.head for s in statements})),
                    float(len({s.tail for s in statements})), float(len({s.relation for s in statements})),
                    float(sum(about in (s.head, s.tail) for s in statements)), float(sum(s.negated for s in statements)),
                    float(sum(bool(s.dated) for s in statements)), float(len({s.chunk for s in statements})),
                    float(len(doc.sentences)), float(len(doc.text())), float(len(doc.chunks())),
                    float(max((len(x) for x in doc.sentences), default=0))),
                   tuple(sorted(Counter(s.relation for s in statements).items())))

    def gap(self, other: Profile, spread: Sequence[float]) -> float:
        """The distance to ``other``: each field's difference in units of its ``spread``, summed,
        and the statements on each relation that differ, in units of the statements' spread."""
        mine, theirs = Counter(dict(self.relations)), Counter(dict(other.relations))
        moved = sum(abs(mine[r] - theirs[r]) for r in mine.keys() | theirs.keys())
        return sum(abs(a - b) / s for a, b, s in zip(self.values, other.values, spread, strict=True)) + moved / spread[0]


def spread(profiles: Sequence[Profile]) -> tuple[float, ...]:
    """Each field's standard deviation over ``profiles`` (a clean corpus's), at least 0.1 (a field
    no clean page varies in still counts, with a large weight)."""
    columns = list(zip(*(p.values for p in profiles), strict=True)) if profiles else [() for _ in FIELDS]
    return tuple(max(0.1, statistics.pstdev(c)) if len(c) > 1 else 1.0 for c in columns)


@dataclass(frozen=True)
class CleanReading:
    """What the attacker measures of a clean corpus before dressing: its clean pages, the rule
    extractor and what it reads in each page, the entity pages by title (series pages left out),
    the entities its facts name, and each profile field's spread over the clean pages."""

    clean: list[Document]
    read: LexiconExtractor
    by_doc: dict[str, list[Statement]]
    pages_of: dict[str, list[Document]]
    entities: list[str]
    scale: tuple[float, ...]


READINGS_KEPT = 8  # datasets whose reading is kept (a grid or training uses a handful)
_READINGS: PerDataset[CleanReading] = PerDataset(READINGS_KEPT)


def clean_reading(dataset: Dataset) -> CleanReading:
    """:class:`CleanReading` of ``dataset``, computed once per dataset object (its last
    :data:`READINGS_KEPT`): the ``bridged`` planner dresses some 29 variants three times per target,
    and each dress read the whole clean corpus again (session 20: 491 s for one world's corpus under
    the shape dress). A pure function of the dataset's documents, facts and relations, which no
    caller changes."""
    return _READINGS.get(dataset, _read_clean)


def _read_clean(dataset: Dataset) -> CleanReading:
    clean = [d for d in dataset.documents if d.origin == "clean"]
    read = LexiconExtractor(sorted(dataset.table.phrases))
    by_doc: dict[str, list[Statement]] = {}
    for s in read(clean):
        by_doc.setdefault(s.doc, []).append(s)
    pages_of: dict[str, list[Document]] = {}
    for d in clean:
        if not SERIES.match(d.title):
            pages_of.setdefault(d.title, []).append(d)
    entities = sorted({f.head for f in dataset.facts} | {f.tail for f in dataset.facts})
    reading = CleanReading(clean, read, by_doc, pages_of, entities,
                           spread([Profile.of(d, by_doc.get(d.id, [])) for d in clean]))
    return reading
