"""ALFWorld tests need the ``alfworld`` extra (it compiles fast-downward and jericho)."""

from __future__ import annotations

import importlib.util

import pytest

from agentbed.testing import require

HOW = "PATH=$PWD/.venv/bin:$PATH .venv/bin/pip install -e '.[alfworld]' (compiles for about 2 minutes)"


@pytest.fixture(autouse=True)
def _needs_alfworld() -> None:
    require(importlib.util.find_spec("alfworld") is not None and importlib.util.find_spec("fast_downward") is not None,
            "the alfworld package", HOW)
