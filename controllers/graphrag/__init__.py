"""Retrieval defenses for GraphRAG: baselines and TDP (topology-based defense against poisoning).

The named registry that trains TDP on attacks lives in the composition layer (suites/graphrag/defenses.py)."""
