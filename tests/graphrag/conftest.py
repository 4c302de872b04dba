"""Fixtures for the graphrag tests: a small generated world and its poisoned indexes."""

from __future__ import annotations

import pytest

from environments.graphrag.real import FETCH_COMMAND, available
from environments.graphrag.world import generate_world


@pytest.fixture(scope="session")
def world():
    return generate_world(1000)


@pytest.fixture
def nations_available():
    from agentbed.testing import require

    require(available("nations"), "the pykeen Nations/Kinships/UMLS files", f"run {FETCH_COMMAND}")
