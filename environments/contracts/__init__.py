"""Observation contracts (ContractBench, paper 1): artifacts whose later use is constrained in time
(validity) and in bytes (integrity), issued and verified by real algorithms on the virtual clock."""

import gymnasium

gymnasium.register(id="agentbed/contracts-v0", entry_point="environments.contracts.env:ContractEnv")
