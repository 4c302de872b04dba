import importlib.util

from agentbed.testing import require
from environments.graphrag.corpus import gold_statements
from environments.graphrag.kg import KnowledgeGraph, communities, local_search, search_entities
from environments.graphrag.pipeline import build_index


def test_graph_keeps_provenance(world):
    index = build_index(world.documents, world.table)
    kg = index.kg
    assert kg.graph.number_of_edges() == len(kg.statements)
    for (u, v, key, data) in list(kg.graph.edges(keys=True, data=True))[:50]:
        s = kg.statements[key]
        assert (s.head, s.tail, s.relation, s.doc, s.chunk) == (u, v, data["relation"], data["doc"], data["chunk"])
        assert s.chunk.startswith(s.doc + "#")


def test_louvain_communities_and_summaries(world):
    index = build_index(world.documents, world.table)
    assert set(index.membership) == set(index.kg.entities())
    assert 1 < len(set(index.membership.values())) < len(index.membership)
    assert all(text.startswith(f"Community {cid}") for cid, text in index.summaries.items())


def test_hierarchical_leiden_via_graspologic_native(world):
    require(importlib.util.find_spec("graspologic_native") is not None, "graspologic-native",
            "pip install -e .[leiden]")
    kg = KnowledgeGraph(build_index(world.documents, world.table, community_method="none").kg.statements)
    membership = communities(kg, "leiden", seed=1)
    assert set(membership) == set(kg.entities())
    sizes = {}
    for cid in membership.values():
        sizes[cid] = sizes.get(cid, 0) + 1
    assert max(sizes.values()) <= 10  # max_cluster_size, as Microsoft GraphRAG sets it


def test_local_search_covers_every_gold_path(world):
    """On the graph of the gold claims, local search covers every question's path; on the
    extracted graph, only where extraction found each step (most questions)."""
    gold = KnowledgeGraph(gold_statements(world.documents))
    extracted = build_index(world.documents, world.table, community_method="none").kg
    covered = 0
    for q in world.questions:
        assert set(q.path) <= {gold.statements[i].fact() for i in local_search(gold, q.topic, q.plan)}
        covered += set(q.path) <= {extracted.statements[i].fact() for i in local_search(extracted, q.topic, q.plan)}
        assert q.topic in search_entities(extracted, q.text, k=3)
    assert covered >= 0.7 * len(world.questions)


def test_extraction_reads_any_script_names_with_commas_and_every_schema_relation():
    from environments.graphrag.corpus import Document
    from environments.graphrag.lexicon import LexiconExtractor

    pages = [Document("a", "Zürich", ["Zürich is located in Schweiz."]),
             Document("b", "Paris, Texas", ["Paris, Texas is located in Lamar County."]),
             Document("c", "Heart valve", ["Heart valve is part of Heart."]),
             Document("d", "Heart", ["Heart is part of Body."])]
    got = {(s.head, s.relation, s.tail) for s in LexiconExtractor(["located_in", "part_of"])(pages)}
    assert ("Zürich", "located_in", "Schweiz") in got
    assert ("Paris, Texas", "located_in", "Lamar County") in got
    assert ("Heart valve", "part_of", "Heart") in got and not any(t[0] == "Heart valve" and t[1] == "located_in"
                                                                  for t in got)
