"""The package under test, installed in the sandbox the way pip leaves it: its metadata.

A repository's tests often ask about the package itself: ``importlib.metadata.version("pkg")``,
its entry points, ``__version__`` read from the metadata at import. The code is already importable
(the tree is first on ``sys.path``), so what a real install adds is a ``NAME-VERSION.dist-info``
folder (the wheel format, PEP 427 and the core metadata of PEP 566) in the tree's site folder,
which ``importlib.metadata`` finds on ``sys.path``. It is written here from the repository's own
static metadata, offline, without running a build backend: an sdist's ``PKG-INFO`` and
``*.egg-info/entry_points.txt``, pyproject's ``[project]`` (name, version, scripts, entry points),
setup.cfg's ``[metadata]`` and ``[options.entry_points]``; a version left to the build
(``dynamic``, ``attr:``, a VCS plugin) is the package's literal ``__version__`` when it has one,
else ``0+unknown``.
"""

from __future__ import annotations

import ast
import configparser
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from environments.cocoder.facts import parse
from environments.cocoder.sandboxed import SITE_DIR

UNKNOWN_VERSION = "0+unknown"


@dataclass(frozen=True)
class PackageMetadata:
    name: str  # the distribution name, as declared
    version: str
    metadata: str  # the METADATA file's text (core metadata)
    entry_points: str  # entry_points.txt (INI), may be empty

    @property
    def dist_info(self) -> str:
        return f"{re.sub(r'[-_.]+', '_', self.name)}-{self.version}.dist-info"


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""


def _header(text: str, field: str) -> str:
    for line in text.splitlines():
        if not line.strip():
            break  # the headers end at the first blank line (the description follows)
        if line.lower().startswith(field.lower() + ":"):
            return line.split(":", 1)[1].strip()
    return ""


def literal_version(package_dir: Path) -> str:
    """The package's ``__version__ = "..."`` (a string literal in ``__init__.py`` or a
    ``_version.py``/``version.py`` beside it), or ''."""
    for name in ("__init__.py", "_version.py", "version.py", "__version__.py", "__about__.py"):
        source = _read(package_dir / name)
        if "version" not in source:
            continue
        try:
            tree = parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) \
                    and isinstance(node.value.value, str) \
                    and any(isinstance(t, ast.Name) and t.id in ("__version__", "version", "VERSION")
                            for t in node.targets):
                return node.value.value
    return ""


def _entry_points_ini(groups: dict[str, dict[str, str]]) -> str:
    out = []
    for group, entries in groups.items():
        if entries:
            out.append(f"[{group}]")
            out += [f"{name} = {target}" for name, target in entries.items()]
            out.append("")
    return "\n".join(out)


def _pyproject_entry_points(project: dict) -> dict[str, dict[str, str]]:
    groups = {"console_scripts": dict(project.get("scripts", {})), "gui_scripts": dict(project.get("gui-scripts", {}))}
    for group, entries in project.get("entry-points", {}).items():
        groups[group] = dict(entries)
    return groups


def _setup_cfg_entry_points(cfg: configparser.ConfigParser) -> dict[str, dict[str, str]]:
    groups: dict[str, dict[str, str]] = {}
    if cfg.has_section("options.entry_points"):
        for group, text in cfg.items("options.entry_points"):
            entries = [ln.split("=", 1) for ln in text.splitlines() if "=" in ln]
            groups[group] = {k.strip(): v.strip() for k, v in entries}
    return groups


def package_metadata(root: Path, package: str, package_dir: Path) -> PackageMetadata:
    """The metadata a ``pip install`` of the repository at ``root`` would record, from its static
    declarations (see the module docstring)."""
    pkg_info = _read(root / "PKG-INFO")
    name, version = _header(pkg_info, "Name"), _header(pkg_info, "Version")
    entry_points = ""
    for egg in sorted([*root.glob("*.egg-info"), *root.glob("src/*.egg-info")]):
        entry_points = entry_points or _read(egg / "entry_points.txt")
        pkg_info = pkg_info or _read(egg / "PKG-INFO")
    groups: dict[str, dict[str, str]] = {}
    try:
        project = tomllib.loads(_read(root / "pyproject.toml")).get("project", {})
    except tomllib.TOMLDecodeError:
        project = {}
    name = name or str(project.get("name", ""))
    if isinstance(project.get("version"), str):
        version = version or project["version"]
    groups.update(_pyproject_entry_points(project))
    cfg = configparser.ConfigParser(interpolation=None)
    try:
        cfg.read(root / "setup.cfg", encoding="utf-8")
    except configparser.Error:
        pass
    if cfg.has_section("metadata"):
        name = name or cfg.get("metadata", "name", fallback="")
        declared = cfg.get("metadata", "version", fallback="")
        if declared and not declared.startswith(("attr:", "file:")):
            version = version or declared
    for group, entries in _setup_cfg_entry_points(cfg).items():
        groups.setdefault(group, {}).update(entries)
    name = name or package
    version = version or literal_version(package_dir / package) or UNKNOWN_VERSION
    entry_points = entry_points or _entry_points_ini(groups)
    if not _header(pkg_info, "Metadata-Version"):
        pkg_info = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    return PackageMetadata(name, version, pkg_info, entry_points)


def install_metadata(tree: Path, meta: PackageMetadata, package: str) -> Path:
    """Write the package's ``.dist-info`` into the tree's site folder (the code stays where it
    is: the tree is on ``sys.path`` before the site folder). Returns the folder written."""
    folder = tree / SITE_DIR / meta.dist_info
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "METADATA").write_text(meta.metadata, encoding="utf-8")
    if meta.entry_points.strip():
        (folder / "entry_points.txt").write_text(meta.entry_points, encoding="utf-8")
    (folder / "top_level.txt").write_text(package + "\n", encoding="utf-8")
    (folder / "INSTALLER").write_text("agentbed\n", encoding="utf-8")
    files = sorted(p.relative_to(tree) for p in (tree / package).rglob("*.py"))
    record = [f"../{p.as_posix()},," for p in files] + [f"{meta.dist_info}/{n},," for n in ("METADATA", "RECORD")]
    (folder / "RECORD").write_text("\n".join(record) + "\n", encoding="utf-8")
    return folder
