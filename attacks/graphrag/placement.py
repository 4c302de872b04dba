"""Where an attacker's claims go: on pages titled after the entities they name (issue #50 item 3).

An attack writes each target's claims on several pages of its own. Dressed as clean pages
(:mod:`attacks.graphrag.camouflage`), a page titled after anything the claim does not name states
something off its title, which a clean entity page rarely does; and a page titled after the
claim's subject or object, when that entity already has two clean pages, is a title's third copy,
which no clean title is. Both are tells no dress hides while the pages stay (the on-title floor,
:mod:`suites.graphrag.tellfloor`). With ``dress="entity"`` the attacker places its claims instead
of dressing its pages one by one: every fact-stating sentence it wrote goes to a page titled after
an entity each of its claims names (the subject, the fake object, an entity it links), one page
per such entity with at most one clean page (a second copy, as half the clean entities of a
corpus with several pages have), and each page is then dressed as that entity's clean page (its
true facts about the entity around the claims). Fewer pages per target, each stating every claim
on its entity, the claim on both its subject's and its object's page where both can take one.
What no entity page can take (a claim whose entities all have two clean pages) stays on the
attacker's own page, dressed as before.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from attacks.graphrag.titles import SERIES
from environments.graphrag.corpus import Document
from environments.graphrag.dataset import Dataset


def _named(line: str) -> set[str]:
    """The entities every claim of ``line`` names (empty for a sentence stating nothing)."""
    claims = getattr(line, "claims", ())
    return set.intersection(*({c.fact.head, c.fact.tail} for c in claims)) if claims else set()


def _key(line: str) -> tuple[tuple[str, str, str, bool], ...]:
    return tuple(sorted((c.fact.head, c.fact.relation, c.fact.tail, c.negated) for c in getattr(line, "claims", ())))


def entity_pages(added: Sequence[Document], dataset: Dataset) -> tuple[list[Document], list[str | None]]:
    """``added`` placed on entity pages (module docstring): the attacker pages to publish, and for
    each the entity it must be titled after (None: one of the attacker's own pages, left whole,
    with only its sentences no entity page took, when one states a fact). A page's sentences keep the
    attacker's order, those whose claims it states most often first."""
    clean = Counter(d.title for d in dataset.documents if d.origin == "clean" and not SERIES.match(d.title))
    known = {f.head for f in dataset.facts} | {f.tail for f in dataset.facts}
    hosts = {e for e in known if clean[e] <= 1}
    lines: dict[str, list[str]] = {}
    source: dict[str, str] = {}
    kept: list[Document] = []
    for doc in added:
        left = []
        for line in doc.sentences:
            named = sorted(_named(line) & hosts)
            if not named:
                left.append(line)
            for e in named:
                lines.setdefault(e, []).append(line)
                source.setdefault(e, doc.id)
        if any(getattr(line, "claims", ()) for line in left):
            kept.append(Document(doc.id, doc.title, left, doc.origin))
    out: list[tuple[Document, str | None]] = []
    for e, said in lines.items():
        # the claims the attack repeats most first (its fake, in every wording it wrote, so one the
        # extractor misses does not lose it), then the rest in the attacker's order
        often = Counter(_key(line) for line in said)
        ordered = sorted(range(len(said)), key=lambda k: (-often[_key(said[k])], k))
        out.append((Document(f"{source[e]}-{len(out)}", e, [said[k] for k in ordered], "poison"), e))
    out += [(d, None) for d in kept]  # after the entity pages, so the title chooser knows those taken
    return [d for d, _ in out], [e for _, e in out]


TEMPLATES = 1  # clean pages an entity page is dressed as (choosing the nearest of several favours small ones)


def host_templates(host: str, clean: Sequence[Document], degree: Counter[str], used: Counter[str],
                   count: int = TEMPLATES) -> list[Document]:
    """The clean pages ``host``'s attacker page is dressed as: a title with an attacker page is a
    title two pages carry, so its shape is drawn from the pages of titles two clean pages carry
    (not from the host's own page, which is a first page), those with as many words in their
    title as ``host`` first, then the least ``used`` so far, then the nearest in degree (facts
    naming the title), then by title; each one returned counts as used."""
    copies = Counter(d.title for d in clean)
    pool = [d for d in clean if copies[d.title] == 2 and not SERIES.match(d.title)] or list(clean)
    words = len(host.split())
    pool.sort(key=lambda d: (len(d.title.split()) != words, used[d.id], abs(degree[d.title] - degree[host]), d.id))
    chosen = pool[:count]
    used.update(d.id for d in chosen)
    return chosen
