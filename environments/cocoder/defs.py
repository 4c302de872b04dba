"""Definitions as units of work: the pieces of a module one agent can write alone.

The task is filling blanked bodies against a skeleton that keeps every signature, so a module
can be split by its top-level definitions (a class too big for one share split by its
methods). Everything here works on source text with ``ast`` and keeps lines verbatim, so a
piece written by one agent can be found again by qualified name and put into the skeleton.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from environments.cocoder.depgraph import estimate_tokens, parse

_DEF = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef  # what _DEF matches


@dataclass(frozen=True)
class Item:
    """One definition to write: ``qualname`` (``f``, ``C``, ``C.m``), its tokens, the names it uses
    and the tokens of its interface (its outline: what a sibling piece is shown of it)."""

    qualname: str
    name: str
    tokens: int
    uses: frozenset[str]
    interface_tokens: int


def _start(node: Definition) -> int:
    """First line of a definition, decorators included."""
    return min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])


def index_definitions(tree: ast.Module) -> dict[str, Definition]:
    """Qualified name -> node for every function and class reachable through classes."""
    found: dict[str, Definition] = {}

    def visit(body: Iterable[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, _DEF):
                found[prefix + node.name] = node
                if isinstance(node, ast.ClassDef):
                    visit(node.body, prefix + node.name + ".")

    visit(tree.body, "")
    return found


@functools.lru_cache(maxsize=256)
def _indexed(source: str) -> tuple[ast.Module, dict[str, Definition]]:
    """A module's tree and :func:`index_definitions`, kept per source text: the planner reads the
    same modules in every planning call (each strategy, each number of agents) and an agent's
    view again every turn. Shared: callers only read them."""
    tree = parse(source)
    return tree, index_definitions(tree)


def _uses(node: ast.AST) -> frozenset[str]:
    """Names the bodies to be written use. Signatures, decorators, class bases and class-level
    statements are part of the skeleton every piece is given, so what only they use is no
    dependency of the piece. Dunder attributes are left out: they name protocol methods."""
    names: set[str] = set()
    if isinstance(node, ast.ClassDef):
        for child in node.body:
            if isinstance(child, _DEF):
                names |= _uses(child)
        return frozenset(names)
    for stmt in getattr(node, "body", []):
        # a variable annotation inside a body is never evaluated
        unused = {id(n) for a in ast.walk(stmt) if isinstance(a, ast.AnnAssign) for n in ast.walk(a.annotation)}
        for sub in ast.walk(stmt):
            if id(sub) in unused:
                continue
            if isinstance(sub, ast.Name):
                names.add(sub.id)
            elif isinstance(sub, ast.Attribute) and not (sub.attr.startswith("__") and sub.attr.endswith("__")):
                names.add(sub.attr)  # ``super().__init__()`` is the object's protocol, not a sibling
    return frozenset(names)


def _has_body(fn: Definition) -> bool:
    """More than a one-line or ``...`` body (the ones blanking leaves filled)."""
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    return bool(body) and body[0].lineno != (body[-1].end_lineno or body[-1].lineno)


def definition_items(source: str, writable: Collection[str] | None = None,
                     class_limit: float = float("inf")) -> list[Item]:
    """The definitions of a module that hold something to write, in source order.

    ``writable``: qualified names of the blanked functions (None: every function with more than a
    one-line body, as blanking would choose without knowing what runs at import time). A class
    larger than ``class_limit`` tokens is split into its members, recursively.
    """
    return list(_items(source, None if writable is None else frozenset(writable), class_limit))


@functools.lru_cache(maxsize=512)
def _items(source: str, writable: frozenset[str] | None, class_limit: float) -> tuple[Item, ...]:
    """:func:`definition_items`, kept per arguments (the items are frozen; the order of
    ``writable`` never mattered, it is read as a set)."""
    tree, index = _indexed(source)
    lines = source.splitlines(keepends=True)
    functions = [q for q, n in index.items() if not isinstance(n, ast.ClassDef) and _has_body(n)]
    todo = set(functions if writable is None else writable)
    items: dict[str, Item] = {}  # by qualname: of ``typing.overload`` variants the last one is the code

    def has_work(qual: str) -> bool:
        return any(q == qual or q.startswith(qual + ".") for q in todo)

    def visit(body: Iterable[ast.stmt], prefix: str) -> None:
        for node in body:
            if not isinstance(node, _DEF) or not has_work(prefix + node.name):
                continue
            qual = prefix + node.name
            tokens = estimate_tokens("".join(lines[_start(node) - 1:node.end_lineno]))
            if isinstance(node, ast.ClassDef) and tokens > class_limit:
                visit(node.body, qual + ".")
                continue
            items.pop(qual, None)
            items[qual] = Item(qual, node.name, tokens, _uses(node), estimate_tokens("".join(_outline(node, lines))))

    visit(tree.body, "")
    return tuple(items.values())


def _class_header(lines: Sequence[str], node: ast.ClassDef) -> list[str]:
    return list(lines[_start(node) - 1:node.body[0].lineno - 1])


def source_view(reference: str, own: Sequence[str], omit: Collection[str] | None) -> str:
    """What one piece's agent writes: with ``omit`` (the primary piece), the file without the
    definitions other pieces write; without it, only the ``own`` definitions, each under the
    header lines of the classes that contain it."""
    _, index = _indexed(reference)
    lines = reference.splitlines(keepends=True)
    if omit is not None:
        drop = sorted(((_start(index[q]), index[q].end_lineno) for q in omit if q in index), reverse=True)
        # by name, not identity: of ``typing.overload`` variants only the last is in the index
        emptied = [n for q, n in index.items() if isinstance(n, ast.ClassDef)
                   and all(isinstance(s, _DEF) and f"{q}.{s.name}" in omit for s in n.body)]
        out = list(lines)
        fill = {n.end_lineno: " " * n.body[0].col_offset + "...\n" for n in emptied}
        for start, end in drop:
            out[start - 1:end] = [fill[end]] if end in fill else []
        return "".join(out)
    out = []
    opened: list[str] = []
    for qual in own:
        parts = qual.split(".")
        parents = [".".join(parts[:i]) for i in range(1, len(parts))]
        common = 0
        while common < min(len(opened), len(parents)) and opened[common] == parents[common]:
            common += 1
        opened = opened[:common]
        for parent in parents[common:]:
            header = index[parent]
            assert isinstance(header, ast.ClassDef)  # index_definitions recurses only into classes
            out += _class_header(lines, header)
            opened.append(parent)
        node = index[qual]
        out += lines[_start(node) - 1:node.end_lineno] + ["\n"]
    return "".join(out)


def _outline(node: Definition, lines: Sequence[str]) -> list[str]:
    """A definition's lines without docstrings and bodies: decorators, signatures, class-level
    statements, ``...`` where a body was (its interface, as a message would show it)."""
    body = node.body
    if body[0].lineno <= node.lineno:  # ``def f(): ...`` on one line
        return list(lines[_start(node) - 1:node.end_lineno])
    header = list(lines[_start(node) - 1:body[0].lineno - 1])
    if not isinstance(node, ast.ClassDef):
        return header + [" " * body[0].col_offset + "...\n"]
    inner: list[str] = []
    for stmt in body:
        if isinstance(stmt, _DEF):
            inner += _outline(stmt, lines)
        elif not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
            inner += lines[stmt.lineno - 1:stmt.end_lineno]
    return header + (inner or [" " * body[0].col_offset + "...\n"])


def outline_definitions(skeleton: str, quals: Collection[str], drop: Collection[str] = ()) -> str:
    """The skeleton with each of ``quals`` reduced to its outline (its interface: decorators,
    signatures, ``...`` for bodies; no docstrings) and each of ``drop`` left out."""
    index = index_definitions(parse(skeleton))
    lines = skeleton.splitlines(keepends=True)
    emptied = {n.end_lineno: " " * n.body[0].col_offset + "...\n" for q, n in index.items()
               if isinstance(n, ast.ClassDef) and n.body[0].lineno > n.lineno
               and all(isinstance(b, _DEF) and f"{q}.{b.name}" in drop for b in n.body)}
    spans = [(_start(index[q]), index[q].end_lineno, _outline(index[q], lines)) for q in quals if q in index]
    spans += [(_start(index[q]), index[q].end_lineno, []) for q in drop if q in index]
    for start, end, text in sorted(spans, key=lambda s: s[0], reverse=True):
        lines[start - 1:end] = [emptied[end]] if not text and end in emptied else text
    return "".join(lines)


def piece_outline(skeleton: str, reference: str, own: Collection[str], siblings: Collection[str]) -> str:
    """What a piece is shown of its module: context isolation one level down, as a module is shown
    the interfaces of the names it uses, not the whole of another module. The skeleton keeps the
    module's statements and the piece's own definitions as they are; of the other definitions,
    those its bodies use (by name, as :func:`reference_graph` links them) stay, as outlines when
    a sibling piece writes them, whole when complete in the skeleton; the rest are left out."""
    _, ref_index = _indexed(reference)
    uses = set().union(*(_uses(ref_index[q]) for q in own if q in ref_index))
    mine, others = set(own), set(siblings)
    index = index_definitions(parse(skeleton))
    children: dict[str, list[str]] = {}
    for qual in index:
        children.setdefault(qual.rpartition(".")[0], []).append(qual)

    def holds(qual: str, names: Collection[str]) -> bool:  # qual is, or is a class around, one of names
        return qual in names or any(n.startswith(qual + ".") for n in names)

    def used(qual: str) -> bool:  # by name, or (a class split into pieces) through a member
        return qual.rpartition(".")[2] in uses or (qual not in others and any(map(used, children.get(qual, ()))))

    outlined: list[str] = []
    dropped: list[str] = []

    def decide(qual: str) -> None:
        if qual in mine:
            return
        if holds(qual, mine) or (holds(qual, others) and qual not in others and used(qual)
                                 and qual.rpartition(".")[2] not in uses):
            for child in children.get(qual, ()):  # a class around own or used members: its header stays
                decide(child)
        elif not used(qual):
            dropped.append(qual)
        elif holds(qual, others):
            outlined.append(qual)

    for qual in children.get("", ()):
        decide(qual)
    return outline_definitions(skeleton, outlined, dropped)


def merge_definitions(skeleton: str, written: Iterable[tuple[Sequence[str], str]]) -> str:
    """The skeleton with each piece's own definitions taken from what its agent wrote.

    A piece whose text does not parse, or that lacks one of its definitions, leaves those
    stubs as they are (its tests fail, as a missing file's would). Deterministic: the result
    depends only on the skeleton and the set of (definitions, text) pairs.
    """
    index = index_definitions(parse(skeleton))
    lines = skeleton.splitlines(keepends=True)
    edits: dict[int, tuple[int | None, list[str]]] = {}
    for own, text in written:
        try:
            found = index_definitions(parse(text))
        except SyntaxError:
            continue
        wlines = text.splitlines(keepends=True)
        for qual in own:
            target, new = index.get(qual), found.get(qual)
            if target is None or new is None or type(target) is not type(new):
                continue
            segment = [ln if ln.endswith("\n") else ln + "\n" for ln in wlines[new.lineno - 1:new.end_lineno]]
            shift = target.col_offset - new.col_offset
            if shift > 0:
                segment = [" " * shift + ln if ln.strip() else ln for ln in segment]
            elif shift < 0:
                segment = [ln[-shift:] if ln[:-shift].strip() == "" else ln for ln in segment]
            edits[target.lineno] = (target.end_lineno, segment)
    for start in sorted(edits, reverse=True):
        end, segment = edits[start]
        lines[start - 1:end] = segment
    return "".join(lines)


def definition_outlines(source: str, quals: Iterable[str]) -> dict[str, str]:
    """The outline of each of ``quals`` that ``source`` defines (see :func:`outline_definitions`);
    nothing when it does not parse. What an :class:`Item`'s ``interface_tokens`` counts."""
    try:
        index = index_definitions(parse(source))
    except (SyntaxError, ValueError):  # ValueError: null bytes
        return {}
    lines = source.splitlines(keepends=True)
    return {q: "".join(_outline(index[q], lines)) for q in quals if q in index}


def definition_at(source: str, line: int, candidates: Iterable[str]) -> str | None:
    """The one of ``candidates`` (qualified names) whose definition spans ``line`` of ``source``."""
    try:
        index = index_definitions(parse(source))
    except SyntaxError:
        return None
    for qual in candidates:
        node = index.get(qual)
        if node is not None and _start(node) <= line <= (node.end_lineno or node.lineno):
            return qual
    return None
