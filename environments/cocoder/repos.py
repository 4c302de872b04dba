"""The real repositories CoCoder tasks are made from: pinned source distributions.

They are fetched at set-up by ``scripts/fetch-repos`` (``pip download --no-deps --no-binary
:all:``), checked against the sha256 pinned here, and unpacked with their licenses into
``.cache/cocoder/repos/`` (git-ignored): no third-party code is committed to this repository.
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
REPO_BY_NAME = {r.name: r for r in REPOS}


def cache_dir() -> Path:
    """Where sdists and unpacked repositories live (``AGENTBED_COCODER_CACHE`` overrides)."""
    return Path(os.environ.get("AGENTBED_COCODER_CACHE", PROJECT_ROOT / ".cache" / "cocoder"))


def repo_dir(repo: PinnedRepo) -> Path:
    return cache_dir() / "repos" / repo.folder


def is_fetched(repo: PinnedRepo) -> bool:
    return (repo_dir(repo) / repo.package / "__init__.py").is_file() and (repo_dir(repo) / ".verified").is_file()


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
    (target / ".verified").write_text(repo.sha256 + "\n", encoding="utf-8")
    return target
