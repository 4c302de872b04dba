"""Shared fixtures. Workload-specific fixtures live in each tests/<area>/conftest.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def agentbed_cmd() -> list[str]:
    """The CLI as a subprocess command, from the same interpreter the tests run in."""
    return [sys.executable, "-m", "agentbed.cli"]


@pytest.fixture
def vault_env():
    from environments.vault.env import VaultEnv

    return VaultEnv("open-after-chores")


@pytest.fixture(autouse=True)
def _private_model_cache(tmp_path_factory, monkeypatch):
    """Each test gets its own model-call cache (the CLI's is on by default and per user): a reply
    cached by one test must never answer another's request."""
    monkeypatch.setenv("AGENTBED_CACHE_DIR", str(tmp_path_factory.mktemp("model-cache")))
