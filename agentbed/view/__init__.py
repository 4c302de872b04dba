"""``agentbed view``: a local web app that reads run directories as they grow (read-only)."""
