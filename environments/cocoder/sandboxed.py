"""Running code in a sandbox: the reference's tests, a team's final code, probes at import.

Every call goes through :func:`sandbox_exec`, the one place that opens a sandbox
(:mod:`agentbed.sandbox`: Docker where an engine and the image are there, else the local
bubblewrap backend). Code an agent wrote runs only through it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from agentbed.sandbox import Limits, SandboxUnavailable, open_sandbox
from environments.cocoder.outcomes import (
    DOCTEST,
    FRAME,
    OUTCOMES_FILE,
    PLUGIN,
    PLUGIN_DIR,
    PLUGIN_NAME,
    SYNTAX,
    Outcomes,
    read_outcomes,
    strip_ansi,
)

DEFAULT_TIMEOUT = 120.0
DEFAULT_MEMORY_MB = 2048
TREE_IN_SANDBOX = "/sandbox/work/"  # where sandbox_exec puts the tree (every backend's workdir is /sandbox)
HELPER_PREFIX = "_cocoder_"  # folders this workload adds to a tree (probes, test dependencies)
SANDBOX_ATTEMPTS = 3  # an infrastructure failure (a container that vanished) is retried, a test failure never
SITE_DIR = "_cocoder_site"  # a tree's test dependencies, unpacked wheels (environments.cocoder.userrepo)
# the tree first on sys.path, its test dependencies after it (the sandbox has no network to install them);
# PYTHONPATH too, so a test that runs ``python -m pkg`` in a subprocess finds the same (yamllint's do)
_RUN_IN_DIR = ("import os, sys; os.chdir(sys.argv[1]); sys.path.insert(0, os.getcwd()); "
               f"sys.path.insert(1, os.path.join(os.getcwd(), {SITE_DIR!r})); "
               "os.environ['PYTHONPATH'] = os.pathsep.join(sys.path[:2] + [os.environ.get('PYTHONPATH', '')]).rstrip(os.pathsep); "
               f"sys.path.append(os.path.join(os.path.dirname(os.getcwd()), {PLUGIN_DIR!r})); "
               "sys.argv = sys.argv[2:]; import runpy; runpy.run_module(sys.argv[0], run_name='__main__')")


@dataclass(frozen=True)
class ExecOutcome:
    exit_code: int | None
    stdout: str
    stderr: str
    status: str  # ok | nonzero | timeout | oom | error
    backend: str
    records: str = ""  # what the outcomes plugin wrote (environments.cocoder.outcomes), read even after a timeout


def sandbox_exec(tree: Path, module_argv: list[str], *, timeout: float = DEFAULT_TIMEOUT,
                 memory_mb: int = DEFAULT_MEMORY_MB, backend: str = "auto") -> ExecOutcome:
    """Copy ``tree`` into a fresh sandbox (agentbed.sandbox) and run ``python -m <module_argv>`` there."""
    limits = Limits(memory_bytes=memory_mb * 1024 * 1024, cpu_seconds=int(timeout) + 5,
                    disk_bytes=1024 * 1024 * 1024, processes=256)
    for attempt in range(1, SANDBOX_ATTEMPTS + 1):
        try:
            with open_sandbox(backend=backend, limits=limits) as sb:
                sb.copy_in(tree, "work")
                pytest = module_argv[0] == "pytest"
                if pytest:
                    sb.write_file(f"{PLUGIN_DIR}/{PLUGIN_NAME}.py", PLUGIN)
                r = sb.exec([sb.python, "-c", _RUN_IN_DIR, "work", *module_argv], timeout=timeout)
                return ExecOutcome(r.exit_code, r.stdout.decode("utf-8", "replace"),
                                   r.stderr.decode("utf-8", "replace"), r.status, sb.backend,
                                   _records(sb) if pytest else "")
        except SandboxUnavailable:
            raise
        except Exception as exc:  # noqa: BLE001 - the sandbox itself failed (a container gone), not the code
            if attempt == SANDBOX_ATTEMPTS:
                raise RuntimeError(f"sandbox failed {attempt} times running {module_argv[0]}: {exc}") from exc
    raise AssertionError("unreachable")


def _records(sb) -> str:  # noqa: ANN001 - an open agentbed.sandbox.Sandbox
    """The outcomes plugin's file ("" when pytest never configured it: a usage error, a conftest that broke)."""
    try:
        return sb.read_file(OUTCOMES_FILE).decode("utf-8", "replace")
    except FileNotFoundError:
        return ""


def current_backend() -> str:
    """The backend ``auto`` picks here (test counts can differ between them: a test may skip)."""
    from agentbed.sandbox import docker_ready

    return "docker" if docker_ready() is None else "local"


def sandbox_ready() -> str | None:
    """None when a sandbox backend can run here, else what is missing."""
    from agentbed.sandbox import docker_ready, local_ready

    return local_ready() if docker_ready() is not None else None


@dataclass(frozen=True)
class TestReport:
    passed: int
    failed: int
    errors: int
    skipped: int
    status: str
    backend: str
    tail: str = ""
    crash_files: tuple[str, ...] = ()  # where failing tests crashed: the leader's repair targets
    crash_lines: tuple[tuple[str, int], ...] = ()  # the same, with line numbers (to find the function)
    finished: int = 0  # tests the run reported (the outcomes plugin): what a timed-out run got through
    running: tuple[tuple[str, str], ...] = ()  # (test id, file in the tree) a kill cut off: where a timeout hung

    def pass_rate(self, total: int) -> float:
        return min(1.0, self.passed / total) if total else 0.0

    def to_json(self) -> dict[str, object]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> TestReport:
        """The report :meth:`to_json` wrote (its tuples came back as lists)."""
        return cls(**{**data, "crash_files": tuple(data["crash_files"]),
                      "crash_lines": tuple((path, line) for path, line in data["crash_lines"]),
                      "running": tuple((test, path) for test, path in data["running"])})


_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected)")


def parse_pytest_summary(stdout: str) -> dict[str, int]:
    """Counts from pytest's closing line (``3 failed, 216 passed in 2.1s``)."""
    counts = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    lines = [ln for ln in stdout.strip().splitlines() if ln.strip()]
    for line in reversed(lines[-3:]):
        found = _COUNT.findall(line)
        if found:
            for n, word in found:
                key = "errors" if word.startswith("error") else word
                if key in counts:
                    counts[key] += int(n)
            break
    return counts


def run_tests(tree: Path, tests: str, *, timeout: float = DEFAULT_TIMEOUT,
              memory_mb: int = DEFAULT_MEMORY_MB) -> TestReport:
    """Run the repository's pytest suite on ``tree`` inside the sandbox (``tests``: the test
    folder, optionally followed by pytest arguments such as ``--ignore=...``)."""
    return report_of(sandbox_exec(tree, pytest_argv(tests), timeout=timeout, memory_mb=memory_mb))


def pytest_argv(tests: str, *plugins: str) -> list[str]:
    """The sandbox's pytest command for ``tests`` (paths and arguments), with ``plugins`` (``-p NAME``)."""
    # --tb=short, not --tb=line: a collection or import error's traceback is the only place that
    # names the file and line where it broke (--tb=line prints just the exception); the other
    # test files still run past a file that fails to collect. The repository's own options come
    # in ``tests``; the last word wins, so --tb and --color are given again after them
    return ["pytest", "-q", "-p", "no:cacheprovider", "-p", PLUGIN_NAME, *plugins, "-o", "addopts=", "--tb=short",
            "--continue-on-collection-errors", "--timeout=60", *shlex.split(tests), "--tb=short", "--color=no"]


def report_of(outcome: ExecOutcome) -> TestReport:
    """What a pytest run in the sandbox says: its counts and where failing tests crashed. The
    counts are pytest's closing line; where there is none (the run was cut off, or the terminal
    plugin prints none) the outcomes plugin's; crash locations come from both, and the tests a
    kill cut off (their files) from the plugin."""
    stdout = strip_ansi(outcome.stdout)
    recorded = read_outcomes(outcome.records)
    c = parse_pytest_summary(stdout)
    if not any(c.values()) and recorded.recorded:
        c = {"passed": recorded.passed, "failed": recorded.failed, "errors": recorded.errors,
             "skipped": recorded.skipped}
    lines = tuple(sorted(set(crash_lines(stdout)) | set(recorded_crash_lines(recorded))))
    running = tuple((test, path) for test, file in recorded.running if (path := _in_tree(file)) is not None)
    return TestReport(c["passed"], c["failed"], c["errors"], c["skipped"], outcome.status, outcome.backend,
                      (stdout + strip_ansi(outcome.stderr))[-3000:], tuple(sorted({p for p, _ in lines})), lines,
                      recorded.finished, running)


def recorded_crash_lines(recorded: Outcomes) -> tuple[tuple[str, int], ...]:
    """Per failed report the plugin recorded, its last frame inside the tree (as :func:`crash_lines`)."""
    found = set()
    for frames in recorded.frames:
        inside = [(path, line) for p, line in frames if (path := _in_tree(p)) is not None]
        if inside:
            found.add(inside[-1])
    return tuple(sorted(found))


_SECTION = re.compile(r"^_{3,} (.+?) _{3,}$")


def _in_tree(path: str) -> str | None:
    """``path`` relative to the tree when it is inside it (the sandbox copies the tree to its
    workdir's ``work``; pytest names files below its rootdir relative to it)."""
    if path.startswith(TREE_IN_SANDBOX):
        path = path[len(TREE_IN_SANDBOX):]
    elif path.startswith(("/", "<")):
        return None
    return None if path.startswith(HELPER_PREFIX) else path


def crash_lines(stdout: str) -> tuple[tuple[str, int], ...]:
    """(file relative to the tree, line) where each failing test, test file or import crashed:
    per section of pytest's ``--tb=short`` report, the last location inside the tree (a library
    frame below it is not where the tree's code went wrong; a collection error's last frame is
    the module line that broke the import, a SyntaxError's the line it points at)."""
    found: set[tuple[str, int]] = set()
    last: tuple[str, int] | None = None
    for line in stdout.splitlines() + ["_____ end _____"]:
        if _SECTION.match(line) or line.startswith("====="):
            if last:
                found.add(last)
            last = None
            continue
        match = FRAME.match(line) or SYNTAX.match(line) or DOCTEST.match(line)
        if match and (path := _in_tree(match.group(1))) is not None:
            last = (path, int(match.group(2)))
    return tuple(sorted(found))


def crash_files(stdout: str) -> tuple[str, ...]:
    """Files (relative to the tree) where failing tests, test files or imports crashed."""
    return tuple(sorted({path for path, _ in crash_lines(stdout)}))


def tree_digest(tree: Path) -> str:
    """Content hash of every file under ``tree`` (paths and bytes): the cache key of a code state."""
    digest = hashlib.sha256()
    for path in sorted(p for p in tree.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(str(path.relative_to(tree)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


class TestCache:
    """Each distinct final code state's tests run once per process (keyed by content hash);
    ``runs`` counts the runs it made (a state it was told the report of is not run)."""

    def __init__(self) -> None:
        self.reports: dict[str, TestReport] = {}
        self.runs = 0

    def know(self, digest: str, tests: str, report: TestReport) -> None:
        """The report of the tree whose :func:`tree_digest` is ``digest``, from a run made before
        (a prepared task's reference run: a team that wrote the reference's bytes is not run again)."""
        self.reports.setdefault(digest + "|" + tests, report)

    def run(self, tree: Path, tests: str, *, timeout: float = DEFAULT_TIMEOUT,
            memory_mb: int = DEFAULT_MEMORY_MB) -> TestReport:
        key = tree_digest(tree) + "|" + tests
        if key not in self.reports:
            self.runs += 1
            self.reports[key] = run_tests(tree, tests, timeout=timeout, memory_mb=memory_mb)
        return self.reports[key]
