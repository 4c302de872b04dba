"""CoCoder tasks: a reference repository, its skeleton (bodies blanked) and its test suite.

A task is used only after the reference passes its own tests in the sandbox; the pass-rate
denominator is fixed at the reference's passed-test count, so a test file that fails to import
counts as failures. Prepared tasks are cached under ``.cache/cocoder/tasks/`` keyed by the
content hash of the reference.
"""

from __future__ import annotations

import copy
import dataclasses
import fcntl
import hashlib
import json
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx

from agentbed.errors import UsageError
from environments.cocoder.blanking import blank_source, import_time_functions
from environments.cocoder.depgraph import build_dependency_graph, discover_modules, estimate_tokens
from environments.cocoder.golden import write_golden_tests
from environments.cocoder.reach import Reach, traced_run
from environments.cocoder.refusal import pytest_reason, reference_refusal
from environments.cocoder.repos import (
    FETCH_COMMAND,
    REPO_BY_NAME,
    PinnedRepo,
    cache_dir,
    is_fetched,
    package_base,
    pinned_wheels,
    repo_dir,
)
from environments.cocoder.sandboxed import (
    DEFAULT_TIMEOUT,
    TestReport,
    current_backend,
    tree_digest,
)
from environments.cocoder.synth import SynthSpec, generate_repo
from environments.cocoder.userrepo import UNMET_FILE, USER_PREFIX, UserRepo, locate, prepare_tree

SYNTH_PREFIX = "synth-"


@dataclass
class ModuleTask:
    module: str
    relpath: str  # from the tree root
    reference: str
    skeleton: str
    blanked: list[str]


@dataclass
class RepoTask:
    name: str
    tree: Path  # the reference tree (package + tests), never modified
    package: str
    tests: str
    reference_tests: int
    modules: dict[str, ModuleTask]
    graph: nx.DiGraph  # the true graph, from the reference (function-local imports included)
    visible_graph: nx.DiGraph  # what an agent sees in the skeleton
    notes: list[str] = field(default_factory=list)
    untested: dict[str, list[str]] = field(default_factory=dict)  # module -> functions no test reaches (kept)
    tests_reaching: dict[str, int] = field(default_factory=dict)  # module -> reference tests entering it
    test_timeout: float = DEFAULT_TIMEOUT  # seconds a sandboxed run of the tests may take
    # the reference tree's tree_digest and its tests' report in the sandbox at preparation (None: a
    # task prepared before reports were kept): a final code state with those bytes has that report
    reference_digest: str = ""
    reference_report: TestReport | None = None

    def out_tokens(self) -> dict[str, int]:
        return {m: estimate_tokens(t.reference) for m, t in self.modules.items()}

    def spec_tokens(self) -> dict[str, int]:
        return {m: estimate_tokens(t.skeleton) for m, t in self.modules.items()}


class TaskError(UsageError):
    """A repository that cannot become a task (not fetched, reference fails its tests, bad code)."""


def _with_output(exc: TaskError, output: Path) -> TaskError:
    """``exc`` carrying pytest's whole output as its evidence (``agentbed run`` copies it into the run directory)."""
    if output.is_file():
        exc.evidence = (str(output),)
    return exc


_LOADED: dict[str, RepoTask] = {}


def task_ids(include_synthetic: bool = True) -> list[str]:
    ids = [name for name, repo in REPO_BY_NAME.items() if is_fetched(repo)]
    return ids + (["synth-12"] if include_synthetic else [])


def load_task(name: str) -> RepoTask:
    """The prepared task ``name``: a pinned repository's, or ``synth-N[-sSEED]`` (synthetic).
    Safe under concurrency: workers preparing the same task at once take turns (:func:`preparing`)."""
    if name not in _LOADED:
        with preparing(name):
            if name not in _LOADED:  # another thread of this process may have finished it meanwhile
                _LOADED[name] = _load(name)
    return _LOADED[name]


@contextmanager
def preparing(name: str) -> Iterator[None]:
    """An exclusive lock on task ``name``'s preparation, across processes and threads (``flock``
    on a file of its own: each ``open`` is a lock of its own, and the kernel drops it with the
    process). The preparer that waited finds the task prepared, so it never sees the other's
    half-built tree, probe files or metadata (two workers of one run used to race on the probe)."""
    locks = cache_dir() / "tasks" / ".locks"
    locks.mkdir(parents=True, exist_ok=True)
    path = locks / (hashlib.sha256(name.encode()).hexdigest()[:16] + ".lock")
    with open(path, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


MODULES_SUFFIX = "@modules="  # TASK@modules=a,b: only those modules blanked, the rest given


def subset_task_id(task: str, modules: str) -> str:
    """The id of ``task`` with only ``modules`` (comma-separated) to write; ``task`` itself when none."""
    return f"{task}{MODULES_SUFFIX}{modules}" if modules else task


def _load(name: str) -> RepoTask:
    if MODULES_SUFFIX in name:
        base, _, modules = name.rpartition(MODULES_SUFFIX)
        return with_only(load_task(base), name, modules.split(","))
    if name.startswith(SYNTH_PREFIX):
        return _prepare(name, _synthetic_tree(name), "synthpkg", "tests")
    if name.startswith(USER_PREFIX):
        return _user_task(name)
    if name in REPO_BY_NAME:
        repo = REPO_BY_NAME[name]
        if not is_fetched(repo):
            raise TaskError(f"task {name!r}: repository not fetched; run {FETCH_COMMAND} {name}")
        return _prepare(name, _reference_tree(repo), repo.package, repo.tests)
    raise TaskError(f"unknown task {name!r} (tasks: {', '.join(task_ids())}, synth-N[-sSEED], "
                    "or repo:PATH for a repository of yours)")


def with_only(task: RepoTask, name: str, modules: list[str]) -> RepoTask:
    """``task`` with only ``modules`` blanked: the others are given as the reference wrote them
    (a smaller task on the same tree and tests, e.g. for a slow real model). Its pass rate is
    still over every reference test, most of which the given modules pass on their own."""
    wanted = [m.strip() for m in modules if m.strip()]
    unknown = [m for m in wanted if m not in task.modules or not task.modules[m].blanked]
    if not wanted or unknown:
        writable = sorted(m for m, mt in task.modules.items() if mt.blanked)
        raise TaskError(f"task {name!r}: --modules {','.join(unknown) or '(none)'}: not a module with a body to "
                        f"write (modules: {', '.join(writable)})")
    kept = {m: mt if m in wanted else ModuleTask(m, mt.relpath, mt.reference, mt.reference, [])
            for m, mt in task.modules.items()}
    return RepoTask(name, task.tree, task.package, task.tests, task.reference_tests, kept, task.graph,
                    task.visible_graph, [*task.notes, f"only {', '.join(wanted)} to write"], task.untested,
                    task.tests_reaching, task.test_timeout, task.reference_digest, task.reference_report)


def _source_stamp(root: Path) -> str:
    """Cheap fingerprint of a checkout (paths, sizes, mtimes): a changed checkout is copied again."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not {".git", "__pycache__", ".tox"} & set(p.parts)):
        stat = path.stat()
        digest.update(f"{path.relative_to(root)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _user_task(name: str) -> RepoTask:
    """``repo:PATH[#package=P&tests=T]``: a repository of the user's (a checkout or an sdist)."""
    path, _, query = name[len(USER_PREFIX):].partition("#")
    extra = dict(part.split("=", 1) for part in query.split("&") if "=" in part)
    repo = locate(Path(path), extra.get("package") or None, extra.get("tests") or None)
    if repo.root != Path(path):  # an sdist: messages name the archive, not its unpacked copy in the cache
        repo = dataclasses.replace(repo, shown=f"{path}!")
    tree = cache_dir() / "tasks" / ("repo-" + hashlib.sha256(name.encode()).hexdigest()[:12]) / "tree"
    stamp_file = tree.parent / "source.stamp"
    stamp = _source_stamp(Path(path)) + "|" + "\n".join(repo.requirements)
    if not stamp_file.is_file() or stamp_file.read_text(encoding="utf-8") != stamp or not tree.is_dir():
        tree.parent.mkdir(parents=True, exist_ok=True)
        prepare_tree(repo, tree)
        stamp_file.write_text(stamp, encoding="utf-8")
    fetched = tree.parent / UNMET_FILE
    unmet = "; ".join([*repo.unmet, *(fetched.read_text(encoding="utf-8").splitlines() if fetched.is_file() else [])])
    try:
        task = _prepare(name, tree, repo.package, repo.tests, blank_untested=False)
    except UsageError as exc:  # name the user's own file, not the prepared copy in the cache
        hint = (f"; declared but not met offline: {unmet}" if unmet else "") + "".join(f"; {n}" for n in repo.notes)
        again = type(exc)(_in_user_source(str(exc), tree, repo) + hint + pytest_hint(str(exc), repo))
        again.evidence = exc.evidence
        raise again from exc
    if unmet:
        task.notes.append(f"declared test requirements not met offline: {unmet}")
    task.notes.extend(repo.notes)
    return task


def pytest_hint(message: str, repo: UserRepo) -> str:
    """What to add when the cause is agentbed's, not the repository's: its conftest does not fit
    the sandbox's pytest and it pins none (a hook argument a newer pytest removed: boltons'
    ``path``), or a file reads a path under ``src/``, which the task's tree moved up (semver's docs)."""
    if repo.package_dir.name == "src" and f"src/{repo.package}/" in message and "No such file" in message:
        return (f"; agentbed moves a src layout's package to the top of the task's tree, so src/{repo.package}/ "
                "does not exist there (a limit of --repo: leave such tests out with --tests)")
    if "PluginValidationError" not in message or any(r.lower().startswith("pytest") and r[6:7] in "=<>~!"
                                                     for r in repo.requirements):
        return ""
    from environments.cocoder.wheels import PROVIDED

    return (f"; the sandbox runs pytest {PROVIDED['pytest']} because the repository's test requirements pin no "
            "pytest version")


def _in_user_source(message: str, tree: Path, repo: UserRepo) -> str:
    """``message`` with paths of the prepared tree written as the repository's own paths (a src
    layout's package back under its folder)."""
    message = message.replace(str(tree / repo.package), str(repo.package_dir / repo.package))
    message = message.replace(str(tree), str(repo.root))
    return message.replace(str(repo.root), repo.shown) if repo.shown else message


def _synthetic_tree(name: str) -> Path:
    parts = name[len(SYNTH_PREFIX):].split("-s")
    try:
        modules, seed = int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
    except ValueError as exc:
        raise TaskError(f"task {name!r}: expected synth-N or synth-N-sSEED") from exc
    if not 1 <= modules <= 2000:
        raise TaskError(f"task {name!r}: a synthetic task has 1 to 2000 modules")
    tree = cache_dir() / "tasks" / name / "tree"
    if not (tree / "tests").is_dir():
        if tree.exists():
            shutil.rmtree(tree)
        generate_repo(SynthSpec(modules=modules, seed=seed), tree)
    return tree


def _reference_tree(repo: PinnedRepo) -> Path:
    tree = cache_dir() / "tasks" / repo.name / "tree"
    done = tree.parent / "tree.done"  # absent: never prepared, or a preparation that stopped halfway
    if not done.is_file() or not (tree / repo.package).is_dir():
        prepare_tree(UserRepo(repo_dir(repo), repo.package, package_base(repo), repo.tests, ()), tree,
                     wheels=pinned_wheels(repo))
        if repo.test_license == "golden":
            try:
                write_golden_tests(tree, tree / repo.tests)
            except RuntimeError as exc:
                raise TaskError(f"task {repo.name!r}: {exc}") from exc
        done.write_text("", encoding="utf-8")
    return tree


# (task, digest) -> the refusal its reference's failing tests gave in this process: a run asking again
# gets it without a second sandbox run (not a timeout: the machine's load may have caused it)
_REFUSED: dict[tuple[str, str], TaskError] = {}
REFERENCE_TIMEOUT = 900.0  # seconds the reference's tests may take in the sandbox, once, at preparation
PREPARATION = "3"  # bumped when what a prepared task keeps changes (2: import-time names include test
# collection; 3: what each test reaches, and the package's metadata installed)


def _prepare(name: str, tree: Path, package: str, tests: str, *, blank_untested: bool = True) -> RepoTask:
    """The task on ``tree``: the reference checked in the sandbox, blanked, its graphs built.
    A function no reference test reaches is left as written (``blank_untested=False``, a user's
    repository) or blanked and flagged in the notes (the pinned repositories and synthetic tasks,
    whose published figures were made that way)."""
    _check_package(name, tree, package)
    meta_path = tree.parent / "task.json"
    # the tests' arguments are part of what was checked (doctests added change the reference count)
    tree_hash = tree_digest(tree)
    digest = tree_hash + "|" + tests + "|" + current_backend() + "|" + PREPARATION
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    if meta.get("digest") != digest and (name, digest) in _REFUSED:  # the same bytes, tests and backend
        raise copy.copy(_REFUSED[name, digest])  # a copy: message and evidence, no traceback
    if meta.get("digest") != digest:
        started = time.perf_counter()
        output = tree.parent / "reference-output.txt"
        report, reach = traced_run(tree, package, tests, timeout=REFERENCE_TIMEOUT, output=output)  # and reach
        seconds = time.perf_counter() - started
        if report.status == "timeout":
            raise _with_output(TaskError(
                f"task {name!r}: the reference's tests did not finish in the sandbox within "
                f"{REFERENCE_TIMEOUT:.0f} s ({report.passed} passed by then): leave slow tests out "
                f"with --tests; pytest's output: {output}"), output)
        if report.passed == 0 or report.failed or report.errors:
            said = pytest_reason(_whole(output) or report.tail)
            _REFUSED[name, digest] = _with_output(TaskError(reference_refusal(name, report, tests, said, output)), output)
            raise copy.copy(_REFUSED[name, digest])
        if reach is None:
            raise _with_output(TaskError(
                f"task {name!r}: the reference run in the sandbox did not say which functions its tests "
                f"reach; pytest says: {pytest_reason(report.tail)}; its whole output: {output}"), output)
        meta = {"digest": digest, "reference_tests": report.passed,
                "keep": sorted(import_time_functions(tree, package, tests)), "backend": report.backend,
                "reach": reach.to_json(), "reference_seconds": round(seconds, 3), "report": report.to_json()}
        partial = meta_path.with_suffix(".json.partial")
        partial.write_text(json.dumps(meta), encoding="utf-8")
        os.replace(partial, meta_path)  # never half-written for a reader
    keep_by_file: dict[str, set[int]] = {}
    for path, line in meta["keep"]:
        keep_by_file.setdefault(path, set()).add(line)
    reach = Reach.from_json(meta["reach"])
    reached: dict[str, set[int]] = {}
    for path, line in reach.functions:
        reached.setdefault(path, set()).add(line)
    modules: dict[str, ModuleTask] = {}
    untested: dict[str, list[str]] = {}  # module -> the functions no test reaches, left as written
    for module, path in discover_modules(tree / package).items():
        rel = str(path.relative_to(tree))
        reference = path.read_text(encoding="utf-8")
        keep = keep_by_file.get(rel, set())
        _, candidates = blank_source(reference, keep, filename=rel)
        unreached = [b for b in candidates if not b.starts() & reached.get(rel, set())]
        if unreached:
            untested[module] = [b.qualname for b in unreached]
            keep = keep if blank_untested else keep | {b.lineno for b in unreached}
        skeleton, blanked = blank_source(reference, keep, filename=rel)
        modules[module] = ModuleTask(module, rel, reference, skeleton, [b.qualname for b in blanked])
    if not any(mt.blanked for mt in modules.values()):
        why = f" ({sum(map(len, untested.values()))} no test reaches)" if untested else ""
        raise TaskError(f"task {name!r}: {package} has no function body to blank (every function is one line, "
                        f"`...`, runs at import or test collection, or is reached by no test{why}): nothing for "
                        "the agents to write")
    graph = build_dependency_graph(tree / package)
    visible = build_dependency_graph(tree / package, include_local=False)
    notes = []
    if nx.number_strongly_connected_components(graph) < graph.number_of_nodes():
        notes.append("import cycles present: each cycle is written by one agent")
    if untested:
        notes.append(untested_note(untested, modules, blank_untested))
    return RepoTask(name, tree, package, tests, meta["reference_tests"], modules, graph, visible, notes,
                    untested, {mt.module: reach.tests_reaching(mt.relpath) for mt in modules.values()},
                    tests_time_limit(meta.get("reference_seconds", 0.0)), tree_hash,
                    TestReport.from_json(meta["report"]) if "report" in meta else None)


def tests_time_limit(reference_seconds: float) -> float:
    """A run of the tests may take this long: the default, or three times what the reference took
    (a suite slower than the default must not time out on correct code)."""
    return max(DEFAULT_TIMEOUT, 3 * reference_seconds)


def untested_note(untested: dict[str, list[str]], modules: dict[str, ModuleTask], blanked: bool) -> str:
    """The note every plan, manifest and summary carries: what no reference test reaches."""
    whole = sorted(m for m, names in untested.items()
                   if set(names) >= set(modules[m].blanked) and (blanked or not modules[m].blanked))
    functions, files = sum(map(len, untested.values())), len(untested)
    how = ("still blanked: a pass rate does not check them, so it counts whatever is written there as correct"
           if blanked else "left as written (not blanked: a pass rate cannot check them)")
    return (f"untested: {functions} function{'s' * (functions != 1)} in {files} module{'s' * (files != 1)} "
            f"reached by no reference test, {how}" + (f"; modules no test reaches: {', '.join(whole)}" if whole else ""))


def _check_package(name: str, tree: Path, package: str) -> None:
    """One-line refusals of what cannot be a task, before anything runs in the sandbox."""
    folder = tree / package
    if not folder.is_dir():
        raise TaskError(f"task {name!r}: {folder} is not a directory")
    if not (folder / "__init__.py").is_file():
        raise TaskError(f"task {name!r}: {folder} has no __init__.py (a namespace package is not supported: "
                        "add an __init__.py)")
    modules = discover_modules(folder)  # an empty package is a UsageError here
    build_dependency_graph(folder, whole_files=True)  # a syntax error, even in a function body, is file:line here
    if not any(path.read_text(encoding="utf-8").strip() for path in modules.values()):
        raise TaskError(f"task {name!r}: {folder}'s modules are all empty: nothing for the agents to write")


def _whole(path: Path) -> str:
    """pytest's stdout as the reference run saved it ('' when it is not there)."""
    try:
        return path.read_text(encoding="utf-8").split("\n--- stderr ---\n", 1)[0]
    except OSError:
        return ""


def assemble(task: RepoTask, written: dict[str, str], out_dir: Path) -> Path:
    """A copy of the reference tree where every module is what the agents wrote (the skeleton
    where nothing was written): the final code state whose tests are run."""
    if out_dir.exists():
        shutil.rmtree(out_dir)
    shutil.copytree(task.tree, out_dir, ignore=shutil.ignore_patterns("__pycache__"))
    for module, mt in task.modules.items():
        (out_dir / mt.relpath).write_text(written.get(module, mt.skeleton), encoding="utf-8")
    return out_dir
