"""ScienceWorld over the real simulator (needs Java): a second interactive oversight benchmark."""

import gymnasium

gymnasium.register(id="agentbed/scienceworld-v0", entry_point="environments.scienceworld.env:ScienceWorldToolEnv")
