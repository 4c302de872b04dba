"""Titles for an attacker's dressed pages, chosen against the classifier a tell test runs on titles.

What a title tells without reading its words is its kind (an entity's name, or a number of a
series such as "News 7": which series, and how many digits its number has), how many words it
has (a person's two, a city's one) and how many other documents carry it. A new page of a series
must take a number the corpus has not used, so "News 15" where the clean pages are "News 0" to
"News 14": always a digit more than two clean News pages in three have. Which series a new
number goes to is chosen like the rest, so the digits follow the clean series' own. Each attacker page takes, among the titles its
sentences allow, the one after which a classifier on (kind, documents sharing the title) separates
the attacker's pages so far from the clean ones least: the ROC AUC of the best such classifier,
which scores every (kind, words, sharing) group by its share of attacker pages (as
:func:`suites.graphrag.tells.title_floor` computes it over every split; here greedily, one page
at a time). On a corpus with one page per entity every entity title an attacker takes is a
title's second copy, which no clean page has; on one where entities have several pages
(:data:`environments.graphrag.prose.PAGES`) a second or third copy is also a clean page's.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence, Set

from environments.graphrag.corpus import Document

SERIES = re.compile(r"^(.*\D) (\d+)$")  # "News 7", "Letters 12", "Office directory 0"


# (a series' name with its number's digits as "#", "" for an entity's name; the title's words; other
# documents carrying it): "News 7" and "News 15" are ("News #", 2, 0) and ("News ##", 2, 0)
Group = tuple[str, int, int]


def group_auc(attack: Counter[Group], total: Counter[Group]) -> float:
    """ROC AUC of the classifier that scores each group by its share of attacker documents
    (``attack[g]`` of ``total[g]``), attacker documents against the rest; 0.5 without both."""
    shares = {g: attack[g] / n for g, n in total.items() if n}
    att = sum(attack.values())
    clean = sum(total.values()) - att
    if not att or not clean:
        return 0.5
    wins = sum(attack[g] * (total[h] - attack[h]) * (1.0 if shares[g] > shares[h] else 0.5 if shares[g] == shares[h]
                                                     else 0.0) for g in shares for h in shares)
    return wins / (att * clean)


class Titles:
    """The titles of a clean corpus and of the attacker's pages so far, by (kind, words, sharing) group."""

    def __init__(self, clean: Sequence[Document]) -> None:
        self.pages = Counter(d.title for d in clean)  # documents per title, the attacker's included
        self.mine = Counter[str]()  # attacker documents per title
        self.next: dict[str, int] = {}  # a series' next unused number
        for d in clean:
            if m := SERIES.match(d.title):
                self.next[m.group(1)] = max(self.next.get(m.group(1), 0), int(m.group(2)) + 1)
        self.total = Counter[Group]()
        self.attack = Counter[Group]()
        for title, n in self.pages.items():
            self.total[self._group(title, n)] += n

    def copy(self) -> Titles:
        """The same titles and counts, each counter its own (in the same order)."""
        other = object.__new__(Titles)
        other.pages, other.mine, other.next = Counter(self.pages), Counter(self.mine), dict(self.next)
        other.total, other.attack = Counter(self.total), Counter(self.attack)
        return other

    @staticmethod
    def _group(title: str, pages: int) -> Group:
        m = SERIES.match(title)
        return (f"{m.group(1)} {'#' * len(m.group(2))}" if m else ""), len(title.split()), pages - 1

    def _moved(self, title: str | None, series: str = "") -> tuple[Counter[Group], Counter[Group]]:
        """The groups after one more attacker page titled ``title`` (None: a new number of ``series``)."""
        total, attack = Counter(self.total), Counter(self.attack)
        if title is None:
            title = f"{series} {self.next[series]}"
            total[self._group(title, 1)] += 1
            attack[self._group(title, 1)] += 1
            return total, attack
        n, mine = self.pages[title], self.mine[title]
        if n:
            total[self._group(title, n)] -= n
            attack[self._group(title, n)] -= mine
        total[self._group(title, n + 1)] += n + 1
        attack[self._group(title, n + 1)] += mine + 1
        return total, attack

    def auc(self, title: str | None, series: str = "") -> float:
        """:func:`group_auc` after one more attacker page titled ``title`` (None: a new number of ``series``)."""
        total, attack = self._moved(title, series)
        return group_auc(attack, total)

    def least_series(self) -> str | None:
        """The series whose next number :meth:`auc` scores least (by name on a tie); None without series."""
        return min(sorted(self.next), key=lambda name: self.auc(None, name), default=None)

    def take(self, title: str) -> None:
        self.total, self.attack = self._moved(title)
        self.pages[title] += 1
        self.mine[title] += 1

    def series(self, name: str) -> str:
        """The next unused number of the series ``name``, taken (a used one would duplicate a clean
        title where none is duplicated)."""
        self.total, self.attack = self._moved(None, name)
        n = self.next[name]
        self.next[name] = n + 1
        title = f"{name} {n}"
        self.pages[title] += 1
        self.mine[title] += 1
        return title


def least_told(titles: Titles, options: Sequence[str], series_auc: float, reads_as_own: Callable[[str], bool]) -> str | None:
    """Of ``options`` (entity titles, in the attacker's order of preference) the one no attacker
    page has taken yet after which :meth:`Titles.auc` tells least, no more than a new series
    number would (``series_auc``), and under which the page reads as what it states
    (``reads_as_own``); None when none does. Shared by both dresses."""
    told: dict[Group, float] = {}  # a title no attacker page took moves its group: its AUC is the group's

    def auc(title: str) -> float:
        key = titles._group(title, titles.pages[title])
        if key not in told:
            told[key] = titles.auc(title)
        return told[key]

    ranked = sorted((e for e in options if not titles.mine[e] and auc(e) <= series_auc), key=auc)
    return next((e for e in ranked if reads_as_own(e)), None)


def named_pages(lines: Sequence[str], pages: Set[str]) -> Counter[str]:
    """The entities with a clean page that the attacker's own ``lines`` name (their claims, the
    attacker's record of what it wrote, never a clean page's), the subject counted twice."""
    return Counter(e for x in lines for c in getattr(x, "claims", ()) for e in (c.fact.head, c.fact.head, c.fact.tail)
                   if e in pages)
