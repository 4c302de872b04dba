"""The real repositories CoCoder tasks are made from: pinned source distributions.

They are fetched at set-up by ``scripts/fetch-repos`` (``pip download --no-deps --no-binary
:all:``), checked against the sha256 pinned here, and unpacked with their licenses into
``.cache/cocoder/repos/`` (git-ignored): no third-party code is committed to this repository.
The wheels their tests need (runtime and test dependencies) are pinned and checked the same way,
into ``.cache/cocoder/wheels/pinned/``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
FETCH_COMMAND = "scripts/fetch-repos"


@dataclass(frozen=True)
class PinnedRepo:
    name: str  # task id
    dist: str  # distribution name for pip
    version: str
    sha256: str
    package: str  # import package inside the sdist
    tests: str  # test directory, relative to the unpacked sdist
    license: str  # license file(s) kept beside the code
    test_license: str  # what the tests are (their own, or golden tests generated here)
    wheels: tuple[tuple[str, str], ...] = ()  # (name==version, sha256): the tests' dependencies, pinned

    @property
    def sdist_name(self) -> str:
        return f"{self.dist}-{self.version}.tar.gz"

    @property
    def folder(self) -> str:
        return f"{self.dist}-{self.version}"


REPOS: tuple[PinnedRepo, ...] = (
    PinnedRepo("tinydb", "tinydb", "4.9.0", "6928b1fa785186bda7952a0ba05aaeedc883ede565ca9c7d608de44e5e75de70",
               "tinydb", "tests", "LICENSE", "own"),
    PinnedRepo("voluptuous", "voluptuous", "0.16.0",
               "006535e22fed944aec17bef6e8725472476194743c87bd233e912eb463f8ff05",
               "voluptuous", "voluptuous/tests", "COPYING", "own"),
    PinnedRepo("hl7", "hl7", "0.4.5", "b6eb97499ebe236e00c3009d43e6b0f040de002df12a292fa5efbd2ce2a8a838",
               "hl7", "tests", "LICENSE", "own"),
    # zxcvbn's sdist ships only a compatibility script, so its tests are golden tests: the
    # reference's own outputs on fixed passwords, recorded in the sandbox when the task is built.
    PinnedRepo("zxcvbn", "zxcvbn", "4.5.0", "70392c0fff39459d7f55d0211151401e79e76fcc6e2c22b61add62900359c7c1",
               "zxcvbn", "tests", "LICENSE.txt", "golden"),
)
# Three with runtime dependencies, chosen for what they exercise (docs/cocoder.md, "Your own
# repository"): transitions (six; its tests also need mock, dill, pycodestyle; its two mypy tests
# are left out: they type-check it with whatever mypy the sandbox's Python imports, none in the
# Docker image, where they skip, and the project's own in the local sandbox, whose newer rules
# fail them: the host's tools, not the code written), pydash (a src layout; typing-extensions;
# its mypy typing tests are left out: they need mypy per test), bleach (webencodings; a vendored
# html5lib inside the package, blanked like the rest). transitions' timer tests are left out too
# (`-k "not timeout"`: test_timeout, test_timeout_callbacks, test_timeout_transitioning,
# test_async_timeout, test_timeout_cancel, test_queued_timeout_cancel in each class that inherits
# them): each asserts that a 0.05-0.3 s timer has or has not fired after a sleep 0.05-0.1 s longer,
# so on a busy machine the reference itself fails them (test_timeout in a quiet three-worker test
# run, test_async_timeout at load 17) and the task is refused: they measure the machine's load,
# not the code written.
TRANSITIONS_MYPY = "tests/test_codestyle.py::TestCodeFormat::test_mypy_"
REPOS += (
    PinnedRepo("transitions", "transitions", "0.9.3",
               "881fb75bb1654ed55d86060bb067f2c716f8e155f57bb73fd444e53713aafec8", "transitions",
               f"tests --deselect {TRANSITIONS_MYPY}package --deselect {TRANSITIONS_MYPY}tests -k 'not timeout'",
               "LICENSE", "own",
               (("six==1.17.0", "4721f391ed90541fddacab5acf947aa0d3dc7d27b2e1e8eda2be8970586c3274"),
                ("mock==5.2.0", "7ba87f72ca0e915175596069dbbcc7c75af7b5e9b9bc107ad6349ede0819982f"),
                ("dill==0.4.1", "1e1ce33e978ae97fcfcff5638477032b801c46c7c65cf717f95fbc2248f79a9d"),
                ("pycodestyle==2.15.0", "12fd2f73c7b8ee8845a0431111df8faf4c1a07d6e64e2ee7f0c74014dab14181"))),
    PinnedRepo("pydash", "pydash", "8.1.0", "30914c3e9d377ea2cd0d3c0a4f252889b08392f730a5eb4d117e5b598cdf1d52",
               "pydash", "tests --ignore=tests/pytest_mypy_testing", "LICENSE.rst", "own",
               (("typing-extensions==4.16.0", "481caa481374e813c1b176ada14e97f1f67a4539ce9cfeb3f350d78d6370c2e8"),)),
    PinnedRepo("bleach", "bleach", "6.4.0", "4202482733d85cedd04e59fcb2f89f4e4c7c385a78d3c3c23c30446843a37452",
               "bleach", "tests", "LICENSE", "own",
               (("webencodings==0.6.1", "7fab6269c8bf237c657876b52058ccb182e861518d1c695c1a9aaa8c1c105d5b"),)),
)
REPO_BY_NAME = {r.name: r for r in REPOS}


@dataclass(frozen=True)
class UserSdist:
    """An sdist given to ``--repo`` as a user would: fetched pinned, never tuned on (issue 52)."""

    dist: str
    version: str
    file: str  # the sdist's file name as the registry serves it
    sha256: str
    layout: str  # what it exercises
    expect: str  # "runs", or the start of the one-line refusal it gets

    @property
    def path(self) -> Path:
        return cache_dir() / "sdists" / self.file


# Chosen on 2026-12-05 by what their sdists hold (a tests folder, their configuration), before any
# was given to agentbed; every one tried is listed in docs/cocoder.md with what happened.
USER_SDISTS: tuple[UserSdist, ...] = (
    UserSdist("isodate", "0.7.2", "isodate-0.7.2.tar.gz",
              "4cd1aa0f43ca76f4a6c6c0292a85f40b35ec2e43e315b59f06e6d32171a953e6",
              "src layout; pyproject and setup.cfg; filterwarnings = error", "runs"),
    UserSdist("itsdangerous", "2.2.0", "itsdangerous-2.2.0.tar.gz",
              "e0050c0b7da1eea53ffaf149c0cfbb5c6e2e2b69c4bef22c81fa6eb73e5f6173",
              "src layout; flit; requirements/tests.txt pins pytest 8.1.1 and freezegun; filterwarnings = error",
              "runs"),
    UserSdist("pathspec", "0.12.1", "pathspec-0.12.1.tar.gz",
              "a482d51503a1ab33b1c67a6c3813a26953dbdc71c31dacaef9a838c4e29f5712",
              "flat; setup.cfg and pyproject; unittest-style tests (tox runs unittest)", "runs"),
    UserSdist("colorama", "0.4.6", "colorama-0.4.6.tar.gz",
              "08695f5cb7ed6e0531a20572697297273c47b8cae5a63ffc6d6ed5c201be6e44",
              "tests inside the package (colorama/tests); hatch; no pytest configuration", "runs"),
    UserSdist("wcwidth", "0.2.13", "wcwidth-0.2.13.tar.gz",
              "72ea0c06399eb286d978fdedb6923a9eb47e1c486ce63e9b4e64fc18303972b5",
              "flat; tox.ini [pytest] with --color=yes, --cov and filterwarnings = error; requirements-tests36/37/39",
              "runs"),
    UserSdist("boltons", "24.1.0", "boltons-24.1.0.tar.gz",
              "4a49b7d57ee055b83a458c8682a2a6f199d263a8aa517098bda9bab813554b87",
              "flat; a conftest hook with pytest 8's `path` argument, no pytest pin; tox deps from a file the "
              "sdist lacks; doctests in its tox command",
              "Argument(s) {'path'} are declared in the hookimpl but can not be found in the hookspec"),
    UserSdist("jaraco.functools", "4.1.0", "jaraco_functools-4.1.0.tar.gz",
              "70f7e0e2ae076498e212562325e805204fc092d7b4c17e0e86c959e249701a9d",
              "a namespace package (jaraco/ without __init__.py); pytest.ini with --doctest-modules",
              "jaraco/ has packages but no __init__.py"),
    UserSdist("semver", "3.0.2", "semver-3.0.2.tar.gz",
              "6253adb39c70f6e51afed2fa7152bcd414c411286088fb4b9effb133885ab4cc",
              "src layout; setup.cfg; conftest fixtures for doctests; doctests in docs/ and testpaths",
              "so src/semver/ does not exist there"),
)
USER_SDIST_BY_NAME = {s.dist: s for s in USER_SDISTS}


def fetch_sdist(sdist: UserSdist, *, python: str = sys.executable) -> Path:
    """Download (if needed) one pinned user sdist and check its sha256; it stays packed (``--repo`` unpacks it)."""
    sdist.path.parent.mkdir(parents=True, exist_ok=True)
    if not sdist.path.is_file() or sha256_of(sdist.path) != sdist.sha256:
        cmd = [python, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
               f"{sdist.dist}=={sdist.version}", "-d", str(sdist.path.parent)]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0 or not sdist.path.is_file():
            raise FetchError(f"{sdist.dist}=={sdist.version}: pip download failed: {result.stderr.strip()[-300:]}")
    if (actual := sha256_of(sdist.path)) != sdist.sha256:
        raise FetchError(f"{sdist.path}: sha256 {actual} does not match the pinned {sdist.sha256}")
    return sdist.path


def cache_dir() -> Path:
    """Where sdists and unpacked repositories live (``AGENTBED_COCODER_CACHE`` overrides)."""
    return Path(os.environ.get("AGENTBED_COCODER_CACHE", PROJECT_ROOT / ".cache" / "cocoder"))


def repo_dir(repo: PinnedRepo) -> Path:
    return cache_dir() / "repos" / repo.folder


def package_base(repo: PinnedRepo) -> Path:
    """The folder holding the package: the unpacked sdist, or its ``src/``."""
    root = repo_dir(repo)
    return root / "src" if (root / "src" / repo.package).is_dir() else root


def is_fetched(repo: PinnedRepo) -> bool:
    return (package_base(repo) / repo.package / "__init__.py").is_file() and (repo_dir(repo) / ".verified").is_file()


def pinned_wheels(repo: PinnedRepo) -> list[Path]:
    """The repository's pinned test-dependency wheels, as fetched."""
    return [_wheel_path(requirement) for requirement, _ in repo.wheels]


def _wheel_path(requirement: str) -> Path:
    name, version = requirement.split("==")
    found = sorted((cache_dir() / "wheels" / "pinned").glob(f"{name.replace('-', '_')}-{version}-*.whl"))
    return found[0] if found else cache_dir() / "wheels" / "pinned" / f"{requirement}.missing"


def fetch_wheel(requirement: str, sha256: str, *, python: str = sys.executable) -> Path:
    """Download one pinned wheel (no dependencies: every one is pinned) and check its sha256."""
    path = _wheel_path(requirement)
    if not path.is_file() or sha256_of(path) != sha256:
        cmd = [python, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:", requirement,
               "-d", str(path.parent)]
        result = subprocess.run(cmd, capture_output=True, text=True)
        path = _wheel_path(requirement)
        if result.returncode != 0 or not path.is_file():
            raise FetchError(f"{requirement}: pip download failed: {result.stderr.strip()[-300:]}")
    if (actual := sha256_of(path)) != sha256:
        raise FetchError(f"{path}: sha256 {actual} does not match the pinned {sha256}")
    return path


def fetched_repos() -> list[PinnedRepo]:
    return [r for r in REPOS if is_fetched(r)]


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


class FetchError(RuntimeError):
    """A download failed or a file does not match its pinned sha256."""


def fetch(repo: PinnedRepo, *, python: str = sys.executable) -> Path:
    """Download (if needed), verify and unpack one repository; return its folder."""
    sdists = cache_dir() / "sdists"
    sdists.mkdir(parents=True, exist_ok=True)
    archive = sdists / repo.sdist_name
    if not archive.exists() or sha256_of(archive) != repo.sha256:
        cmd = [python, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
               f"{repo.dist}=={repo.version}", "-d", str(sdists)]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0 or not archive.exists():
            raise FetchError(f"{repo.dist}=={repo.version}: pip download failed: {result.stderr.strip()[-300:]}")
    actual = sha256_of(archive)
    if actual != repo.sha256:
        raise FetchError(f"{archive}: sha256 {actual} does not match the pinned {repo.sha256}")
    target = repo_dir(repo)
    if target.exists():
        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive) as tar:
        tar.extractall(target.parent, filter="data")
    if not (target / repo.license).is_file():
        raise FetchError(f"{target}: license file {repo.license} missing from the sdist")
    for requirement, digest in repo.wheels:
        fetch_wheel(requirement, digest, python=python)
    (target / ".verified").write_text(repo.sha256 + "\n", encoding="utf-8")
    return target
