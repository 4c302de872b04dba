"""Test dependencies for the sandbox: wheels fetched on the host, unpacked into the task's tree.

The sandbox has no network, so a repository's requirements are downloaded here once, at
preparation (``pip download``), as wheels for the sandbox's own interpreter: its tags are asked
of the sandbox (``packaging.tags.sys_tags`` there), so a compiled dependency comes as the
manylinux wheel built for that CPython and platform, a pure one as ``py3-none-any``. Each wheel's
sha256 is recorded when it is fetched (pip checks it against the index's) and checked again
before it is unpacked. Installing a wheel is unpacking it (PEP 427: its files are laid out for
``site-packages``; a ``.data/purelib`` or ``platlib`` folder is moved beside them), so nothing is
built: a dependency with no wheel for the sandbox is refused, by name.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from agentbed.errors import UsageError
from environments.cocoder.repos import cache_dir, sha256_of
from environments.cocoder.sandboxed import SITE_DIR, current_backend, sandbox_exec

# what the sandbox image already has (docker/requirements.txt, name -> version): fetched only when
# the repository asks for another version (``pytest==8.3.4``), which then shadows the image's
# (tests/cocoder/test_test_environment.py keeps this in step with the image's pins)
PROVIDED = {"pytest": "9.2.0", "pluggy": "1.7.0", "iniconfig": "2.3.1", "packaging": "26.4", "pygments": "2.21.0",
            "pytest-timeout": "2.4.0"}


def provided_satisfies(requirement: str) -> bool | None:
    """Whether the sandbox's own copy of the package ``requirement`` names satisfies it (None: the
    sandbox does not provide that package)."""
    from packaging.requirements import Requirement

    req = Requirement(requirement)
    version = PROVIDED.get(req.name.lower().replace("_", "-"))
    return None if version is None else req.specifier.contains(version, prereleases=True)
LOCK_FILE = ".complete"  # in a fetched set's folder: "sha256  file" per wheel
_TAGS_PROBE = ("import json, sys\nfrom packaging.tags import sys_tags\n"
               "print(json.dumps({'python': '%d.%d' % sys.version_info[:2], 'tags': [str(t) for t in sys_tags()]}))\n")


def sandbox_tags() -> dict:
    """The sandbox interpreter's version and wheel tags, most specific first (asked of the sandbox
    once per backend, then cached)."""
    path = cache_dir() / f"sandbox-tags-{current_backend()}.json"
    if path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="cocoder-tags-") as tmp:
        probe = Path(tmp) / "_cocoder_tags"
        probe.mkdir()
        (probe / "__init__.py").write_text("", encoding="utf-8")
        (probe / "__main__.py").write_text(_TAGS_PROBE, encoding="utf-8")
        outcome = sandbox_exec(Path(tmp), ["_cocoder_tags"], timeout=60)
    if outcome.status != "ok":
        raise UsageError(f"asking the sandbox for its wheel tags failed: {outcome.stderr.strip()[-200:]}")
    found = json.loads(outcome.stdout.strip().splitlines()[-1])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(found), encoding="utf-8")
    return found


def pip_target_options(tags: dict) -> list[str]:
    """``pip download`` options that select wheels for exactly these tags (every ABI and platform
    the sandbox accepts; pure wheels are ``none``/``any``)."""
    interpreters, abis, platforms = (sorted({t.split("-")[i] for t in tags["tags"]}) for i in range(3))
    implementation = "cp" if any(i.startswith("cp") for i in interpreters) else "py"
    options = ["--only-binary", ":all:", "--python-version", tags["python"], "--implementation", implementation]
    for abi in abis:
        options += ["--abi", abi]
    for platform in platforms:
        options += ["--platform", platform]
    return options


def fits(wheel: Path, tags: dict) -> bool:
    """Whether the sandbox can import ``wheel``: one of its tags (PEP 425, from the file name) is
    one of the sandbox's."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    try:
        _, _, _, wheel_tags = parse_wheel_filename(wheel.name)
    except InvalidWheelFilename:
        return False
    return bool({str(t) for t in wheel_tags} & set(tags["tags"]))


def fetch_wheels(requirements: tuple[str, ...], *, python: str = sys.executable) -> list[Path]:
    """Wheels of ``requirements`` and their dependencies for the sandbox's interpreter, fetched
    on the host into the cache once per requirement set, each sha256 recorded."""
    if not requirements:
        return []
    tags = sandbox_tags()
    key = hashlib.sha256(("\n".join(tags["tags"]) + "\n" + "\n".join(requirements)).encode()).hexdigest()[:16]
    target = cache_dir() / "wheels" / key
    lock = target / LOCK_FILE
    if not lock.is_file():
        target.mkdir(parents=True, exist_ok=True)
        cmd = [python, "-m", "pip", "download", *pip_target_options(tags), "-d", str(target), *requirements]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            output = result.stdout + "\n" + result.stderr
            raise NoWheelError(download_failure(requirements, output, tags), _culprit(requirements, output))
        lines = [f"{sha256_of(w)}  {w.name}" for w in sorted(target.glob("*.whl"))]
        lock.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return checked_wheels(target)


class NoWheelError(UsageError):
    """pip could not fetch the set; ``requirement`` is the one of the set to blame (or '')."""

    def __init__(self, message: str, requirement: str = "") -> None:
        super().__init__(message)
        self.requirement = requirement


def _culprit(requirements: tuple[str, ...], output: str) -> str:
    """The requirement of ``requirements`` whose wheel (or whose dependency's) pip found none of:
    pip names the missing one (``untokenize<0.2.0,>=0.1.1 (from docformatter)``: a dependency of
    docformatter) or, after a conflict, the dependency chain (``jinja2 3.1.6 depends on ...``)."""
    def name(text: str) -> str:
        found = re.match(r"[A-Za-z0-9._-]+", text.strip())
        return found.group(0).lower().replace("_", "-") if found else ""

    lines = output.splitlines()
    needed = [m.group(1).split()[0] for m in map(_DEPENDS_ON.match, lines) if m]
    missing = [ln.rsplit(" for ", 1)[-1].strip() for ln in lines if "No matching distribution found for" in ln]
    parents = [m.group(1) for m in (re.search(r"\(from ([^)]+)\)\s*$", x) for x in missing) if m]
    for wanted in needed[:1] + parents[-1:] + missing[-1:]:
        for req in requirements:
            if name(req) == name(wanted):
                return req
    return ""


def fetch_available(requirements: tuple[str, ...], *, attempts: int = 8) -> tuple[list[Path], tuple[str, ...]]:
    """The wheels of every requirement the sandbox can get, and the ones it cannot, each named with
    pip's reason: a declared requirement with no wheel for the sandbox (a linter published as an
    sdist only: wcwidth's restructuredtext-lint) is left out, so that the tests show whether it
    mattered, instead of refusing the repository for it."""
    wanted, unmet = list(requirements), list[str]()
    for _ in range(attempts):
        try:
            return fetch_wheels(tuple(wanted)), tuple(unmet)
        except NoWheelError as exc:
            if exc.requirement not in wanted:
                raise
            wanted.remove(exc.requirement)
            unmet.append(f"{exc.requirement} ({str(exc).split(' to fetch', 1)[0]})")
    raise UsageError(f"fetching the test dependencies: more than {attempts} have no wheel for the sandbox: "
                     + "; ".join(unmet))


def checked_wheels(folder: Path) -> list[Path]:
    """The wheels a fetched set recorded, each checked against its recorded sha256."""
    wheels = []
    for line in (folder / LOCK_FILE).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        digest, name = line.split(None, 1)
        path = folder / name
        if not path.is_file() or sha256_of(path) != digest:
            raise UsageError(f"{path}: missing or its sha256 differs from the one recorded when it was fetched "
                             f"({digest}); delete {folder} to fetch it again")
        wheels.append(path)
    return wheels


def _sandbox_words(tags: dict | None) -> str:
    if not tags:
        return "the sandbox"
    platform = next((t.split("-")[2] for t in tags["tags"] if "manylinux" in t), "any")
    return f"the sandbox's CPython {tags['python']} ({platform}) or pure Python"


def download_failure(requirements: tuple[str, ...], output: str, tags: dict | None = None) -> str:
    """pip's refusal on one line; the requirement with no wheel it could take is named (pip names
    a missing top-level one, and a dependency's under "The conflict is caused by")."""
    lines = output.strip().splitlines()
    errors = [ln for ln in lines if ln.startswith("ERROR")] or ["pip failed"]
    missing = [ln.rsplit(" for ", 1)[-1].strip() for ln in errors if "No matching distribution found for" in ln]
    needed = [m.groups() for m in map(_DEPENDS_ON.match, lines) if m]
    if needed:  # a dependency of a dependency, e.g. a package that publishes only an sdist
        missing = [f"{needed[0][1]}"]
        requirements = (f"{needed[0][0]} of {', '.join(requirements)}",)
    if missing:
        return (f"test dependency {missing[-1]!r} has no wheel for {_sandbox_words(tags)} to fetch: --repo "
                "unpacks wheels into the sandbox, it cannot build an sdist (or the name is unknown to the package "
                f"index); required by {', '.join(requirements)}")
    return f"fetching the test dependencies ({', '.join(requirements)}) failed: {errors[-1]}"


_DEPENDS_ON = re.compile(r"^\s+(\S+ \S+) depends on (.+?)\s*$")


def install_wheels(wheels: list[Path], tree: Path, tags: dict | None = None) -> list[str]:
    """Unpack ``wheels`` into the tree's site folder; the ones the sandbox already provides are
    left out, one the sandbox cannot import (``tags``: its tags; default: pure wheels only) is
    refused by name. Returns the wheels installed."""
    site = tree / SITE_DIR
    if site.exists():
        shutil.rmtree(site)
    installed = []
    for wheel in wheels:
        dist, version = (part.lower().replace("_", "-") for part in wheel.name.split("-")[:2])
        if PROVIDED.get(dist) == version:  # the image's own copy
            continue
        if not (fits(wheel, tags) if tags else wheel.name.removesuffix(".whl").endswith("-none-any")):
            raise UsageError(f"test dependency {dist!r} has no wheel for {_sandbox_words(tags)} ({wheel.name}): the "
                             "sandbox unpacks wheels, it cannot build or import this one")
        site.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(wheel) as zf:
            zf.extractall(site)
        for data in site.glob("*.data"):  # PEP 427: purelib/platlib belong in site-packages itself
            for scheme in ("purelib", "platlib"):
                if (data / scheme).is_dir():
                    shutil.copytree(data / scheme, site, dirs_exist_ok=True)
            shutil.rmtree(data)
        installed.append(wheel.name)
    return installed
