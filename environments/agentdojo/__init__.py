"""AgentDojo (Debenedetti et al., NeurIPS 2024 Datasets and Benchmarks) as an agentbed world: its
task suites, tools and graders from the installed ``agentdojo`` package, on the virtual clock."""

import gymnasium

gymnasium.register(id="agentbed/agentdojo-v0", entry_point="environments.agentdojo.env:AgentDojoEnv")
