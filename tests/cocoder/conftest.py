import pytest

from agentbed.testing import require
from controllers.cocoder.synth import SynthSpec, generate_repo


@pytest.fixture
def sandbox():
    from environments.cocoder.sandboxed import sandbox_ready

    missing = sandbox_ready()
    require(missing is None, "a sandbox backend", f"{missing} (or build the Docker sandbox image)")


@pytest.fixture
def synth_repo(tmp_path):
    return generate_repo(SynthSpec(modules=20, hubs=2, cycles=2, seed=5), tmp_path)


def write_package(root, files):
    """Write {relative path: source} under ``root`` and return the package folder."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / next(iter(files)).split("/")[0]
