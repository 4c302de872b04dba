import importlib.util

import pytest

from agentbed.testing import require
from environments.scienceworld.env import java_available


@pytest.fixture(autouse=True)
def _needs_scienceworld():
    require(importlib.util.find_spec("scienceworld") is not None, "the scienceworld package",
            "pip install -e '.[scienceworld]'")
    require(java_available(), "Java (for ScienceWorld's simulator)", "apt-get install -y openjdk-17-jre-headless")
