"""Workload verbs (the ``agentbed.commands`` entry points), loaded only when they run; built-in
verbs use the same placeholders (``agentbed.cli.BUILTIN_VERBS``).

Loading a workload's verb imports the workload (scipy, scikit-learn, networkx: seconds). The
top-level ``agentbed --help`` only needs each verb's name and one-line help, so it reads the help
from the verb's module source with :mod:`ast`, without running it: the ``help=`` of the
``add_parser`` call that names the verb, else the module docstring's first line. The verb about to
run is the only one loaded.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
from functools import lru_cache
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

from agentbed.errors import UsageError
from agentbed.pyparse import parse_python

GROUP = "agentbed.commands"


def plugin_verbs() -> list[EntryPoint]:
    return sorted(entry_points(group=GROUP), key=lambda e: e.name)


def add_plugin_verbs(sub: argparse._SubParsersAction, verb: str | None, *, every_verb: bool = False) -> None:
    """Register the verb about to run for real (when it is a plugin's) and every other plugin
    verb as a placeholder that shows its help in ``agentbed --help`` (all for real: ``every_verb``)."""
    for ep in plugin_verbs():
        if ep.name in sub.choices:
            continue
        if ep.name == verb or every_verb:
            load_verb(sub, ep)
        else:
            add_placeholder(sub, ep.name, ep.module)


def add_placeholder(sub: argparse._SubParsersAction, name: str, module: str) -> None:
    """``name`` as a verb that only shows its help (``module``'s, read without importing it)."""
    sub.add_parser(name, help=verb_help(name, module), add_help=False).set_defaults(func=_load_first(name))


def load_verb(sub: argparse._SubParsersAction, ep: EntryPoint) -> None:
    try:
        ep.load()(sub)
    except Exception as exc:  # noqa: BLE001 - a broken plugin must not break the CLI
        broken = sub.add_parser(ep.name, help=f"(unavailable: {type(exc).__name__}: {exc})")
        broken.set_defaults(func=_unavailable(ep.name, exc))


def verb_help(name: str, module: str) -> str:
    """The verb's one-line help, read from its module's source; "" when the source cannot be read."""
    try:
        path = module_file(module)
        stat = path.stat() if path else None
    except (ImportError, OSError, ValueError):
        return ""
    if path is None or stat is None:
        return ""
    helps, docstring = _helps_in_source(str(path), stat.st_mtime_ns, stat.st_size)
    return helps.get(name, docstring)


@lru_cache(maxsize=64)
def _helps_in_source(path: str, mtime_ns: int, size: int) -> tuple[dict[str, str], str]:
    """Each ``add_parser("verb", help=...)``'s help in a module's source, and its docstring's first
    line; ``mtime_ns`` and ``size`` only key the cache. One parse per file version: a module holds
    several verbs, and each ``main()`` builds the whole parser, so a process that calls it often
    (the tests: thousands of in-process calls) would otherwise parse every verb's module each time."""
    try:
        tree = parse_python(Path(path).read_text(encoding="utf-8"), path)
    except (OSError, SyntaxError, ValueError):
        return {}, ""
    helps: dict[str, str] = {}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_parser"
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            for keyword in node.keywords:
                if keyword.arg == "help" and isinstance(keyword.value, ast.Constant):
                    helps.setdefault(str(node.args[0].value), str(keyword.value.value))
    doc = (ast.get_docstring(tree) or "").strip()
    return helps, doc.splitlines()[0] if doc else ""


def module_file(module: str) -> Path | None:
    """Where a module's source is, found without importing it or its packages (``find_spec`` of a
    dotted name would run the packages' ``__init__``)."""
    top, *rest = module.split(".")
    spec = importlib.util.find_spec(top)
    if spec is None:
        return None
    roots = [Path(p) for p in spec.submodule_search_locations or []] or ([Path(spec.origin).parent] if spec.origin
                                                                          else [])
    for root in roots:
        for candidate in (root.joinpath(*rest).with_suffix(".py"), root.joinpath(*rest, "__init__.py")):
            if rest and candidate.is_file():
                return candidate
    return Path(spec.origin) if not rest and spec.origin else None


def _load_first(name: str):  # noqa: ANN202
    def handler(args: argparse.Namespace) -> int:  # only reached if main picked the wrong verb
        raise UsageError(f"command {name!r} was not loaded; run it as: agentbed {name} ...")

    return handler


def _unavailable(name: str, exc: Exception):  # noqa: ANN202
    def handler(args: argparse.Namespace) -> int:
        raise UsageError(f"command {name!r} is unavailable: {type(exc).__name__}: {exc}")

    return handler
