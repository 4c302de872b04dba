"""The profile a shape-dressed page copies from its clean template is what the tell classifier reads."""

from attacks.graphrag.profile import FIELDS, Profile, spread
from environments.graphrag.pipeline import build_index
from environments.graphrag.world import generate_world
from suites.graphrag.tells import COLUMNS, index_tells

# a profile field -> the tell classifier's column that reads it
_COLUMN = {"on_title": "statements_on_title", "statements": "statements", "heads": "heads", "tails": "tails",
           "relations": "relations", "negated": "negated", "dated": "dated",
           "chunks_with_statements": "chunks_with_statements", "sentences": "sentences",
           "characters": "characters", "chunks": "chunks", "longest_sentence": "sentence_longest_characters"}


def test_a_documents_profile_is_the_tell_classifiers_reading_of_it():
    """Every field of :class:`Profile` equals the column of ``index_tells`` that reads it, on
    every document of a built index (world 1000, several pages per entity)."""
    data = generate_world(1000, pages="several")
    index = build_index(data.documents, data.table, community_method="none")
    x, _ = index_tells(index)
    assert set(_COLUMN) == set(FIELDS)
    cols = [COLUMNS.index(_COLUMN[f]) for f in FIELDS]
    for row, doc in zip(x, index.documents.values(), strict=True):
        statements = [index.kg.statements[i] for i in index.kg.by_doc.get(doc.id, [])]
        assert Profile.of(doc, statements).values == tuple(row[cols]), doc.title


def test_the_gap_weighs_each_field_by_its_spread_in_the_clean_corpus():
    one, two = Profile((1.0,) * len(FIELDS)), Profile((3.0,) + (1.0,) * (len(FIELDS) - 1))
    scale = spread([one, two])
    assert scale[0] == 1.0 and scale[1:] == (0.1,) * (len(FIELDS) - 1)  # a field nobody varies in: 0.1
    assert one.gap(two, scale) == 2.0 and one.gap(one, scale) == 0.0


def test_the_clean_reading_is_measured_once_per_dataset_and_changes_no_page():
    """The shape dress reads the clean corpus once per dataset (:func:`clean_reading`; the
    ``bridged`` planner dresses thousands of variants), and a page dressed from the kept reading is
    the page dressed from a fresh one."""
    import random

    from attacks.graphrag import ATTACKS, profile
    from attacks.graphrag.camouflage import camouflage
    from attacks.graphrag.scenario import attack_plan
    from attacks.graphrag.targets import AttackBudget

    data = generate_world(2)
    added = ATTACKS["gragpoison"](data, attack_plan(data, 4, 2), random.Random(2), budget=AttackBudget.of(5)).added

    def dressed() -> list[tuple[str, list[str]]]:
        return [(d.title, list(d.sentences)) for d in camouflage(added, data, random.Random("dress"), "shape")]

    profile._READINGS.clear()
    fresh = dressed()
    assert profile.clean_reading(data) is profile.clean_reading(data)
    assert dressed() == fresh
