import pytest

from agentbed.testing import require
from environments.cocoder.synth import SynthSpec, generate_repo


@pytest.fixture
def sandbox():
    from environments.cocoder.sandboxed import sandbox_ready

    missing = sandbox_ready()
    require(missing is None, "a sandbox backend", f"{missing} (or build the Docker sandbox image)")


@pytest.fixture
def synth_repo(tmp_path):
    return generate_repo(SynthSpec(modules=20, hubs=2, cycles=2, seed=5), tmp_path)
