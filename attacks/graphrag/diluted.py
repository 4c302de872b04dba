"""The diluting white-box attack on ``tdp-disputed`` (issue #51): make a single-valued relation
look multi-valued, then attack as ``bridged`` does.

``tdp-disputed`` refuses a step only where its relation is single-valued by the statistics of
the graph it reads: more than half of the subjects the relation is stated of, on pages about
them, have exactly one object there (:func:`controllers.graphrag.accounts.functional`). The attacker
writes part of that graph. Knowing the rule, its counter
(:func:`controllers.graphrag.accounts.single_object_subjects`) and the deployed extractor, it counts,
on its own reading of the clean corpus plus its fake claims, how many more subjects of each
contested relation need a second object before the median object count is no longer 1, and
writes those second objects (a plausible object of the relation, never one the subject has) on
pages about the subjects, one page per subject among its true facts (session 14: the statistic
no longer reads a page about no one), away from every targeted question's path. Those pages are
paid from the targets' own budgets, a page (and its statements) per target in turn, so every
target stays within the one budget (:meth:`Poisoning.check`); what is left of each target's
budget buys the variant the defense's surrogate scores highest with the diluting pages already
in the corpus (:func:`attacks.graphrag.bridged.best_variant`). One target's budget (5 pages)
cannot dilute a relation with about 40 subjects; the targets' pooled budgets can.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from attacks.graphrag.adaptive import Surrogate
from attacks.graphrag.bridged import best_variant
from attacks.graphrag.camouflage import camouflage
from attacks.graphrag.targets import STATEMENTS_PER_DOCUMENT, AttackBudget, AttackPlan, Poisoning, Target
from environments.graphrag.corpus import Document, Fact
from environments.graphrag.dataset import Dataset
from environments.graphrag.lexicon import LexiconExtractor
from environments.graphrag.lexicon_pages import Pages

# Per relation, the subjects the graph states it of and those it gives exactly one object, on the
# attacker's reading of the clean corpus plus the given documents (suites.graphrag.whitebox)
SingleSubjects = Callable[[Sequence[Document]], dict[str, tuple[frozenset[str], frozenset[str]]]]
ROUNDS = 3  # counting and writing rounds
VARIANTS = 6  # sentence forms tried per fact
SPARE = 2  # second objects written beyond the count, per relation, for those the dress may cut
POOLED_SHARE = 0.5  # at most this share of all targets' statements (and documents) goes to diluting
MIN_PAGE = 3  # statements a page needs to be about its subject (controllers.graphrag.candidates.document_subject)


def conversions_needed(subjects: int, single: int) -> int:
    """Subjects of one object that need a second before the relation stops being single-valued
    (``2 * single > subjects`` is :func:`controllers.graphrag.accounts.functional`'s test); since
    session 16 a subject given a second object on a page of its own leaves both counts
    (:func:`controllers.graphrag.accounts.agreed_objects`), so ``k`` of them must make
    ``2 * (single - k) <= subjects - k``."""
    return max(0, 2 * single - subjects)


def dilution_pages(dataset: Dataset, plan: AttackPlan, single_valued: SingleSubjects, rng: random.Random,
                   limit: int, pages_limit: int | None = None) -> list[Document]:
    """Pages of second objects that make every contested relation read as multi-valued, the
    cheapest relations first, at most ``limit`` statements (and ``pages_limit`` pages) in all.
    The defense counts a subject's objects only on pages about the subject
    (:func:`controllers.graphrag.accounts.page_accounts`), so each page is about one subject: its
    second objects (several relations' on one page where the subject is a one-object subject of
    several) among true facts of the subject, :data:`MIN_PAGE` statements at least. Each round
    counts, on the attacker's reading of the clean corpus, its fake claims and its pages so far
    as the length dress would cut them, :func:`conversions_needed` (plus :data:`SPARE`) per
    relation, and gives that many more of its one-object subjects off every targeted question's
    path an object of the relation they do not have, each in a sentence the deployed extractor
    reads as that fact; it stops when every relation it can afford reads as multi-valued."""
    table = dataset.table
    read = LexiconExtractor(sorted(table.phrases))
    clean_pages = Pages(dataset.documents)  # the context of every page's reading, with the page
    fakes = Document("dlt-fakes", "", [table.sentence(Fact(t.fact.head, t.fact.relation, t.fake))
                                       for t in plan.targets])
    targeted = {q for t in plan.targets for q in t.questions}
    on_path = {(f.head, f.relation) for q in dataset.questions if q.id in targeted for f in q.path}
    relations = sorted({t.fact.relation for t in plan.targets})
    pages: list[Document] = []
    written: set[tuple[str, str]] = set()
    dropped: set[str] = set()  # relations the limit cannot cover
    for round_ in range(ROUNDS):
        counts = single_valued([fakes, *camouflage(pages, dataset, random.Random(f"dilute-{round_}"))])
        needs = {r: conversions_needed(len(counts[r][0]), len(counts[r][1])) for r in relations if r in counts}
        used = sum(len(p.claims) for p in pages)
        chosen: dict[str, list[Fact]] = {}  # subject -> its second objects
        for r in sorted((r for r in needs if needs[r] and r not in dropped), key=lambda r: (needs[r], r)):
            subjects = sorted(s for s in counts[r][1] if (s, r) not in on_path and (s, r) not in written)
            rng.shuffle(subjects)
            subjects.sort(key=lambda s: s not in chosen)  # a page already written for the subject first
            need = needs[r] + SPARE
            cost = sum(max(MIN_PAGE, len(v)) for v in chosen.values())
            extra = sum(MIN_PAGE if s not in chosen else int(len(chosen[s]) >= MIN_PAGE) for s in subjects[:need])
            fits = pages_limit is None or len(pages) + len(chosen) + sum(s not in chosen for s in subjects[:need]) \
                <= pages_limit
            if used + cost + extra > limit or len(subjects) < need or not fits:
                dropped.add(r)
                continue
            for s in subjects[:need]:
                has = set(dataset.index.get((s, r), []))
                choices = [o for o in dataset.range_of(r) if o not in has and o != s]
                if choices and len(chosen.get(s, ())) < STATEMENTS_PER_DOCUMENT:
                    chosen.setdefault(s, []).append(Fact(s, r, rng.choice(choices)))
                    written.add((s, r))
        if not chosen:
            break
        for s in sorted(chosen):
            diluted = {x.relation for x in chosen[s]}
            true = [f for f in dataset.facts if f.head == s and f.relation not in diluted] + \
                [f for f in dataset.facts if f.tail == s and (f.head, f.relation) not in on_path]
            page = _page(dataset, read, clean_pages, f"dlt{len(pages):03d}", chosen[s], true)
            pages += [page] if page.sentences else []
    return pages


def _page(dataset: Dataset, read: LexiconExtractor, clean_pages: Pages, doc_id: str, facts: list[Fact],
          filler: Sequence[Fact] = ()) -> Document:
    """A page titled after its first fact's subject stating ``facts``, then true ``filler`` facts
    until it holds :data:`MIN_PAGE` statements (at most :data:`STATEMENTS_PER_DOCUMENT`), each
    in the first of its sentence forms the extractor reads as that fact on the page (a fact it
    never reads is left out; ``clean_pages``: the gazetteer of ``dataset``'s documents)."""
    table = dataset.table
    lines: list[str] = []
    read_facts = 0
    for j, fact in enumerate([*facts, *filler]):
        if j >= len(facts) and read_facts >= MIN_PAGE or read_facts >= STATEMENTS_PER_DOCUMENT:
            break
        for variant in range(j, j + VARIANTS):
            line = table.sentence(fact, variant=variant)
            page = Document(doc_id, table.show(facts[0].head), [*lines, line], origin="poison")
            got = {(x.head, x.relation, x.tail) for x in read.read([page], clean_pages.extended([page]))
                   if not x.negated}
            if (fact.head, fact.relation, fact.tail) in got:
                lines.append(line)
                read_facts += 1
                break
    return Document(doc_id, table.show(facts[0].head), lines, origin="poison")


def diluted_attack(dataset: Dataset, plan: AttackPlan, rng: random.Random, budget: AttackBudget,
                   surrogate: Surrogate | None = None, single_valued: SingleSubjects | None = None,
                   paged: bool = False) -> Poisoning:
    """The diluting pages (:func:`dilution_pages`, :data:`STATEMENTS_PER_DOCUMENT` a page, each
    charged to the next target in turn), then per target :func:`best_variant` within what its
    budget has left, scored by ``surrogate`` with the diluting pages in the corpus. Without a
    model of the statistic (``single_valued``) nothing is diluted."""
    out = Poisoning()
    n = len(plan.targets)
    table = dataset.table
    limit = int(POOLED_SHARE * n * budget.statements)
    pages = (dilution_pages(dataset, plan, single_valued, rng, limit, int(POOLED_SHARE * n * budget.documents))
             if single_valued and n else [])
    for k, page in enumerate(pages):
        out.add(k % n, page, table)
    for t, target in enumerate(plan.targets):
        paid = out.spend.get(t)
        left = AttackBudget(budget.documents - (paid.documents if paid else 0),
                            budget.statements - (paid.statements if paid else 0))
        if left.documents < 1 or left.statements < 1:
            continue
        seen = _with(surrogate, pages)
        for doc in best_variant(dataset, target, t, rng, left, seen, paged):
            out.add(t, doc, table)
    return out


def _with(surrogate: Surrogate | None, pages: list[Document]) -> Surrogate | None:
    """``surrogate`` reading ``pages`` beside the documents it scores."""
    if surrogate is None or not pages:
        return surrogate

    def margin(docs: Sequence[Document], target: Target) -> float:
        return surrogate([*pages, *docs], target)

    return margin


__all__ = ["SingleSubjects", "conversions_needed", "diluted_attack", "dilution_pages"]
