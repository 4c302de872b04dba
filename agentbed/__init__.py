"""agentbed: one episode runner for testing the safety and oversight of tool-using agents."""

__version__ = "0.1.0"
