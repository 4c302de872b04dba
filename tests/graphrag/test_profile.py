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
