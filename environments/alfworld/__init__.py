"""ALFWorld (generated games on the real TextWorld/PDDL engine) for the prefix-branching oversight workload."""

import gymnasium

gymnasium.register(id="agentbed/alfworld-v0", entry_point="environments.alfworld.env:AlfworldEnv")
