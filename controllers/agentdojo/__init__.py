"""AgentDojo's defenses as overseers of what an agent reads and may call (controllers/agentdojo/defenses.py)."""
