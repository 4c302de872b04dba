"""A repository's pytest configuration, read as pytest reads it, for the sandbox's runs.

pytest takes its settings from the first of ``pytest.ini``, ``.pytest.ini``, ``pytest.toml``,
``.pytest.toml``, ``pyproject.toml`` (``[tool.pytest.ini_options]`` or ``[tool.pytest]``),
``tox.ini`` (``[pytest]``) and ``setup.cfg`` (``[tool:pytest]``) in the rootdir that has a pytest
section (pytest's "Configuration file formats"). The whole repository is copied into the
task's tree, so ``python_files``, ``markers``, conftest files and the rest apply in the sandbox
by themselves; what this module decides is which paths the run names (``testpaths``, the
repository's own choice, instead of a guessed ``tests/``) and which ``addopts`` it keeps: options
of plugins the sandbox does not get (coverage, xdist, benchmark, linters as tests: the tooling
the test dependencies leave out) would stop pytest with "unrecognized arguments", so they are
dropped and named in the task's notes.

Doctests count as reference tests where the repository's own configuration runs them: pytest's
``--doctest-modules`` in its addopts (then the package is among the paths, as a bare ``pytest``
in the rootdir would collect it) or in the pytest command of its tox environment
(``pytest --doctest-modules pkg tests``: that command's paths and options), see :func:`tox_pytest`.
Text doctests likewise: ``--doctest-glob='*.rst'`` in the tox command (its paths and that option)
or in addopts without ``testpaths`` (a bare ``pytest`` collects every matching file below the
rootdir, so those files are named; with ``testpaths`` the option, kept, finds them there).
"""

from __future__ import annotations

import configparser
import fnmatch
import os
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentbed.errors import UsageError

# options (and, for the ones that take one, whether a value follows as the next word) of plugins
# left out as tooling (environments.cocoder.userrepo.TOOLING)
_TOOLING_OPTIONS = {"--cov": False, "--cov-report": True, "--cov-config": True, "--cov-fail-under": True,
                    "--cov-append": False, "--cov-branch": False, "--no-cov": False, "--no-cov-on-fail": False,
                    "--cov-context": True, "-n": True, "--numprocesses": True, "--dist": True,
                    "--maxprocesses": True, "--max-worker-restart": True, "--benchmark-skip": False,
                    "--benchmark-disable": False, "--benchmark-only": False, "--mypy": False, "--flake8": False,
                    "--black": False, "--isort": False, "--ruff": False, "--ruff-format": False,
                    "--pylint": False, "--codestyle": False, "--pycodestyle": False, "--doctest-cython": False}
_TOOLING_PLUGINS = {"pytest_cov", "xdist", "xdist.looponfail", "pytest_benchmark", "pytest_mypy"}


@dataclass(frozen=True)
class PytestConfig:
    source: str  # the file the settings come from ('' when the repository has none)
    testpaths: tuple[str, ...]
    addopts: str  # as written
    kept_addopts: str  # what the sandbox's runs pass (tooling plugins' options left out)
    dropped: tuple[str, ...]


def _ini_section(path: Path, section: str) -> dict[str, str] | None:
    cfg = configparser.ConfigParser(interpolation=None)
    try:
        cfg.read(path, encoding="utf-8")
    except configparser.Error as exc:
        raise UsageError(f"{path}: {exc}".replace("\n", " ")) from exc
    return dict(cfg.items(section)) if cfg.has_section(section) else None


def _toml_table(path: Path, *keys: str) -> dict | None:
    try:
        data: Any = tomllib.loads(path.read_text(encoding="utf-8"))  # narrowed key by key below
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{path}: {exc}") from exc
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else None


def _words(value: object) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    return shlex.split(str(value or ""))


def raw_settings(root: Path) -> tuple[str, dict]:
    """(file name, pytest settings) from the first configuration file pytest would use."""
    candidates = [("pytest.ini", "pytest"), (".pytest.ini", "pytest"), ("pytest.toml", "pytest"),
                  (".pytest.toml", "pytest"), ("pyproject.toml", None), ("tox.ini", "pytest"),
                  ("setup.cfg", "tool:pytest")]
    for name, section in candidates:
        path = root / name
        if not path.is_file():
            continue
        if name.startswith(("pytest", ".pytest")):  # these win even when empty
            table = (_toml_table(path, "pytest") if name.endswith(".toml") else _ini_section(path, "pytest"))
            return name, table or {}
        if name == "pyproject.toml":
            table = _toml_table(path, "tool", "pytest", "ini_options")
            native = _toml_table(path, "tool", "pytest")
            if table is None and native:
                table = {k: v for k, v in native.items() if k != "ini_options"}
        else:
            table = _ini_section(path, section or "")
        if table is not None:
            return name, table
    return "", {}


def split_addopts(words: list[str], benchmark: bool = False) -> tuple[list[str], list[str]]:
    """(kept, dropped): the options of plugins the sandbox does not get are dropped (pytest-benchmark's
    kept with ``benchmark``: the sandbox gets it when tests take its fixture)."""
    kept, dropped = [], []
    i = 0
    while i < len(words):
        word = words[i]
        flag, has_value = word.split("=", 1)[0], "=" in word
        short = flag[:2] if flag.startswith("-n") and not flag.startswith("--") else flag
        if benchmark and (flag.startswith("--benchmark") or (word == "-p" and words[i + 1:i + 2] == ["pytest_benchmark"])):
            kept += words[i:i + 1 + (word == "-p")]
            i += 1 + (word == "-p")
            continue
        if short in _TOOLING_OPTIONS or flag.startswith(("--cov", "--benchmark")):
            takes = _TOOLING_OPTIONS.get(short, False) and not has_value and not (short == "-n" and len(flag) > 2)
            dropped += words[i:i + 1 + takes]
            i += 1 + takes
            continue
        if word == "-p" and i + 1 < len(words) and words[i + 1] in _TOOLING_PLUGINS:
            dropped += words[i:i + 2]
            i += 2
            continue
        kept.append(word)
        i += 1
    return kept, dropped


def read_config(root: Path, benchmark: bool = False) -> PytestConfig:
    source, settings = raw_settings(root)
    testpaths = tuple(_words(settings.get("testpaths", "")))
    addopts = _words(settings.get("addopts", ""))
    kept, dropped = split_addopts(addopts, benchmark)
    return PytestConfig(source, testpaths, shlex.join(addopts), shlex.join(kept), tuple(dropped))


_PYTEST = ("pytest", "py.test")


def tox_pytest(root: Path) -> list[str] | None:
    """The arguments of the pytest command in ``tox.ini``'s ``[testenv]`` (or the first
    ``[testenv:...]`` that runs pytest), ``{posargs}`` and other substitutions left out; None when
    tox runs no pytest. ``python -m pytest`` and ``coverage run -m pytest`` count."""
    path = root / "tox.ini"
    if not path.is_file():
        return None
    cfg = configparser.ConfigParser(interpolation=None)
    try:
        cfg.read(path, encoding="utf-8")
    except configparser.Error as exc:
        raise UsageError(f"{path}: {exc}".replace("\n", " ")) from exc
    sections = ["testenv"] * cfg.has_section("testenv") + [s for s in cfg.sections() if s.startswith("testenv:")]
    for section in sections:
        for line in cfg.get(section, "commands", fallback="").replace("\\\n", " ").splitlines():
            try:
                words = shlex.split(line.strip().lstrip("-").strip())
            except ValueError:
                continue
            for i, word in enumerate(words):
                if Path(word).name in _PYTEST or (word == "pytest" and i and words[i - 1] == "-m"):
                    return [w for w in words[i + 1:] if not set(w) & set("{}")]  # tox's substitutions
    return None


def doctest_globs(words: list[str]) -> list[str]:
    """The patterns of ``--doctest-glob`` options (``--doctest-glob=X`` or ``--doctest-glob X``)."""
    globs = [w.split("=", 1)[1] for w in words if w.startswith("--doctest-glob=")]
    return globs + [words[i + 1] for i, w in enumerate(words[:-1]) if w == "--doctest-glob"]


_NORECURSE = ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}")  # pytest's default


def glob_files(root: Path, globs: list[str], inside: list[str]) -> list[str]:
    """Files below ``root`` whose names match one of ``globs``, as a bare ``pytest`` in the rootdir
    would collect them (pytest's default ``norecursedirs`` skipped; ``src/`` moved up), but for
    those under a path of ``inside`` (collected there already)."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not any(fnmatch.fnmatch(d, n) for n in _NORECURSE))
        for name in sorted(files):
            rel = str((Path(folder) / name).relative_to(root)).removeprefix("src/")
            if any(fnmatch.fnmatch(name, g) for g in globs) and not any(
                    rel == p or rel.startswith(p.rstrip("/") + "/") for p in inside):
                found.append(rel)
    return found


def doctest_paths(root: Path, package: str, config: PytestConfig, testpaths: list[str]) -> tuple[list[str], str]:
    """(the paths, extra options) that make the run collect the doctests the repository's own
    configuration runs; ``([], "")`` when it runs none. ``testpaths``: the paths found so far."""
    tox = tox_pytest(root) or []
    globs = doctest_globs(tox)
    if "--doctest-modules" in tox or globs:
        named = [w.removeprefix("src/").rstrip("/") for w in tox if not w.startswith("-") and w not in globs and
                 ((root / w).exists() or (root / "src" / w).exists())]
        default = [*testpaths, package] if "--doctest-modules" in tox else [*testpaths, *glob_files(root, globs, testpaths)]
        options = ["--doctest-modules"] * ("--doctest-modules" in tox) + [f"--doctest-glob={g}" for g in globs]
        return named or default, shlex.join(options)
    kept = shlex.split(config.kept_addopts)
    if config.testpaths:
        return [], ""
    extra = [package] * ("--doctest-modules" in kept) + glob_files(root, doctest_globs(kept), testpaths)
    return ([*testpaths, *extra], "") if extra else ([], "")  # what a bare pytest in the rootdir collects too


def run_arguments(paths: list[str], config: PytestConfig) -> str:
    """The ``tests`` string of a task (what the sandbox's pytest is given after its own options):
    the paths, then the repository's addopts as kept (``-o addopts=...`` replaces the file's)."""
    return shlex.join([*paths, "-o", f"addopts={config.kept_addopts}"])
