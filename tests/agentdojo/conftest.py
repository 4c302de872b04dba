import importlib.util

import pytest

from agentbed.testing import require


@pytest.fixture(autouse=True)
def _needs_agentdojo():
    require(importlib.util.find_spec("agentdojo") is not None, "the agentdojo package (AgentDojo's benchmark)",
            "pip install -e '.[agentdojo]' -c requirements/constraints.txt (scripts/setup does this)")
