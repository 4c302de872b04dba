"""AI control evaluations: settings with side tasks under micro-protocols, `agentbed control`, the report."""
