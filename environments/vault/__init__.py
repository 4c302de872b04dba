"""A small built-in environment that exercises the whole engine: fetch a token, use it in time."""

import gymnasium

gymnasium.register(id="agentbed/vault-v0", entry_point="environments.vault.env:VaultEnv")
