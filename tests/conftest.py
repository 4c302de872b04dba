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
