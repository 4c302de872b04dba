from environments.graphrag.corpus import Document, Fact, PhraseTable, pages_from_facts, template_extract
from environments.graphrag.dataset import follow
from environments.graphrag.world import PHRASES, generate_world


def test_templates_round_trip_with_marker_and_negation():
    table = PhraseTable(dict(PHRASES))
    fact = Fact("Kalo Venmar", "born_in", "Tisro")
    sentences = [table.sentence(fact), table.sentence(fact, dated="2025/06/01"),
                 table.sentence(fact, negated=True), table.sentence(fact, dated="2025/06/01", negated=True),
                 "The change followed a restructuring.", "In which city was Kalo Venmar born?"]
    out = template_extract([Document("d1", "t", sentences)], table)
    assert [(s.fact(), s.dated, s.negated) for s in out] == [
        (fact, "", False), (fact, "2025/06/01", False), (fact, "", True), (fact, "2025/06/01", True)]
    assert {s.chunk for s in out} == {"d1#c0"}


def test_pages_attest_every_fact_twice():
    table = PhraseTable(dict(PHRASES))
    facts = [Fact("A Person", "born_in", "Mirlo"), Fact("Mirlo", "located_in", "Quatish")]
    statements = template_extract(pages_from_facts(facts, table), table)
    for fact in facts:
        assert len({s.doc for s in statements if s.fact() == fact}) == 2


def test_world_is_deterministic_and_questions_have_unique_gold_answers():
    a, b = generate_world(7), generate_world(7)
    assert a.facts == b.facts and [q.text for q in a.questions] == [q.text for q in b.questions]
    assert [d.sentences for d in a.documents] == [d.sentences for d in b.documents]
    assert generate_world(8).facts != a.facts
    hops = {len(q.plan) for q in a.questions}
    assert hops == {1, 2, 3}
    for q in a.questions:
        assert follow(a.index, q.topic, q.plan) == q.path
        assert q.answer != q.topic


def test_world_entities_are_invented():
    world = generate_world(3)
    names = {f.head for f in world.facts} | {f.tail for f in world.facts}
    assert not names & {"Paris", "London", "Google", "China", "Shanghai"}
    phrases = set(PHRASES.values())
    assert not any(p in n for n in names for p in phrases)
