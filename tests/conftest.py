"""Shared fixtures. Workload-specific fixtures live in each tests/<area>/conftest.py."""

from __future__ import annotations

import fcntl
import signal
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]

# A shell starts a background job (`cmd &` without job control) with SIGINT ignored, and an
# ignored signal stays ignored across exec: the Ctrl-C tests' subprocesses would never see it.
# A handler here is reset to the default in every child, which then installs its own.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


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


@dataclass
class LocalModel:
    """A running local model (llama.cpp serving Gemma 3 270M on loopback), shared by a session.

    ``model`` is the ``--model`` string; ``agent(seed, **profile)`` builds a compact-profile
    chat agent against it. Anything built from ``local:gemma-3-270m`` in the session reaches it
    too (a suite's ``make_agent`` for ``model:local:gemma-3-270m``, ``ChatAgent`` subclasses'
    ``from_model_string``): ``serving`` exports its address in ``AGENTBED_LOCAL_SERVERS``."""

    model: str
    base_url: str
    log: Path

    def agent(self, seed: int = 0, *, model_kwargs: dict[str, Any] | None = None, **profile: Any) -> Any:
        """A chat agent with the compact profile (``profile`` changes its knobs, ``model_kwargs``
        go to ``ChatOpenAI``, e.g. ``http_client``)."""
        from agentbed.agents.chat import ChatAgent
        from agentbed.agents.local.profile import LocalProfile

        return ChatAgent.from_model_string(self.model, seed=seed, base_url=self.base_url,
                                           profile=LocalProfile(**profile), **(model_kwargs or {}))


@pytest.fixture(scope="session")
def local_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalModel]:
    """The local model for a whole test session (started once, about 3 s; stopped at the end).
    Fails under CI=true, and skips elsewhere, when the runtime or the weights are missing,
    naming the command that installs them."""
    from agentbed.agents.local.server import serving
    from agentbed.agents.local.weights import DEFAULT_MODEL, LocalModelMissing, check_runtime, resolve_weights
    from agentbed.testing import require

    try:
        check_runtime()
        resolve_weights(DEFAULT_MODEL)
    except LocalModelMissing as exc:
        require(False, "the local model", str(exc))
    model = f"local:{DEFAULT_MODEL}"
    run_dir = tmp_path_factory.mktemp("local-model")
    with serving([model], run_dir, exit_on_sigterm=False) as urls:
        yield LocalModel(model, urls[model], run_dir / "local-model-server.log")


# Markers of tests that start a real component or take long. Under pytest-xdist (`make test` runs
# `pytest -n 2 --dist loadfile`: see docs/benchmarks.md) files holding such tests are handed out
# first, so that no worker is left with one of them while the other has finished.
SLOW_MARKERS = ("local_model", "alfworld", "java", "chromium", "docker", "slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    slow_files = {item.path for item in items if any(item.get_closest_marker(m) for m in SLOW_MARKERS)}
    items.sort(key=lambda item: item.path not in slow_files)  # stable: file and test order kept within each class


@pytest.fixture(autouse=True, scope="module")
def _exclusive_across_workers(request: pytest.FixtureRequest) -> Iterator[None]:
    """A module marked ``pytest.mark.exclusive(NAME)`` runs alone among the modules that share
    NAME, whichever worker holds it: Ray's tests each start a Ray instance, and a second one on
    the machine would be found by the first's ``ray.init``. A lock file, held for the module."""
    marker = request.node.get_closest_marker("exclusive")
    if marker is None:
        yield
        return
    path = Path(tempfile.gettempdir()) / f"agentbed-tests-{marker.args[0]}.lock"
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
