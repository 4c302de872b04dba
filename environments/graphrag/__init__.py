"""GraphRAG poisoning: a GraphRAG pipeline over generated worlds and real graphs, as a QA environment."""

import gymnasium

gymnasium.register(id="agentbed/graphrag-v0", entry_point="environments.graphrag.env:GraphRAGEnv")
