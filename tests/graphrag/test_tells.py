"""Nothing but content should tell poison from clean (issue #50 item 3), tested as an attacker would.

Every shipped attack under the default dress, a classifier over every field the index stores and
every count the graph holds per document, titles included (:mod:`suites.graphrag.attackertell`):
the goal (AUC <= 0.6) is not met and is asserted only where it holds (docs/graphrag-tells.md).
Ids depend on a document's own text, never on when it was added or by whom; poison dates are
the clean corpus's; the classifier finds a planted title tell and a relation leak.
"""

import re
from functools import cache, lru_cache

import pytest

from attacks.graphrag import ATTACKS
from attacks.graphrag.scenario import poisoned_index
from environments.graphrag.corpus import Document, Fact, publish
from environments.graphrag.world import generate_world


@lru_cache(maxsize=32)
def _index(seed, attack):
    return poisoned_index(generate_world(seed), attack, targets=12, seed=seed, community_method="none").index


# The attacker's tell test (issue #50 item 3) under the default dress: every shipped attack on
# development worlds 0-2, built once for the module (each attack's three indexes serve its tests).
ATTACKER_WORLDS = (0, 1, 2)
# The attacker's AUC (the better of its two classifiers; suites/graphrag/attackertell.py) on the
# title's own string (its character n-grams, characters and words) under the default dress,
# measured 2026-12-07 (session 18) on worlds 0-2. Until session 18 the default dress kept the
# attacker's titles ("Update on X", "Report on X", "Notes on X", "Chronicle t.j"): 1.00.
TITLE_MEASURED = {"adaptive": 0.63, "anchored": 0.63, "bridged": 0.61, "coassert": 0.76, "community": 0.63,
                  "copy": 0.64, "diluted": 0.61, "fabricated": 0.64, "frame": 0.64, "gragpoison": 0.65,
                  "kepo": 0.66, "poisonedrag": 0.63, "restate": 0.62, "support": 0.66, "tkpa": 0.76,
                  "tkpa-rules": 0.76, "tkpa-sourced": 0.63}

# ``tkpa`` edits clean pages in place: no page of its own to dress, and which pages it edits (those
# stating a targeted fact, an entity's main page more often than not: longer) tells in their
# lengths alone; the better classifier's AUC on the six metadata columns, worlds 0-2.
EDITED_METADATA = {"tkpa": 0.67, "tkpa-rules": 0.67}


@cache
def _dressed(attack):
    from suites.graphrag.attackertell import built

    return tuple(built(attack, ATTACKER_WORLDS))


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_the_default_dress_titles_attacker_pages_as_clean_pages_are_titled(attack):
    """Every page an attack adds is titled as a clean page is: an entity's name that titles a
    clean page, or a clean series' name with a number no clean page of the series uses (each
    such title taken once); never the attacker's own formula."""
    series = re.compile(r"^(.*\D) (\d+)$")
    for item in _dressed(attack):
        docs = list(item.index.documents.values())
        clean = [d for d in docs if d.origin != "poison"]  # clean pages and those tkpa edited
        pages = {d.title for d in clean if not series.match(d.title)}
        used = {d.title for d in clean if series.match(d.title)}
        kinds = {series.match(d.title).group(1) for d in clean if series.match(d.title)}
        added = [d.title for d in docs if d.origin == "poison"]
        numbered = [t for t in added if series.match(t) and t not in pages]
        assert all(t in pages or t in numbered for t in added), (attack, sorted(set(added) - pages)[:5])
        assert all(series.match(t).group(1) in kinds and t not in used for t in numbered)
        assert len(set(numbered)) == len(numbered)


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_the_attackers_classifier_under_the_default_dress(attack):
    """The attacker's tell test (issue #50 item 3): logistic regression and gradient-boosted trees,
    leave one world out, over every field the index stores per document, every count the graph
    holds per document and the title's character n-grams (:mod:`suites.graphrag.attackertell`).
    Asserted: the six metadata columns (ids, position, lengths, dates) at most 0.6 on the point
    (an edit attack's at what it measured), and the title's string at what the default dress
    measured (:data:`TITLE_MEASURED`, +0.03: a title formula gives 1.00). The goal, every column
    <= 0.6, is **not met** and not asserted: what the graph holds per page tells the length dress's
    pages at 0.98-1.00 (docs/graphrag-tells.md has every view's figures)."""
    from suites.graphrag.attackertell import attacker_aucs

    aucs = attacker_aucs(_dressed(attack), ("metadata", "title text", "all"), resamples=200)
    metadata, title, everything = (aucs[view]["best"] for view in ("metadata", "title text", "all"))
    # ids, position, lengths, dates: the goal on the point (three worlds leave an interval of about
    # +-0.05; its upper end, 0.60-0.66 on worlds 0-2, is over 0.6 for some attacks); an edit, as measured
    assert metadata[0] <= (EDITED_METADATA[attack] + 0.03 if attack in EDITED_METADATA else 0.6), (attack, metadata)
    assert title[1] <= title[0] <= title[2]
    assert title[0] <= TITLE_MEASURED[attack] + 0.03, (attack, title)
    assert everything[0] >= title[0] - 0.05  # more columns never tell much less than a subset


def test_ids_and_order_do_not_depend_on_publication_order_or_authorship():
    docs = generate_world(1000).documents
    extra = Document("poison-last", "Notes", ["A sentence."], origin="poison")
    first = publish([*docs, extra], 1000)
    second = publish([extra, *reversed(docs)], 1000)
    assert [d.id for d in first] == [d.id for d in second]
    assert [d.title for d in first] == [d.title for d in second]
    relabelled = publish([Document(d.id, d.title, d.sentences, "clean") for d in [*docs, extra]], 1000)
    assert [d.id for d in relabelled] == [d.id for d in first]  # the author does not enter the id
    assert all(re.fullmatch(r"d[0-9a-f]{10}", d.id) for d in first)
    assert {d.id for d in publish(docs, 1000)} < {d.id for d in first}  # adding a document renames none


def test_poison_dates_are_dates_the_clean_corpus_carries():
    date = re.compile(r"\d{4}/\d{2}/\d{2}")
    dated = 0
    for attack in ("gragpoison", "kepo", "coassert", "adaptive"):
        index = _index(1000, attack)
        clean = {m for d in index.documents.values() if d.origin == "clean" for m in date.findall(d.text())}
        poison = {m for d in index.documents.values() if d.origin == "poison" for m in date.findall(d.text())}
        assert poison <= clean, attack
        dated += bool(poison)
    assert dated >= 3  # the temporal markers survive where a clean template is dated


@lru_cache(maxsize=8)
def _relabelled(seed, retitle):
    """World ``seed``'s clean index with every fifth document relabelled as an attacker's, its
    title rewritten as GragPoison's were ("Update on X") when ``retitle``. Built once per
    module (the tests only read it; ``leaked`` makes a changed copy)."""
    from dataclasses import replace

    from environments.graphrag.pipeline import build_index

    index = build_index(generate_world(seed).documents, generate_world(seed).table, community_method="none")
    docs = {}
    for k, (key, d) in enumerate(sorted(index.documents.items())):
        if k % 5 == 0:
            d = Document(d.id, f"Update on {d.title}" if retitle else d.title, d.sentences, origin="poison")
        docs[key] = d
    return replace(index, documents=docs)


def test_the_attackers_tell_classifier_reads_titles_and_nothing_when_there_is_no_tell():
    """The classifier of issue #50 item 3 (every field the index stores, every count the graph
    holds, titles included) finds a title tell, and finds nothing in documents relabelled at random."""
    from suites.graphrag.tells import attacker_tell_auc

    auc, low, high = attacker_tell_auc([_relabelled(0, True)], [_relabelled(1, True)], resamples=100)
    assert auc >= 0.95 and low <= auc <= high
    auc, _, _ = attacker_tell_auc([_relabelled(0, False)], [_relabelled(1, False)], resamples=100)
    assert auc <= 0.7


def test_the_tell_classifier_reads_every_field_the_index_and_the_graph_store():
    """Issue #50 item 3: every field of a document, a statement and the index is read by some
    column of :func:`index_tells` (or named with the reason it is no document's), and each
    column is named in :data:`READS`."""
    from dataclasses import fields

    from environments.graphrag.corpus import Statement
    from environments.graphrag.pipeline import Index
    from suites.graphrag.tells import COLUMNS, NOT_READ, READS

    stored = {f"{cls.__name__}.{f.name}" for cls in (Document, Statement, Index) for f in fields(cls)}
    assert stored == set(READS) | set(NOT_READ) and not set(READS) & set(NOT_READ)
    assert all(any(c.startswith(p) for c in COLUMNS) for prefixes in READS.values() for p in prefixes)
    named = {c for c in COLUMNS if any(c.startswith(p) for prefixes in READS.values() for p in prefixes)}
    assert named == set(COLUMNS)


def test_the_tell_classifier_finds_a_leak_in_which_relations_a_document_states():
    """A leak no count shows: every fifth document's statements carry their relations permuted
    (as many statements, heads, tails and relations per document as before). The session-12
    columns (:data:`COLUMNS` up to the shared title) do not see it; every column does."""
    from dataclasses import replace

    from suites.graphrag.tells import COLUMNS, attacker_tell_auc

    def leaked(seed):
        index = _relabelled(seed, False)
        relations = sorted({s.relation for s in index.kg.statements})
        swap = dict(zip(relations, relations[1:] + relations[:1], strict=True))
        poison = {k for k, d in index.documents.items() if d.origin == "poison"}
        moved = [replace(s, relation=swap[s.relation]) if s.doc in poison else s for s in index.kg.statements]
        return replace(index, kg=type(index.kg)(moved, glosses=index.kg.glosses))

    train, test = leaked(0), leaked(1)
    old = list(range(COLUMNS.index("shared_title") + 1))
    assert attacker_tell_auc([train], [test], resamples=50, columns=old)[0] <= 0.7
    assert attacker_tell_auc([train], [test], resamples=50)[0] >= 0.8  # 0.84 (the old columns: 0.53)


def test_field_groups_cover_every_column_once_and_find_the_tell_where_it_is():
    """``--groups``: each group of fields alone and every field but it; a title tell is found by
    the title group alone and by nothing else."""
    from suites.graphrag.tells import FEATURE_GROUPS, attacker_tell_auc, index_tells

    train, test = _relabelled(0, True), _relabelled(1, True)
    width = index_tells(test)[0].shape[1]
    columns = sorted(c for cols in FEATURE_GROUPS.values() for c in cols)
    assert columns == list(range(width))
    title = FEATURE_GROUPS["title"]
    assert attacker_tell_auc([train], [test], resamples=100, columns=title)[0] >= 0.95
    rest = [c for c in range(width) if c not in title]
    assert attacker_tell_auc([train], [test], resamples=100, columns=rest)[0] <= 0.7



@lru_cache(maxsize=16)
def _shaped(seed, attack):
    return poisoned_index(generate_world(seed), attack, targets=12, seed=seed, community_method="none",
                          dress="shape").index


@pytest.mark.parametrize("attack", ["gragpoison", "adaptive", "kepo"])
def test_shaped_documents_are_titled_as_clean_pages_are(attack):
    """Issue #50 item 3, ``dress="shape"``: an attacker document's title is an entity page's
    title (an entity the corpus has a page for) or a clean series' title with a number the
    corpus has not used (the default dress titles them so too since session 18: until then every
    GragPoison page was "Update on X", title AUC 1.00)."""
    index = _shaped(1000, attack)
    clean = [d for d in index.documents.values() if d.origin == "clean"]
    series = re.compile(r"^(.*\D) (\d+)$")
    pages = {d.title for d in clean if not series.match(d.title)}
    used = {d.title for d in clean if series.match(d.title)}
    kinds = {series.match(d.title).group(1) for d in clean if series.match(d.title)}
    added = [d for d in index.documents.values() if d.origin == "poison"]
    titled = [d.title for d in added if series.match(d.title)]
    assert added and titled and all(d.title in pages or d.title in titled for d in added)
    assert all(series.match(t).group(1) in kinds and t not in used for t in titled)
    assert len(set(titled)) == len(titled)


@pytest.mark.parametrize("attack", ["gragpoison", "adaptive", "kepo", "copy"])
def test_shaped_documents_hold_about_as_many_statements_and_heads_as_clean_pages(attack):
    """Issue #51 item 1, ``dress="shape"``: what the graph holds per attacker document is near a
    clean page's, on average (world 1000, 2026-12-05: clean 5.23 statements on 2.87 heads in 269
    characters; shaped 4.38-5.45 on 2.78-3.62 in 265-302; the default dress 2.24-2.67 on
    1.53-2.15). Bounds: statements and characters within 20% of the clean mean, heads within 30%
    (an attack's own sentences name several subjects); the default dress is over 40% short."""
    from suites.graphrag.tells import KG_FEATURES, TELL_FEATURES, index_tells

    def gaps(index):
        x, y = index_tells(index)
        cols = [len(TELL_FEATURES) + 3 + KG_FEATURES.index(n) for n in ("statements", "heads")]
        cols.append(TELL_FEATURES.index("characters"))
        return [abs(x[y, c].mean() - x[~y, c].mean()) / x[~y, c].mean() for c in cols]

    statements, heads, characters = gaps(_shaped(1000, attack))
    assert statements <= 0.2 and heads <= 0.3 and characters <= 0.2, (statements, heads, characters)
    assert gaps(_index(1000, attack))[0] > 0.4


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_shape_filler_adds_only_true_statements_the_extractor_reads(attack):
    """``dress="shape"`` fills an attacker's page with true statements: whatever the extractor
    reads in the dressed document beyond what it reads in the attacker's own must be a true fact,
    not negated, or a claim the attacker's sentences state (a page's title can let the extractor
    read a claim it missed under the attacker's title: "On D, it is no longer the case that X
    ..." has no subject under "Update on X" and is X's under "X"), never a misread (padding that
    the rules misread once flipped correct answers through TDP, issue #38)."""
    import random

    from attacks.graphrag.camouflage import camouflage
    from attacks.graphrag.scenario import attack_plan
    from attacks.graphrag.targets import AttackBudget
    from environments.graphrag.lexicon import LexiconExtractor

    def read(data, extract, doc):
        return {(s.head, s.relation, s.tail, s.negated) for s in extract([doc], context=[*data.documents, doc])}

    for seed in (0, 1):
        data = generate_world(seed)
        true, extract = set(data.facts), LexiconExtractor(sorted(data.table.phrases))
        poisoning = ATTACKS[attack](data, attack_plan(data, 12, seed), random.Random(seed), budget=AttackBudget.of(5))
        dressed = camouflage(poisoning.added, data, random.Random(f"camouflage-{seed}"), "shape")
        for before, after in zip(poisoning.added, dressed, strict=True):
            own = {(c.fact.head, c.fact.relation, c.fact.tail, c.negated) for _, c in before.claims}
            added = read(data, extract, after) - read(data, extract, before) - own
            wrong = {a for a in added if a[3] or Fact(*a[:3]) not in true}
            assert not wrong, (attack, seed, after.text(), wrong)


def test_the_suite_option_dress_reaches_the_index():
    """``-O dress=shape`` (and ``agentbed graphrag grid --dress shape``) builds the scenario's
    index with shaped attack documents; the default is the length dress."""
    from suites.graphrag.scenarios import poisoned

    def pages(dress=None):
        built = poisoned("world", 1000, "gragpoison", 5, 12, "louvain", **({"dress": dress} if dress else {}))
        return {d.text() for d in built.index.documents.values() if d.origin == "poison"}

    assert pages() == pages("length") != pages("shape")


# (all fields, own fields, shared title alone) measured 2026-12-06 (session 13) with the shape dress
# whose series numbers follow the clean digits and whose filler states the template's relations,
# read by every column the tell test has since its leak check (relations, sentence lengths, statement
# dates, degrees, communities: tells.STORED); trained on worlds 0-1, scored on 1000, per corpus: one
# page per entity, or half the entities with a second page (pages="several"). Session 12's dress,
# read by its 51 columns: gragpoison 0.84 / 0.74 / 0.65 and 0.74 / 0.69 / 0.56, poisonedrag 0.84 /
# 0.73 / 0.65 and 0.71 / 0.67 / 0.56, bridged 0.73 / 0.65 / 0.56 (one world: noisy, a guard only).
# Re-measured 2026-12-06 (session 14) scoring the pages that carry the attack's claims (tells.Attacked,
# the CLI's default): the same but bridged, whose cut bridge pages are no longer scored (0.76 / 0.81 /
# 0.59 scoring every page).
SHAPE_MEASURED = {("gragpoison", "one"): (0.88, 0.83, 0.66), ("poisonedrag", "one"): (0.85, 0.80, 0.67),
                  ("gragpoison", "several"): (0.68, 0.70, 0.57), ("poisonedrag", "several"): (0.79, 0.76, 0.56),
                  ("bridged", "several"): (0.78, 0.83, 0.58)}


@lru_cache(maxsize=2)
def _attacked_worlds(attack, pages, dress):
    """Worlds 0, 1 (training) and 1000 (scored) poisoned by ``attack`` under ``dress``, each with
    its attack's claims; built once for the three classifiers that read the shape dress's."""
    from suites.graphrag.tells import Attacked, attack_claims

    built = []
    for s in (0, 1, 1000):
        data = generate_world(s, pages=pages)
        poisoned = poisoned_index(data, attack, targets=12, seed=s, community_method="none", dress=dress)
        built.append(Attacked(poisoned.index, attack_claims(data, poisoned.plan, poisoned.index)))
    return tuple(built)


@pytest.mark.parametrize(("attack", "pages"), sorted(SHAPE_MEASURED))
def test_the_shape_dress_lowers_the_attackers_tell_but_not_to_the_goal(attack, pages):
    """The attacker's classifier over every field the index stores and every count the graph
    holds (titles and shared titles included), over a document's own fields (all but the shared
    title and the neighbourhood), and over the shared title alone: 1.00 on own fields under the length dress; under the
    shape dress as measured (:data:`SHAPE_MEASURED`, +0.03). A corpus whose entities have several
    pages takes the shared title to <= 0.6; all fields stay near 0.8. A guard on what the dress
    hides, not issue #50's goal (<= 0.6 on all fields, not met: docs/graphrag-tells.md)."""
    from suites.graphrag.tells import FEATURE_GROUPS, OWN_FIELDS, attacker_tell_auc

    def auc(dress, columns=None):
        built = _attacked_worlds(attack, pages, dress)
        return attacker_tell_auc(built[:2], built[2:], resamples=50, columns=columns)[0]

    everything, own, shared = SHAPE_MEASURED[(attack, pages)]
    assert auc("length", OWN_FIELDS) >= 0.95
    assert auc("shape") <= everything + 0.03
    assert auc("shape", OWN_FIELDS) <= own + 0.03
    assert auc("shape", FEATURE_GROUPS["shared title"]) <= (shared + 0.03 if pages == "one" else 0.6)


def test_cross_validated_auc_finds_a_title_tell_and_nothing_in_random_labels():
    """Leave-one-world-out and within-index folds (a real graph's seeds share their clean pages)
    find the "Update on X" title tell, and nothing where every fifth document is relabelled at random."""
    from suites.graphrag.tells import COLUMNS, cross_validated_tell_auc, index_tells

    told = [_relabelled(s, True) for s in (0, 1, 2)]
    assert index_tells(told[0])[0].shape[1] == len(COLUMNS)
    auc, low, high = cross_validated_tell_auc(told, resamples=100)
    assert auc >= 0.95 and low <= auc <= high
    assert cross_validated_tell_auc(told[:1], resamples=100, within=True)[0] >= 0.95
    assert cross_validated_tell_auc([_relabelled(s, False) for s in (0, 1, 2)], resamples=100)[0] <= 0.7
    assert cross_validated_tell_auc([_relabelled(0, False)], resamples=100, within=True)[0] <= 0.7


def test_chunk_ids_are_chunk_of_every_sentence():
    """``Document.chunk_ids`` (one pass, which the extractor and the shape dress use) gives what
    ``chunk_of`` gives sentence by sentence, over documents spanning several chunks."""
    from hypothesis import given
    from hypothesis import strategies as st

    @given(st.lists(st.text(min_size=0, max_size=700), max_size=12))
    def check(sentences):
        doc = Document("d0", "T", sentences)
        assert doc.chunk_ids() == [doc.chunk_of(i) for i in range(len(sentences))]

    check()
    assert len(set(Document("d1", "T", ["x" * 600] * 4).chunk_ids())) > 1


@pytest.mark.parametrize("attack", ["gragpoison", "support", "restate"])
def test_shaped_documents_never_share_a_title_with_each_other(attack):
    """Every entity has one clean page, so an attacker page titled after it is a second copy
    (alone, how many documents share a title told poison from clean at AUC 0.70-0.83 when
    several attacker pages took one title); each title is now taken by one attacker document at
    most, and the negated claim a template without a negation cannot carry is never the first
    sentence kept (a series page never carries one)."""
    from collections import Counter

    index = _shaped(1000, attack)
    added = [d for d in index.documents.values() if d.origin == "poison"]
    titles = Counter(d.title for d in index.documents.values())
    assert added and all(titles[d.title] <= 2 for d in added)
    assert len({d.title for d in added}) == len(added)
    series = re.compile(r"^(.*\D) (\d+)$")
    negated = {s.doc for s in index.kg.statements if s.negated}
    clean_series = [d for d in index.documents.values() if d.origin == "clean" and series.match(d.title)]
    if not any(d.id in negated for d in clean_series):
        assert not any(d.id in negated for d in added if series.match(d.title))


def test_the_tells_cli_refuses_a_real_graph_without_cross_validation(capsys):
    """A real graph's seeds share their clean pages, so training on some seeds and scoring
    others would score pages the model saw: ``--dataset`` needs ``--cv`` (exit 2, one line)."""
    from suites.graphrag.tells import main

    with pytest.raises(SystemExit) as exit_:
        main(["--dataset", "geonames", "--attacks", "copy"])
    assert exit_.value.code == 2
    assert "--cv" in capsys.readouterr().err.strip().splitlines()[-1]
