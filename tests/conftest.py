"""Shared fixtures. Workload-specific fixtures live in each tests/<area>/conftest.py."""

from __future__ import annotations

import fcntl
import json
import os
import re
import signal
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# One OpenBLAS thread per test process: `make test` runs two xdist workers on two cores, and each worker's
# second BLAS thread only spins against the other worker (test_heldout_table and test_gain_contrast: 102.6 s
# of CPU -> 88.5 s side by side; a logistic fit under load 0.55 -> 0.07 s, ci15a). The byte checks of fits
# (TDP's shipped weights, the oversight datasets' rebuilds, the demos' gates) pass with it. A user's own
# setting is kept; subprocesses inherit it.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import agentbed  # noqa: E402, F401  # first: it pins OpenBLAS's kernel before numpy loads (agentbed/blaskernel.py)

ROOT = Path(__file__).resolve().parents[1]

# Tests assert no timings, Hypothesis's included: no per-example deadline, and no health check on how
# slowly examples are generated (it fired at load 17 on a test whose strategy builds 12 texts of up to
# 700 characters). A test's own @settings overrides what it names.
settings.register_profile("agentbed", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("agentbed")

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
def local_model_installed() -> str:
    """The local model's ``--model`` string, once its runtime and weights are found here; starts
    no server (for tests that start their own). Fails under CI=true, and skips elsewhere, when
    they are missing, naming the command that installs them."""
    from agentbed.agents.local.weights import DEFAULT_MODEL, LocalModelMissing, check_runtime, resolve_weights
    from agentbed.testing import require

    try:
        check_runtime()
        resolve_weights(DEFAULT_MODEL)
    except LocalModelMissing as exc:
        require(False, "the local model", str(exc))
    return f"local:{DEFAULT_MODEL}"


@pytest.fixture(scope="session")
def local_model(local_model_installed: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalModel]:
    """The local model for a whole test session (started once, about 3 s; stopped at the end);
    fails or skips as :func:`local_model_installed` does. Every file taking it is marked
    ``one_worker("local-model")``, so that under xdist one worker starts it, once."""
    from agentbed.agents.local.server import serving

    model = local_model_installed
    run_dir = tmp_path_factory.mktemp("local-model")
    with serving([model], run_dir, exit_on_sigterm=False) as urls:
        yield LocalModel(model, urls[model], run_dir / "local-model-server.log")


# `make test` runs `pytest -n 3 --dist loadfile` (docs/benchmarks.md): each test file goes whole to one
# of two workers (the third runs only WAITING_UNITS), so the run lasts as long as the busier worker. Files are handed out longest first
# (the LPT rule: R. L. Graham, "Bounds on Multiprocessing Timing Anomalies", SIAM J. Appl. Math.
# 1969), by each file's seconds in FILE_COSTS, a past run's own measurement; a file it does not
# know costs UNKNOWN_COST, or SLOW_COST if it holds a test that starts a real component or takes
# long. `pytest --record-file-costs tests/file_costs.json` rewrites the table from the run it ends.
FILE_COSTS = Path(__file__).with_name("file_costs.json")
SLOW_MARKERS = ("local_model", "alfworld", "java", "chromium", "docker", "slow")
SLOW_COST, UNKNOWN_COST = 60.0, 1.0


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--record-file-costs", metavar="PATH", default=None,
                     help="write each test file's seconds (setup, call and teardown summed) to PATH as JSON")


def pytest_configure(config: pytest.Config) -> None:
    # xdist sorts a loadfile run's files by their number of tests unless told not to, which would
    # undo the order pytest_collection_modifyitems gives (it did: 90038a1-c31f433 ran the local
    # model's files last).
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False
    if hasattr(config, "workerinput"):
        # an xdist worker: the other worker keeps the other core busy, so a local model server
        # (this process's, or a CLI run's it starts) decodes on one thread unless told otherwise.
        # Left to count free cores from the 1-minute load average, a server started as the run
        # begins (the demo slice is scheduled first) reads the set-up's load and takes both cores;
        # llama.cpp's threads then wait for each other at every layer (agentbed.agents.local.server).
        os.environ.setdefault("AGENTBED_LOCAL_THREADS", "1")
    if config.getoption("--record-file-costs") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_CostRecorder(Path(config.getoption("--record-file-costs"))))
    distributed = config.getoption("dist", "no") != "no" and not config.getoption("collectonly")
    if distributed and len(config.getoption("tx", None) or ()) >= 2 and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_FirstCollectsAlone())


# Every xdist worker collects (imports) every test file. On a fresh clone no bytecode exists yet, and
# workers starting together would each compile the modules and assertion-rewrite the test files, all
# at once. gw0 collects first; the others wait, then read the __pycache__ it wrote.
_COLLECT_AFTER = "agentbed_collect_after"


class _FirstCollectsAlone:
    """The controller's side: a lock held until gw0 has collected (or gone down)."""

    def __init__(self) -> None:
        fd, self.path = tempfile.mkstemp(prefix="agentbed-collect-", suffix=".lock")
        self.lock: Any = os.fdopen(fd, "w")
        fcntl.flock(self.lock, fcntl.LOCK_EX)

    def pytest_configure_node(self, node: Any) -> None:
        if node.gateway.id != "gw0":
            node.workerinput[_COLLECT_AFTER] = self.path

    def pytest_xdist_node_collection_finished(self, node: Any) -> None:
        if node.gateway.id == "gw0":
            self.release()

    def pytest_testnodedown(self, node: Any) -> None:
        if node.gateway.id == "gw0":
            self.release()

    def pytest_unconfigure(self) -> None:
        self.release()

    def release(self) -> None:
        if not self.lock.closed:
            self.lock.close()
            os.unlink(self.path)


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    """A worker other than gw0 waits for gw0's collection (:class:`_FirstCollectsAlone`)."""
    path = getattr(session.config, "workerinput", {}).get(_COLLECT_AFTER)
    if path is None:
        return
    try:
        with open(path) as lock:
            fcntl.flock(lock, fcntl.LOCK_SH)
    except FileNotFoundError:  # released already
        pass


def file_costs() -> dict[str, float]:
    """FILE_COSTS: seconds by path relative to the repository root."""
    return json.loads(FILE_COSTS.read_text()) if FILE_COSTS.is_file() else {}


def _relative(path: Path) -> str:
    resolved = path.resolve()
    return resolved.relative_to(ROOT).as_posix() if resolved.is_relative_to(ROOT) else resolved.as_posix()


def _marked_group(path: Path, mark: re.Pattern[str]) -> str | None:
    """The NAME of a ``pytest.mark.<mark>(NAME)`` anywhere in a test file, read from its source
    (xdist's controller, which schedules the files, collects none)."""
    try:
        found = mark.search(path.read_text(encoding="utf-8")) if path.suffix == ".py" else None
    except OSError:  # not a file (a node id xdist made up): no group
        return None
    return found.group(1) if found else None


@cache
def exclusive_group(path: Path) -> str | None:
    """The NAME of a ``pytest.mark.exclusive(NAME)`` in a test file: files that hold one lock."""
    return _marked_group(path, _EXCLUSIVE)


_EXCLUSIVE = re.compile(r"""pytest\.mark\.exclusive\(["']([^"']+)["']\)""")


@cache
def one_worker_group(path: Path) -> str | None:
    """The NAME of a ``pytest.mark.one_worker(NAME)`` in a test file, read from its source: files
    that share a costly session fixture (spaCy's reading of every foreign-prose set, about 50 s),
    which each worker would otherwise build for itself."""
    return _marked_group(path, _ONE_WORKER)


_ONE_WORKER = re.compile(r"""pytest\.mark\.one_worker\(["']([^"']+)["']\)""")


def work_unit(path: Path) -> str:
    """What xdist hands to one worker: the file, or every file of its exclusive group together,
    so that they run one after another on one worker instead of one worker waiting on the lock;
    likewise every file of a ``one_worker`` group, so that their session fixture is built once."""
    group = exclusive_group(path)
    if group:
        return f"exclusive:{group}"
    shared = one_worker_group(path)
    return f"one_worker:{shared}" if shared else _relative(path)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    known = file_costs()
    slow = {item.path for item in items if any(item.get_closest_marker(m) for m in SLOW_MARKERS)}
    unit = {path: work_unit(path) for path in {item.path for item in items}}
    cost: dict[str, float] = {}
    for path, name in unit.items():
        cost[name] = cost.get(name, 0.0) + known.get(_relative(path), SLOW_COST if path in slow else UNKNOWN_COST)
    # longest unit first; stable, so a file's tests keep their order (a group's files: collection order)
    items.sort(key=lambda item: (-cost[unit[item.path]], unit[item.path]))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` with an exclusive or one-worker group's files as one unit (:func:`work_unit`)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class GroupedFileScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            unit = work_unit(ROOT / path)
            return path if unit == _relative(ROOT / path) else unit

        def _assign_work_unit(self, node: Any) -> None:
            """The first queued unit this node may take (:func:`lane_takes`), if any: a node left
            with none idles until xdist shuts every node down at the end of the run."""
            lane = waiting_lane([n.gateway.id for n in self.nodes])
            for scope in self.workqueue:
                if lane_takes(node.gateway.id == lane, scope, lane is not None):
                    self.workqueue.move_to_end(scope, last=False)
                    super()._assign_work_unit(node)
                    return

    return GroupedFileScheduling(config, log)


# Units that mostly wait: Ray's cluster tests start nodes in Docker containers and new worker
# processes per job (test_ray_cluster: 60 s of CPU in 314-677 s of wall, session 24), and files that
# wait on timeouts, retries' back-off or a server (the machine's busy CPU over wall, each file alone on a
# quiet machine, session 24: chaos chain 0.36, repair targets 0.31, pytest outputs 0.35, the viewer's
# hardening 0.14, approval 0.33, API 0.41). With three workers (`-n 3`), the last one runs only these
# and the other two never do, so their waiting overlaps the two CPU-bound workers' files without a
# third CPU-bound worker: three such workers on two cores made the pinned repositories' own 15-50 ms
# wall-clock tests fail (docs/benchmarks.md).
WAITING_UNITS = frozenset({
    "exclusive:ray", "tests/agents/test_chaos_chain.py", "tests/cocoder/test_repair_targets.py",
    "tests/cocoder/test_pytest_outputs.py", "tests/view/test_view_hardening.py", "tests/view/test_view_approval.py",
    "tests/view/test_view_api.py"})


def waiting_lane(worker_ids: list[str]) -> str | None:
    """The worker that runs only WAITING_UNITS: the last of three or more (gw0, gw1, gw2...), none
    with fewer (a crashed lane's work then goes back to the others)."""
    return sorted(worker_ids, key=lambda w: (len(w), w))[-1] if len(worker_ids) >= 3 else None


def lane_takes(is_lane: bool, unit: str, lane_exists: bool) -> bool:
    """Whether a worker may take UNIT: the lane only the waiting units; the others every unit but
    those while a lane exists."""
    waits = unit in WAITING_UNITS
    return waits if is_lane else not (waits and lane_exists)


class _CostRecorder:
    """Sums each file's test seconds as the reports arrive (under xdist, in the controller)."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.seconds: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        path = report.nodeid.split("::", 1)[0]
        self.seconds[path] = self.seconds.get(path, 0.0) + report.duration

    def pytest_sessionfinish(self) -> None:
        merged = {**file_costs(), **{path: round(s, 1) for path, s in self.seconds.items()}}
        self.out.write_text(json.dumps(dict(sorted(merged.items())), indent=0) + "\n")


@pytest.fixture(autouse=True, scope="module")
def _exclusive_across_workers(request: pytest.FixtureRequest) -> Iterator[None]:
    """A module marked ``pytest.mark.exclusive(NAME)`` runs alone among the modules that share
    NAME, whichever worker holds it: Ray's tests each start a Ray instance, and a second one on
    the machine would be found by the first's ``ray.init``. A lock file, held for the module."""
    with _exclusive(request.node.get_closest_marker("exclusive")):
        yield


@pytest.fixture(autouse=True)
def _exclusive_test_across_workers(request: pytest.FixtureRequest) -> Iterator[None]:
    """The same for a single test marked ``exclusive(NAME)`` in an unmarked module (the module
    fixture above sees only the module's own marks), held for the test."""
    own = next((m for m in request.node.own_markers if m.name == "exclusive"), None)
    module = request.node.getparent(pytest.Module)
    held = module is not None and module.get_closest_marker("exclusive") is not None
    with _exclusive(None if held else own):
        yield


@contextmanager
def _exclusive(marker: pytest.Mark | None) -> Iterator[None]:
    if marker is None:
        yield
        return
    path = Path(tempfile.gettempdir()) / f"agentbed-tests-{marker.args[0]}.lock"
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
