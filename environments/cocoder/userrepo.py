"""A user's own repository as a CoCoder task: a checkout or an sdist, its test dependencies.

``repo:PATH`` is the task id of the repository at PATH (``agentbed run cocoder --repo PATH``).
The package and its tests are found by layout (``pkg/`` or ``src/pkg/``; ``tests/``, ``test/``
or ``pkg/tests``); the test dependencies are read from the repository's own metadata (PKG-INFO
or pyproject's ``[project]``, setup.cfg, requirements files: the runtime requirements and the
test extras), and fetched as wheels on the host (``pip download``, once, into the cache). The
sandbox stays offline: the wheels are unpacked into the task's tree (``_cocoder_site``), which
every sandboxed run puts on ``sys.path``.
"""

from __future__ import annotations

import configparser
import os
import re
import shlex
import shutil
import tarfile
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

from agentbed.errors import UsageError
from environments.cocoder.benchfixture import PLUGIN as BENCHMARK
from environments.cocoder.benchfixture import uses_benchmark_fixture
from environments.cocoder.installed import install_metadata, package_metadata
from environments.cocoder.pytestconfig import doctest_paths, read_config, run_arguments
from environments.cocoder.repos import cache_dir, sha256_of
from environments.cocoder.wheels import fetch_available, install_wheels, provided_satisfies, sandbox_tags

USER_PREFIX = "repo:"
UNMET_FILE = "unmet.txt"  # beside a prepared tree: the declared requirements it could not get
TEST_EXTRAS = ("test", "tests", "testing")
TEST_DIRS = ("tests", "test", "testing")
# what no test needs: never fetched (the sandbox's own packages: environments.cocoder.wheels.PROVIDED)
# pytest plugins are not tooling (a conftest may use pytest-cov's ``no_cover`` marker or xdist's
# ``worker_id`` fixture): they are installed, only their options are left out of addopts
TOOLING = {"coveralls", "codecov", "tox", "nox", "mypy", "ruff",
           "pylint", "isort", "pre-commit", "twine", "build", "wheel", "setuptools", "check-manifest", "invoke",
           "pytest-runner", "sphinx", "furo", "pytest-mypy-testing", "bump2version",
           "tox-gh-actions", "pytest-benchmark", "pip", "hatch", "flit"}  # pytest-benchmark: unless tests take its fixture
_SKIP_COPY = shutil.ignore_patterns(".git", "__pycache__", ".tox", ".nox", ".venv", "venv", "build", "dist",
                                    "*.egg-info", ".mypy_cache", ".pytest_cache", "node_modules")


def repo_task_id(path: str | Path) -> str:
    return USER_PREFIX + str(Path(path).expanduser().resolve())


@dataclass(frozen=True)
class UserRepo:
    root: Path  # the checkout, or the unpacked sdist
    package: str  # import name
    package_dir: Path  # where the package folder is (root/pkg or root/src/pkg)
    tests: str  # relative to the prepared tree
    requirements: tuple[str, ...]
    shown: str = ""  # how messages name ``root`` when it is not the user's path (an sdist's unpacked copy)
    unmet: tuple[str, ...] = ()  # declared test requirements that cannot be met here (a file the sdist lacks)
    notes: tuple[str, ...] = ()  # what the plan must say about the test environment (pytest-benchmark kept or not)


def _unpack_sdist(archive: Path) -> Path:
    target = cache_dir() / "user" / sha256_of(archive)[:16]
    if not (target / ".unpacked").is_file():
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        try:
            if archive.suffix == ".zip":
                with zipfile.ZipFile(archive) as zf:
                    zf.extractall(target)
            else:
                with tarfile.open(archive) as tar:
                    tar.extractall(target, filter="data")
        except (tarfile.TarError, zipfile.BadZipFile, OSError) as exc:
            raise UsageError(f"{archive}: not a readable sdist ({exc})") from exc
        (target / ".unpacked").write_text("", encoding="utf-8")
    if not any(p.name != ".unpacked" for p in target.iterdir()):  # NUL bytes read as an empty tar
        raise UsageError(f"{archive}: not a readable sdist (an empty archive)")
    entries = [p for p in target.iterdir() if p.is_dir()]
    return entries[0] if len(entries) == 1 else target


def _project_name(root: Path) -> str | None:
    for line in (root / "PKG-INFO").read_text(encoding="utf-8", errors="replace").splitlines() \
            if (root / "PKG-INFO").is_file() else []:
        if line.startswith("Name:"):
            return line.split(":", 1)[1].strip()
    if (root / "pyproject.toml").is_file():
        name = _pyproject(root).get("project", {}).get("name")
        if name:
            return str(name)
    cfg = _setup_cfg(root)
    return cfg.get("metadata", "name", fallback=None) if cfg else None


def find_package(root: Path, package: str | None = None) -> tuple[str, Path]:
    """(import name, the folder holding it): ``pkg/`` or ``src/pkg/`` with an ``__init__.py``."""
    bases = [b for b in (root, root / "src") if b.is_dir()]
    if package:
        for base in bases:
            if (base / package).is_dir():
                return package, base
        raise UsageError(f"--package {package}: no folder {package} in {root} or {root / 'src'}")
    skip = set(TEST_DIRS) | {"docs", "doc", "examples", "scripts", "benchmarks", "build", "dist", "src"}
    found = [(d.name, base) for base in bases for d in sorted(base.iterdir())
             if d.is_dir() and d.name.isidentifier() and d.name not in skip and (d / "__init__.py").is_file()]
    if len(found) > 1:
        name = (_project_name(root) or "").lower().replace("-", "_").replace(".", "_")
        found = [f for f in found if f[0].lower() == name] or found
    if len(found) == 1:
        return found[0]
    if found:
        raise UsageError(f"{root}: several packages ({', '.join(n for n, _ in found)}): give --package NAME")
    namespace = [d.name for base in bases for d in sorted(base.iterdir())
                 if d.is_dir() and d.name not in skip and (any(d.glob("*.py")) or any(d.glob("*/__init__.py")))]
    if namespace:
        folder = next(base / namespace[0] for base in bases if (base / namespace[0]).is_dir())
        holds = "Python files" if any(folder.glob("*.py")) else "packages"
        raise UsageError(f"{root}: {namespace[0]}/ has {holds} but no __init__.py (a namespace "
                         "package is not supported: add an __init__.py)")
    raise UsageError(f"{root}: no Python package (a folder with __init__.py) in it or in its src/")


def find_tests(root: Path, package: str, tests: str | None = None, *, benchmark: bool = False) -> str:
    """What the sandbox's pytest is given (paths relative to the prepared tree, where the package
    sits at the top), as the repository configures pytest: its ``testpaths`` and its ``addopts``
    (tooling plugins' options left out; :mod:`environments.cocoder.pytestconfig`), else the first
    of ``tests/``, ``test/``, ``testing/``, ``pkg/tests``. ``tests`` overrides both: a path and
    pytest arguments after it (``tests --ignore=tests/slow``), passed as given."""
    given = shlex.split(tests) if tests else []
    bases = (root, root / "src")
    if given:
        if any((base / given[0]).exists() for base in bases):
            return tests or ""
        raise UsageError(f"--tests {tests}: no such folder or file in {root}")
    config = read_config(root, benchmark)  # pytest-benchmark's options kept where the sandbox gets it
    configured = [p for pattern in config.testpaths for p in _existing(root, pattern)]
    if config.testpaths and not configured:
        raise UsageError(f"{root / config.source}: testpaths {' '.join(config.testpaths)}: no such folder in {root}: "
                         "give --tests DIR")
    for rel in configured or [*TEST_DIRS, f"{package}/tests", f"{package}/test"]:
        if any((base / rel).is_dir() or (configured and (base / rel).is_file()) for base in bases):
            found = configured or [rel]
            doctests, option = doctest_paths(root, package, config, found)
            found = list(dict.fromkeys(doctests or found))
            args = run_arguments(found, config) if config.source else shlex.join(found)
            return f"{args} {option}".strip()
    raise UsageError(f"{root}: no tests folder (tests/, test/ or {package}/tests, or testpaths in its pytest "
                     "configuration): give --tests DIR")


def _existing(root: Path, pattern: str) -> list[str]:
    """A ``testpaths`` entry (a glob, like pytest's) as the paths it names, ``src/`` moved up as the
    prepared tree moves it."""
    pattern = pattern.strip().rstrip("/")
    names = sorted(str(p.relative_to(root)) for p in root.glob(pattern)) if any(c in pattern for c in "*?[") \
        else [pattern] if (root / pattern).exists() else []
    return [n.removeprefix("src/") for n in names]


def check_links(root: Path) -> None:
    """Refuse, in one line, a symlink that leaves ``root``, one that loops or that points to a
    folder it is inside (copying would follow it forever), before anything is copied. Folders the
    copy skips (``.git``, virtualenvs, caches) are not looked at."""
    shown, root = root, root.resolve()
    for folder, dirs, files in os.walk(root):
        skipped = set(_SKIP_COPY(folder, dirs + files))
        dirs[:] = [d for d in dirs if d not in skipped]
        for name in [*dirs, *files]:
            path = Path(folder) / name
            if name in skipped or not path.is_symlink():
                continue
            where = shown / path.relative_to(root)
            try:
                target = path.resolve(strict=True)
            except (OSError, RuntimeError) as exc:  # ELOOP, a dangling link
                raise UsageError(f"{where}: a symlink that loops or points nowhere ({os.readlink(path)}): "
                                 "remove it") from exc
            if not target.is_relative_to(root):
                raise UsageError(f"{where}: a symlink leaving the repository (-> {target}): its target would "
                                 "be copied into the task and the sandbox; remove it or copy the file in")
            if target.is_dir() and path.parent.resolve().is_relative_to(target):
                raise UsageError(f"{where}: a symlink to a folder it is inside (-> {target}): a loop; remove it")


def _pyproject(root: Path) -> dict:
    try:
        return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{root / 'pyproject.toml'}: {exc}") from exc


def _setup_cfg(root: Path) -> configparser.ConfigParser | None:
    if not (root / "setup.cfg").is_file():
        return None
    cfg = configparser.ConfigParser(interpolation=None)
    try:
        cfg.read(root / "setup.cfg", encoding="utf-8")
    except configparser.Error as exc:
        raise UsageError(f"{root / 'setup.cfg'}: {exc}") from exc
    return cfg


def _requirement_lines(path: Path, seen: set[Path]) -> list[str]:
    """A requirements file's requirements (``-r`` followed; ``-e``, options and URLs skipped)."""
    if path in seen or not path.is_file():
        return []
    seen.add(path)
    out = []
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = raw.split(" #", 1)[0].strip()
        if line.startswith(("-r ", "--requirement ")):
            out += _requirement_lines(path.parent / line.split(None, 1)[1], seen)
        elif line and not line.startswith(("#", "-", ".", "/")) and "://" not in line:
            out.append(line)
    return out


def tox_deps(root: Path) -> list[str]:
    """``tox.ini``'s ``[testenv]`` deps as written (``-r FILE`` kept as such, ``{toxinidir}/`` dropped)."""
    if not (root / "tox.ini").is_file():
        return []
    cfg = configparser.ConfigParser(interpolation=None)
    try:
        cfg.read(root / "tox.ini", encoding="utf-8")
    except configparser.Error as exc:
        raise UsageError(f"{root / 'tox.ini'}: {exc}".replace("\n", " ")) from exc
    lines = [ln.split(" #", 1)[0].strip().replace("{toxinidir}/", "") for ln in
             cfg.get("testenv", "deps", fallback="").splitlines()]
    return [("-r" + ln[2:].strip()) if ln.startswith("-r") else ln for ln in lines
            if ln and not ln.startswith("#") and not set(ln) & set("{}")]


def unmet_requirements(root: Path) -> tuple[str, ...]:
    """Declared test requirements that cannot be met here, exactly: a requirements file tox names
    that the repository (an sdist often) does not ship."""
    return tuple(f"tox.ini [testenv] deps {ref}: {ref.removeprefix('-r').strip()} is not in the repository"
                 for ref in tox_deps(root) if ref.startswith("-r") and not (root / ref.removeprefix("-r").strip()).is_file())


def declared_requirements(root: Path) -> list[str]:
    """The runtime and test requirements the repository declares, as written (markers included)."""
    reqs: list[str] = []
    if (root / "PKG-INFO").is_file():  # an sdist's metadata: Requires-Dist, test extras marked
        for line in (root / "PKG-INFO").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("Requires-Dist:"):
                reqs.append(line.split(":", 1)[1].strip())
    if (root / "pyproject.toml").is_file():
        data = _pyproject(root)
        project = data.get("project", {})
        reqs += list(project.get("dependencies", []))
        extras = project.get("optional-dependencies", {})
        groups = data.get("dependency-groups", {})
        for table in (extras, groups):
            names = [n for n in TEST_EXTRAS if n in table] or (["dev"] if "dev" in table else [])
            reqs += [r for n in names for r in table[n] if isinstance(r, str)]
    cfg = _setup_cfg(root)
    if cfg is not None:
        reqs += cfg.get("options", "install_requires", fallback="").splitlines()
        reqs += cfg.get("options", "tests_require", fallback="").splitlines()
        if cfg.has_section("options.extras_require"):
            for name in TEST_EXTRAS:
                reqs += cfg.get("options.extras_require", name, fallback="").splitlines()
    seen: set[Path] = set()
    reqs += [r for r in tox_deps(root) if not r.startswith("-r")]
    for ref in (r for r in tox_deps(root) if r.startswith("-r")):
        reqs += _requirement_lines(root / ref.removeprefix("-r").strip(), seen)
    reqs += _requirement_lines(root / "requirements.txt", seen)
    tests = [p for pattern in ("requirements[-_]test*.txt", "test[-_]requirements*.txt", "requirements/test*.txt",
                               "tests/requirements*.txt") for p in sorted(root.glob(pattern))]
    for path in for_sandbox_python(tests) or [root / "requirements-dev.txt", root / "requirements_dev.txt"]:
        reqs += _requirement_lines(path, seen)
    return [r.strip() for r in reqs if r.strip()]


_FOR_PYTHON = re.compile(r"^(.*?)(?:py)?(\d)(\d{1,2})$")  # requirements-tests39 is for Python 3.9
SANDBOX_PYTHON = (3, 11)


def for_sandbox_python(paths: list[Path]) -> list[Path]:
    """Requirements files, of those that differ only by the Python they are for
    (``requirements-tests36.txt``, ``...37``, ``...39``), the one for the newest Python up to the
    sandbox's: pinned sets for different Pythons conflict (wcwidth's pin coverage 5.5 and 7.3.2)."""
    best: dict[tuple[Path, str], tuple[tuple[int, int], Path]] = {}
    plain: list[Path] = []
    for path in paths:
        found = _FOR_PYTHON.match(path.stem)
        if found is None:
            plain.append(path)
            continue
        version = (int(found.group(2)), int(found.group(3)))
        if not (3, 0) <= version <= SANDBOX_PYTHON:
            continue
        key = (path.parent, found.group(1))
        if key not in best or best[key][0] < version:
            best[key] = (version, path)
    return plain + sorted(path for _, path in best.values())


def sandbox_requirements(root: Path, package: str) -> tuple[str, ...]:
    """What the sandbox must get for the tests: the declared requirements whose markers hold on
    the sandbox's Python (3.11, Linux) with the test extras, less tooling and what it has."""
    from packaging.requirements import InvalidRequirement, Requirement

    own = {package.lower(), (_project_name(root) or "").lower()}
    tooling = TOOLING - {BENCHMARK} if uses_benchmark_fixture(root) else TOOLING
    keep: dict[str, str] = {}
    for text in declared_requirements(root):
        try:
            req = Requirement(text)
        except InvalidRequirement as exc:
            raise UsageError(f"{root}: requirement {text!r} does not parse ({exc})") from exc
        name = req.name.lower().replace("_", "-")
        if name in tooling or name.startswith("sphinx") or name.replace("-", "_") in own:
            continue
        if provided_satisfies(text.split(";", 1)[0]):  # the sandbox's own pytest (or pluggy...) will do
            continue
        env = {"python_version": "3.11", "python_full_version": "3.11.2", "sys_platform": "linux",
               "platform_system": "Linux", "implementation_name": "cpython", "os_name": "posix"}
        if req.marker is not None and not any(req.marker.evaluate({**env, "extra": e}) for e in ("", *TEST_EXTRAS)):
            continue
        req.marker = None
        keep.setdefault(name, str(req))
    return tuple(sorted(keep.values()))


def _declares(requirements: tuple[str, ...], name: str) -> bool:
    """``name`` (normalised) is one of ``requirements`` (``pytest-benchmark==5.3.1``, ``pytest_benchmark>=4``)."""
    return any(re.split(r"[^A-Za-z0-9._-]", r, maxsplit=1)[0].lower().replace("_", "-") == name for r in requirements)


def benchmark_notes(root: Path, requirements: tuple[str, ...]) -> tuple[str, ...]:
    """What the plan says when tests take pytest-benchmark's ``benchmark`` fixture: the plugin
    kept (with its ``--benchmark-*`` addopts), or why it is not there."""
    if not uses_benchmark_fixture(root):
        return ()
    if _declares(requirements, BENCHMARK):
        return (f"{BENCHMARK} kept as a test requirement: tests take its benchmark fixture (its --benchmark-* "
                "options in addopts kept too)",)
    return (f"tests take pytest-benchmark's benchmark fixture but no test requirement declares {BENCHMARK}: "
            "it is not installed, and those tests error (fixture 'benchmark' not found)",)


def locate(source: Path, package: str | None = None, tests: str | None = None) -> UserRepo:
    source = Path(source).expanduser()
    if not source.exists():
        raise UsageError(f"{source}: no such file or folder")
    root = _unpack_sdist(source) if source.is_file() else source
    try:
        check_links(root)
        name, base = find_package(root, package)
        requirements = sandbox_requirements(root, name)
        tests = find_tests(root, name, tests, benchmark=_declares(requirements, BENCHMARK))
        return UserRepo(root, name, base, tests, requirements,
                        unmet=unmet_requirements(root), notes=benchmark_notes(root, requirements))
    except UsageError as exc:  # an sdist's messages name the archive, not its unpacked copy in the cache
        if root == source:
            raise
        raise UsageError(str(exc).replace(str(root.resolve()), f"{source}!").replace(str(root), f"{source}!")) from exc


def prepare_tree(repo: UserRepo, tree: Path, wheels: list[Path] | None = None) -> None:
    """Copy the repository into ``tree`` with the package at the top (a src layout moved up),
    its test dependencies (``wheels``, or fetched for its requirements) unpacked beside it and the
    package itself installed there: its metadata (:mod:`environments.cocoder.installed`)."""
    if tree.exists():
        shutil.rmtree(tree)
    shutil.copytree(repo.root, tree, ignore=_SKIP_COPY)
    if repo.package_dir != repo.root:
        shutil.rmtree(tree / repo.package_dir.relative_to(repo.root))
        shutil.copytree(repo.package_dir / repo.package, tree / repo.package, ignore=_SKIP_COPY)
        folder = shlex.split(repo.tests)[0]
        if (repo.package_dir / folder).is_dir() and not (tree / folder).exists():
            shutil.copytree(repo.package_dir / folder, tree / folder, ignore=_SKIP_COPY)
    unmet: tuple[str, ...] = ()
    if wheels is None:
        fetched, unmet = fetch_available(repo.requirements)
        install_wheels(fetched, tree, sandbox_tags() if repo.requirements else None)
    else:
        install_wheels(wheels, tree)
    (tree.parent / UNMET_FILE).write_text("\n".join(unmet), encoding="utf-8")
    install_metadata(tree, package_metadata(repo.root, repo.package, repo.package_dir), repo.package)
