"""A small environment with a shell tool: commands run in the episode's sandbox, never on the host."""

import gymnasium

gymnasium.register(id="agentbed/shell-v0", entry_point="environments.shell.env:ShellEnv")
