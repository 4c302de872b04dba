"""An attacker who knows the index's extractor writes what it reads (attacks/graphrag/readable.py)."""

from attacks.graphrag.readable import reworded
from environments.graphrag.corpus import Document, Fact, Line, Statement
from environments.graphrag.world import generate_world

WORLD = generate_world(5)


def _reader(readable: set[str]):
    """A stand-in extractor that reads a sentence's claims only when its text is in ``readable``."""
    calls = []

    def extract(documents, context=None):
        calls.append(len(documents))
        return [Statement(c.fact.head, c.fact.relation, c.fact.tail, d.id, d.chunk_of(i), c.negated, c.dated)
                for d in documents for i, s in enumerate(d.sentences) if s in readable for c in s.claims]
    return extract, calls


def _fact() -> Fact:
    return next(f for f in WORLD.facts if f.relation == "born_in")


def test_a_sentence_the_extractor_misses_is_reworded_in_a_form_it_reads():
    fact = _fact()
    written = WORLD.table.sentence(fact, variant=0)
    forms = [WORLD.table.sentence(fact, variant=v) for v in range(1, 8)]
    other = next(f for f in forms if f != written)
    kept = Line("Visitors often confuse the two.")
    doc = Document("p1", "Update", [kept, written], origin="poison")
    extract, _ = _reader({other})
    out = reworded(doc, WORLD, extract)
    assert out.sentences[0] == kept and out.sentences[1] == other
    assert out.sentences[1].claims == written.claims  # the same claim, negation and date
    assert (out.id, out.title, out.origin) == (doc.id, doc.title, doc.origin)


def test_a_page_read_as_written_is_unchanged_and_read_once():
    fact = _fact()
    written = WORLD.table.sentence(fact, variant=2)
    doc = Document("p1", "Update", [written], origin="poison")
    extract, calls = _reader({written})
    assert reworded(doc, WORLD, extract).sentences == doc.sentences and calls == [1]


def test_a_claim_no_form_of_which_is_read_stays_as_written_and_lists_are_left_alone():
    a, b = [f for f in WORLD.facts if f.relation == "born_in"][:2]
    alone = WORLD.table.sentence(a, variant=0)
    listing = Line(f"{alone[:-1]}, and so on.", [*alone.claims, *WORLD.table.sentence(b).claims])
    doc = Document("p1", "Update", [alone, listing], origin="poison")
    extract, calls = _reader(set())
    assert reworded(doc, WORLD, extract).sentences == [alone, listing]
    assert len(calls) <= 1 + 8  # the page, then at most one reading per form of the one-claim sentence


def test_an_attacker_who_knows_the_rules_gets_more_of_its_claims_read_by_them():
    """World 1000, the rule extractor: re-wording raises the share of the attack's claims the index
    reads (0.81 -> 0.91 for gragpoison when written) and loses no fake claim."""
    from suites.graphrag.extractorgrid import attack_read

    options = {"dataset": "world", "budget": 5, "communities": "none", "dress": "length", "pages": "one"}
    writer = attack_read("world", 1000, "gragpoison", "rules", {**options, "wording": "writer"})
    read = attack_read("world", 1000, "gragpoison", "rules", {**options, "wording": "read"})
    assert read[0] > writer[0] and read[1] >= writer[1] == 1.0
