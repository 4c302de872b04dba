"""AgentDojo's prompt-injection attacks, taken from its own registry (``agentdojo.attacks``)."""
