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
import hashlib
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

from agentbed.errors import UsageError
from environments.cocoder.repos import cache_dir, sha256_of
from environments.cocoder.sandboxed import SITE_DIR

USER_PREFIX = "repo:"
TEST_EXTRAS = ("test", "tests", "testing")
TEST_DIRS = ("tests", "test", "testing")
# what the sandbox image already has (docker/requirements.txt) or no test needs: never fetched
PROVIDED = {"pytest", "pluggy", "iniconfig", "packaging", "pygments", "pytest-timeout"}
TOOLING = {"pytest-cov", "coverage", "coveralls", "codecov", "tox", "nox", "mypy", "ruff",
           "pylint", "isort", "pre-commit", "twine", "build", "wheel", "setuptools", "check-manifest", "invoke",
           "pytest-runner", "sphinx", "furo", "pytest-mypy-testing", "bump2version",
           "tox-gh-actions", "pytest-xdist", "pytest-benchmark", "pip", "hatch", "flit"}
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
                 if d.is_dir() and d.name not in skip and any(d.glob("*.py"))]
    if namespace:
        raise UsageError(f"{root}: {namespace[0]}/ has Python files but no __init__.py (a namespace "
                         "package is not supported: add an __init__.py)")
    raise UsageError(f"{root}: no Python package (a folder with __init__.py) in it or in its src/")


def find_tests(root: Path, package: str, tests: str | None = None) -> str:
    """The test folder, relative to the prepared tree (where the package sits at the top);
    ``tests`` may add pytest arguments after the folder (``tests --ignore=tests/slow``)."""
    given = shlex.split(tests) if tests else []
    candidates = given[:1] or [*TEST_DIRS, f"{package}/tests", f"{package}/test"]
    for rel in candidates:
        for base in (root, root / "src"):
            if (base / rel).is_dir() or (given and (base / rel).is_file()):
                return tests or rel
    if tests:
        raise UsageError(f"--tests {tests}: no such folder or file in {root}")
    raise UsageError(f"{root}: no tests folder (tests/, test/ or {package}/tests): give --tests DIR")


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
    reqs += _requirement_lines(root / "requirements.txt", seen)
    tests = [p for pattern in ("requirements[-_]test*.txt", "test[-_]requirements*.txt", "requirements/test*.txt",
                               "tests/requirements*.txt") for p in sorted(root.glob(pattern))]
    for path in tests or [root / "requirements-dev.txt", root / "requirements_dev.txt"]:
        reqs += _requirement_lines(path, seen)
    return [r.strip() for r in reqs if r.strip()]


def sandbox_requirements(root: Path, package: str) -> tuple[str, ...]:
    """What the sandbox must get for the tests: the declared requirements whose markers hold on
    the sandbox's Python (3.11, Linux) with the test extras, less tooling and what it has."""
    from packaging.requirements import InvalidRequirement, Requirement

    own = {package.lower(), (_project_name(root) or "").lower()}
    keep: dict[str, str] = {}
    for text in declared_requirements(root):
        try:
            req = Requirement(text)
        except InvalidRequirement as exc:
            raise UsageError(f"{root}: requirement {text!r} does not parse ({exc})") from exc
        name = req.name.lower().replace("_", "-")
        if name in PROVIDED or name in TOOLING or name.startswith("sphinx") or name.replace("-", "_") in own:
            continue
        env = {"python_version": "3.11", "python_full_version": "3.11.2", "sys_platform": "linux",
               "platform_system": "Linux", "implementation_name": "cpython", "os_name": "posix"}
        if req.marker is not None and not any(req.marker.evaluate({**env, "extra": e}) for e in ("", *TEST_EXTRAS)):
            continue
        req.marker = None
        keep.setdefault(name, str(req))
    return tuple(sorted(keep.values()))


def locate(source: Path, package: str | None = None, tests: str | None = None) -> UserRepo:
    source = Path(source).expanduser()
    if not source.exists():
        raise UsageError(f"{source}: no such file or folder")
    root = _unpack_sdist(source) if source.is_file() else source
    name, base = find_package(root, package)
    return UserRepo(root, name, base, find_tests(root, name, tests), sandbox_requirements(root, name))


def fetch_wheels(requirements: tuple[str, ...], *, python: str = sys.executable) -> list[Path]:
    """Pure-Python wheels (``py3-none-any``) of the requirements and their dependencies, fetched
    on the host into the cache (once per requirement set). Only pure ones: the sandbox unpacks
    wheels, it neither builds nor installs them, so a compiled dependency is refused by name."""
    if not requirements:
        return []
    key = hashlib.sha256(("pure\n" + "\n".join(requirements)).encode()).hexdigest()[:16]
    target = cache_dir() / "wheels" / key
    if not (target / ".complete").is_file():
        target.mkdir(parents=True, exist_ok=True)
        cmd = [python, "-m", "pip", "download", "--only-binary", ":all:", "--python-version", "3.11",
               "--implementation", "cp", "--abi", "none", "--platform", "any", "-d", str(target), *requirements]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            raise UsageError(download_failure(requirements, result.stdout + "\n" + result.stderr))
        (target / ".complete").write_text("\n".join(requirements) + "\n", encoding="utf-8")
    return sorted(target.glob("*.whl"))


def download_failure(requirements: tuple[str, ...], output: str) -> str:
    """pip's refusal on one line; the requirement with no wheel it could take is named (pip names
    a missing top-level one, and a dependency's under "The conflict is caused by")."""
    lines = output.strip().splitlines()
    errors = [ln for ln in lines if ln.startswith("ERROR")] or ["pip failed"]
    missing = [ln.rsplit(" for ", 1)[-1].strip() for ln in errors if "No matching distribution found for" in ln]
    needed = [m.groups() for m in map(_DEPENDS_ON.match, lines) if m]
    if needed:  # a dependency of a dependency: e.g. jinja2 needs MarkupSafe, compiled only
        missing = [f"{needed[0][1]}"]
        requirements = (f"{needed[0][0]} of {', '.join(requirements)}",)
    if missing:
        return (f"test dependency {missing[-1]!r} has no pure-Python wheel (py3-none-any) to fetch: --repo unpacks "
                "wheels into the sandbox, it cannot build an sdist or install a compiled package (or the name is "
                f"unknown to the package index); required by {', '.join(requirements)}")
    return f"fetching the test dependencies ({', '.join(requirements)}) failed: {errors[-1]}"


_DEPENDS_ON = re.compile(r"^\s+(\S+ \S+) depends on (.+?)\s*$")


def is_pure(wheel: Path) -> bool:
    """A wheel that runs anywhere once unpacked: its tags end ``-none-any`` (PEP 427 file name)."""
    return wheel.name.removesuffix(".whl").endswith("-none-any")


def install_wheels(wheels: list[Path], tree: Path) -> list[str]:
    """Unpack ``wheels`` into the tree's site folder (a pure wheel is a zip of importable files);
    the ones the sandbox already provides are left out. Returns the distributions installed."""
    site = tree / SITE_DIR
    if site.exists():
        shutil.rmtree(site)
    installed = []
    for wheel in wheels:
        dist = wheel.name.split("-", 1)[0].lower().replace("_", "-")
        if dist in PROVIDED:
            continue
        if not is_pure(wheel):
            raise UsageError(f"test dependency {dist!r} has no pure-Python wheel ({wheel.name}): the sandbox "
                             "unpacks wheels, it cannot install a compiled one")
        site.mkdir(exist_ok=True)
        with zipfile.ZipFile(wheel) as zf:
            zf.extractall(site)
        installed.append(wheel.name)
    return installed


def prepare_tree(repo: UserRepo, tree: Path, wheels: list[Path] | None = None) -> None:
    """Copy the repository into ``tree`` with the package at the top (a src layout moved up)
    and its test dependencies (``wheels``, or fetched for its requirements) unpacked beside it."""
    if tree.exists():
        shutil.rmtree(tree)
    shutil.copytree(repo.root, tree, ignore=_SKIP_COPY)
    if repo.package_dir != repo.root:
        shutil.rmtree(tree / repo.package_dir.relative_to(repo.root))
        shutil.copytree(repo.package_dir / repo.package, tree / repo.package, ignore=_SKIP_COPY)
        folder = shlex.split(repo.tests)[0]
        if (repo.package_dir / folder).is_dir() and not (tree / folder).exists():
            shutil.copytree(repo.package_dir / folder, tree / folder, ignore=_SKIP_COPY)
    install_wheels(fetch_wheels(repo.requirements) if wheels is None else wheels, tree)
