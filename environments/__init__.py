"""The worlds agents act in; each a gymnasium environment on agentbed's ToolEnv."""
