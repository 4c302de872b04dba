"""CoCoder: graph-partitioned multi-agent coding on real repositories (paper 4)."""

import gymnasium

gymnasium.register(id="agentbed/cocoder-v0", entry_point="environments.cocoder.env:CoCoderEnv")
