"""The agentdojo workload: AgentDojo's benchmark through agentbed's engine (docs/agentdojo.md)."""
