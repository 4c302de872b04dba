"""What CoCoder reads of one Python file with ``ast``: its definitions (top-level names,
interfaces, the work estimate), its import statements (with whether each is function-local or
``TYPE_CHECKING``-only) and its call sites (every ``name.attr`` chain). grimp gives the module
import graph (``environments.cocoder.importgraph``), not these; ``depgraph`` combines them.

Each file's facts are computed once per content within the process (``parse_module``). A
package's module is read as its skeleton (``environments.cocoder.skeleton``: function bodies
blanked unless they import from the package) and its ``name.attr`` uses are scanned only when a
module imported whole asks for them; ``whole=True`` parses every line (a syntax error anywhere is
a one-line refusal), and so does anything the skeleton cannot vouch for.
"""

from __future__ import annotations

import ast
import gc
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from agentbed.errors import UsageError
from agentbed.pyparse import parse_python
from environments.cocoder import nativereader
from environments.cocoder.attributes import attribute_names
from environments.cocoder.skeleton import Unsure, check_defs, skeleton, triple_strings
from environments.cocoder.unparse import unparse, unparse_arguments

MAX_FILE_BYTES = 2_000_000  # a "giant file" beyond this is refused with a clear message


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse`` through :func:`agentbed.pyparse.parse_python` (one at a time, safe in threads:
    a team's agents run in threads), with too-deep code refused as :class:`TooDeep`."""
    try:
        return parse_python(source, filename)
    except (RecursionError, MemoryError) as exc:  # CPython's parser gives up on very deep nesting
        raise TooDeep(filename) from exc


class TooDeep(SyntaxError):
    """Code nested too deeply for CPython to parse or for our walks over its tree (a long chain of
    operators, thousands of ``elif``): refused like a syntax error, in one line."""

    def __init__(self, filename: str) -> None:
        super().__init__("code nested too deeply to parse")
        self.filename, self.lineno = filename, 1


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` at the usual ~4 characters per token of code."""
    return (len(text) + 3) // 4


@dataclass(frozen=True)
class ImportRef:
    """One import statement's effect: ``target`` module, imported ``names`` (empty for ``import m``)."""

    target: str
    names: tuple[str, ...]
    local: bool
    type_only: bool
    bound_as: str = ""  # for ``import a.b``: the dotted name code uses to reach the module


@dataclass
class ModuleFacts:
    name: str
    path: Path
    is_init: bool
    source: str
    defined: set[str] = field(default_factory=set)  # top-level names the module itself binds
    interfaces: dict[str, str] = field(default_factory=dict)  # top-level symbol -> its signature text
    work: int = 0
    imports: list[ImportRef] = field(default_factory=list)
    # dotted names like ``pkg.mod.func``; None until asked for, for a module read as its skeleton
    attribute_uses: set[str] | None = field(default_factory=set)
    whole: bool = True  # parsed line by line, bodies included
    strings: list[tuple[int, int]] | None = None  # the triple-quoted strings, for a skeleton's scans

    # bound -> names_used_from(bound): a module that imports one module in many functions asks often
    _used: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False, compare=False)

    def names_used_from(self, bound: str) -> tuple[str, ...]:
        """The names ``X`` of every ``bound.X`` in the module (sorted): what it takes from a
        module it imported whole as ``bound``."""
        found = self._used.get(bound)
        if found is None:
            found = self._used[bound] = self._names_used_from(bound)
        return found

    def _names_used_from(self, bound: str) -> tuple[str, ...]:
        if self.attribute_uses is None:
            try:
                return tuple(sorted(attribute_names(self.source, bound, self.strings)))
            except Unsure:  # a use in an f-string: the parser's reading, once per module
                self.attribute_uses = _dotted_uses(_parse_or_refuse(self.source, self.path))
        prefix = bound + "."
        return tuple(sorted({u[len(prefix):].split(".")[0] for u in self.attribute_uses if u.startswith(prefix)}))


# -- discovery ---------------------------------------------------------------------------------
_FACTS: OrderedDict[tuple[str, str, bytes], ModuleFacts] = OrderedDict()  # least recently used first
_FACTS_LOCK = threading.Lock()
FACTS_CACHE_BYTES = 64_000_000  # of source text kept parsed: a run's repositories, several times over
_facts_bytes = 0


def parse_module(name: str, path: Path, *, whole: bool = False) -> ModuleFacts:
    """Parse one file; syntax errors and giant files become a one-line UsageError.

    ``name`` is the module's dotted name: its first part is the package whose imports count (a
    body that imports from it is read; ``whole`` reads every body and refuses a syntax error in
    any of them). Parsed once per content within the process: a run builds its graph and the
    skeleton's view of it, and every repair asks which modules a test uses, all from the same
    files. The key is the file's bytes (a digest), not its time stamp, so a file rewritten within
    one clock tick is parsed again; facts parsed whole serve both kinds of request. The facts
    returned are shared: callers read them, never change them."""
    global _facts_bytes
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise UsageError(f"{path}: {size} bytes is larger than the {MAX_FILE_BYTES}-byte limit for one module")
    raw = path.read_bytes()
    key = (name, str(path), hashlib.blake2b(raw, digest_size=16).digest())
    with _FACTS_LOCK:
        if key in _FACTS and (_FACTS[key].whole or not whole):
            _FACTS.move_to_end(key)
            return _FACTS[key]
    facts = _parse_facts(name, path, raw, whole)
    with _FACTS_LOCK:
        old = _FACTS.get(key)
        if old is None or (facts.whole and not old.whole):
            _FACTS[key] = facts
            _facts_bytes += 0 if old is not None else len(raw)
        while _facts_bytes > FACTS_CACHE_BYTES and len(_FACTS) > 1:
            _, dropped = _FACTS.popitem(last=False)
            _facts_bytes -= len(dropped.source.encode("utf-8"))
    return _FACTS[key] if key in _FACTS else facts


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a package is parsed: parsing allocates a tree per
    file and the facts kept grow, so each collection walks more (an eighth of ray's build); the
    trees hold no cycles that outlive their file. Process-wide, so it is switched back on by the
    build that switched it off, whatever the other threads do meanwhile."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def forget_parsed() -> None:
    """Empty the per-process cache of parsed modules (a benchmark's cold start)."""
    global _facts_bytes
    with _FACTS_LOCK:
        _FACTS.clear()
        _facts_bytes = 0


def _parse_or_refuse(source: str, path: Path) -> ast.Module:
    try:
        return parse(source, filename=str(path))
    except SyntaxError as exc:
        raise UsageError(f"{path}:{exc.lineno}: syntax error: {exc.msg}") from exc


def _parse_facts(name: str, path: Path, raw: bytes, whole: bool) -> ModuleFacts:
    try:
        source = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text (byte {exc.start})") from exc
    tree, strings = None, None
    if not whole and _native_read is not None:
        reading = _native_read(raw)
        if type(reading) is tuple:
            return _native_facts(name, path, source, reading)
    if not whole:
        try:
            strings = triple_strings(source)
            text, def_lines = skeleton(source, name.split(".")[0], strings)
            tree = parse(text, filename=str(path))
            check_defs(tree, def_lines)
        except (Unsure, SyntaxError, ValueError):  # not vouched for, or cut wrong: read every line
            tree = None
    whole = tree is None
    if tree is None:
        tree = _parse_or_refuse(source, path)
    # the tree is not kept: facts are all that is needed, and 10,000 modules' trees are a lot of memory
    try:
        facts = ModuleFacts(name, path, path.name == "__init__.py", source, _defined_here(tree), whole=whole,
                            strings=None if whole else strings)
        facts.interfaces, facts.work = _interfaces_and_work(tree, source)
        facts.imports = list(_imports(tree, name, facts.is_init))
        facts.attribute_uses = _dotted_uses(tree) if whole else None
    except RecursionError as exc:  # parsed, but too deep for a recursive walk (ast.unparse, nested ifs)
        raise UsageError(f"{path}:1: syntax error: code nested too deeply to analyse") from exc
    return facts


_native_read = nativereader.read  # None when not built: every file is read with ast


def _native_facts(name: str, path: Path, source: str, reading: tuple) -> ModuleFacts:
    """The facts from the native reader's reading (``environments.cocoder.nativereader``): those
    of the whole-file parse, ``name.attr`` uses left to be scanned on demand as for a skeleton (in
    the triple-quoted strings the reader found: ``skeleton.triple_strings``'s)."""
    pairs, work, found, strings = reading
    is_init = path.name == "__init__.py"
    interfaces = dict(pairs)
    imports = []
    for level, module, names, bound, local, type_only in found:
        if names is None:
            imports.append(ImportRef(module, (), local, type_only, bound))
        elif base := _resolve_base(name, is_init, level, module):
            imports.append(ImportRef(base, names, local, type_only))
    return ModuleFacts(name, path, is_init, source, set(interfaces), interfaces, work, imports,
                       attribute_uses=None, whole=False, strings=strings)


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    returns = f" -> {unparse(node.returns)}" if node.returns else ""
    doc = ast.get_docstring(node)
    first = f'\n    """{doc.splitlines()[0]}"""' if doc else ""
    return f"{prefix} {node.name}({unparse_arguments(node.args)}){returns}: ...{first}"


def module_interfaces(source: str) -> dict[str, str]:
    """Top-level name -> its interface text (the graph's edge tokens are counted on these);
    nothing when ``source`` does not parse."""
    try:
        return _interfaces_and_work(parse(source), source)[0]
    except (SyntaxError, ValueError):  # ValueError: null bytes
        return {}


def _interfaces_and_work(tree: ast.Module, source: str) -> tuple[dict[str, str], int]:
    interfaces: dict[str, str] = {}
    work = 0
    lines = source.splitlines()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            interfaces[node.name] = _signature(node)
            work += 1
        elif isinstance(node, ast.ClassDef):
            bases = ", ".join(unparse(b) for b in node.bases)
            methods = [n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
            body = "\n".join("    " + _signature(m).replace("\n", "\n    ") for m in methods)
            interfaces[node.name] = f"class {node.name}({bases}):\n{body or '    ...'}"
            work += 2 + len(methods)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        interfaces[name.id] = "\n".join(lines[node.lineno - 1:node.end_lineno])[:200]
                        work += 1
    return interfaces, work


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _resolve_base(module: str, is_init: bool, level: int, dotted: str | None) -> str:
    if level == 0:
        return dotted or ""
    parts = module.split(".")
    package = parts if is_init else parts[:-1]
    if level - 1 > len(package) - 1:
        return ""  # a relative import beyond the top-level package: nothing internal
    base = package[: len(package) - (level - 1)]
    return ".".join(base + ([dotted] if dotted else []))


_STATEMENT_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


_BODIES_OF: dict[type, tuple[str, ...]] = {}  # statement type -> which of _STATEMENT_FIELDS it has
_NESTED = (ast.stmt, ast.ExceptHandler, ast.match_case)


def _imports(tree: ast.Module, module: str, is_init: bool) -> list[ImportRef]:
    """Every import in source order, with whether it is function-local and whether it is
    TYPE_CHECKING-only. Imports are statements: only statement bodies are entered, never
    expressions, depth first with a stack of (statement, local, type_only)."""
    found: list[ImportRef] = []
    stack: list[tuple[ast.AST, bool, bool]] = [(tree, False, False)]
    while stack:
        node, local, type_only = stack.pop()
        cls = type(node)
        if type(node) is ast.Import:  # not ``cls is``: mypy narrows ``node`` on this form only
            found.extend(ImportRef(a.name, (), local, type_only, a.asname or a.name) for a in node.names)
            continue
        if type(node) is ast.ImportFrom:
            base = _resolve_base(module, is_init, node.level, node.module)
            if base:
                found.append(ImportRef(base, tuple(a.name for a in node.names), local, type_only))
            continue
        children: Sequence[tuple[ast.AST, bool, bool]]
        if type(node) is ast.If and _is_type_checking(node.test):
            children = [(c, local, True) for c in node.body] + [(c, local, type_only) for c in node.orelse]
        else:
            bodies = _BODIES_OF.get(cls)
            if bodies is None:
                bodies = _BODIES_OF[cls] = tuple(f for f in _STATEMENT_FIELDS if f in cls._fields)
            if not bodies:
                continue
            inner = local or cls is ast.FunctionDef or cls is ast.AsyncFunctionDef
            children = [(c, inner, type_only) for f in bodies for c in getattr(node, f) if isinstance(c, _NESTED)]
        stack.extend(reversed(children))
    return found


# fields that never hold an expression (names, operators, flags); a Constant's value is no node
_LEAF_FIELDS = frozenset({"ctx", "id", "attr", "arg", "name", "names", "module", "level", "kind", "type_comment",
                          "conversion", "is_async", "simple", "op", "ops"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {ast.Constant: ()}  # node type -> the fields to descend into


def _dotted_uses(tree: ast.AST) -> set[str]:
    """Every ``name.attr[.attr...]`` in the module, inner chains included (``a.b.c`` gives ``a.b``
    too). The walk is ``ast.walk``'s, inlined (its generators were most of the graph's build time
    after parsing), and descends only into fields that can hold an expression (a third faster
    again on networkx and ray, the same sets)."""
    uses: set[str] = set()
    stack: list[object] = [tree]
    fields_of = _CHILD_FIELDS
    attribute, name = ast.Attribute, ast.Name
    while stack:
        node = stack.pop()
        cls = type(node)
        if cls is attribute:  # exact type checks: this loop visits every node
            parts = []
            cur = node
            while type(cur) is attribute:
                parts.append(cur.attr)
                cur = cur.value
            if type(cur) is name:
                parts.append(cur.id)
                uses.add(".".join(reversed(parts)))
        fields = fields_of.get(cls)
        if fields is None:  # lists also hold None (dict keys) and strings: they have no fields
            fields = fields_of[cls] = tuple(f for f in getattr(cls, "_fields", ()) if f not in _LEAF_FIELDS)
        for field_name in fields:
            value = getattr(node, field_name, None)
            if type(value) is list:
                stack.extend(value)
            elif value is not None:
                stack.append(value)
    return uses


# -- the graph ---------------------------------------------------------------------------------
def _defined_here(tree: ast.Module) -> set[str]:
    defined = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            defined.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return defined


