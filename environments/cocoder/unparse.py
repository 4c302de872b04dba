"""``ast.unparse``'s text for the expressions signatures are made of, without its visitor.

The dependency graph writes every top-level signature of every module (``facts._signature``), and
``ast.unparse`` (a generic visitor that builds a writer object per call) was a fifth of ray's cold
build. Annotations and defaults are mostly names, dotted names, subscripts, ``|`` unions, lists,
tuples and constants: those are written here by plain recursion, with ``ast.unparse``'s rules
(CPython 3.11 ``Lib/ast.py``, ``_Unparser``): a subscript's non-empty tuple without parentheses, a
one-element tuple with its comma, ``|`` left-associative (a union on the right is parenthesised),
constants as ``repr``. Anything else (a call, a lambda, a ``u''`` string, an infinite float) goes
to ``ast.unparse`` itself, at a place where its text cannot depend on what surrounds it (an
expression at "test" precedence: an annotation, a default, an element, a slice), so the result is
``ast.unparse``'s exactly (tests/cocoder/test_unparse.py compares the two on real packages and on
generated trees).
"""

from __future__ import annotations

import ast

_NAME, _ATTRIBUTE, _SUBSCRIPT, _CONSTANT = ast.Name, ast.Attribute, ast.Subscript, ast.Constant
_LIST, _TUPLE, _BINOP, _UNARYOP = ast.List, ast.Tuple, ast.BinOp, ast.UnaryOp
_PLAIN_CONSTANTS = (str, int, bool, bytes, type(None))


def unparse(node: ast.expr) -> str:
    """``ast.unparse(node)`` for an expression."""
    text = _fast(node)
    return ast.unparse(node) if text is None else text


def unparse_arguments(args: ast.arguments) -> str:
    """``ast.unparse(args)``: a function's parameters, as ``_Unparser.visit_arguments`` writes them."""
    parts: list[str] = []
    positional = args.posonlyargs + args.args
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    defaults += args.defaults
    for index, (arg, default) in enumerate(zip(positional, defaults, strict=True), 1):
        text = _arg(arg)
        parts.append(text if default is None else f"{text}={unparse(default)}")
        if index == len(args.posonlyargs):
            parts.append("/")
    if args.vararg is not None or args.kwonlyargs:
        parts.append("*" + (_arg(args.vararg) if args.vararg is not None else ""))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        parts.append(_arg(arg) if default is None else f"{_arg(arg)}={unparse(default)}")
    if args.kwarg is not None:
        parts.append("**" + _arg(args.kwarg))
    return ", ".join(parts)


def _arg(arg: ast.arg) -> str:
    return arg.arg if arg.annotation is None else f"{arg.arg}: {unparse(arg.annotation)}"


def _fast(node: ast.expr) -> str | None:
    """The text of ``node`` at "test" precedence, or None when it is not one of the kinds here."""
    cls = type(node)
    if cls is _NAME:
        return node.id  # type: ignore[attr-defined]
    if cls is _BINOP:
        return _union(node)  # type: ignore[arg-type]
    return _operand(node)


def _atom(node: ast.expr) -> str | None:
    """The text of ``node`` where it needs no parentheses at any precedence up to "atom": a name,
    a dotted name, a subscript, a constant, a list; None otherwise."""
    cls = type(node)
    if cls is _NAME:
        return node.id  # type: ignore[attr-defined]
    if cls is _ATTRIBUTE:
        base = node.value  # type: ignore[attr-defined]
        if type(base) not in (_NAME, _ATTRIBUTE, _SUBSCRIPT):  # ``3 .real``, ``(a + b).c``: ast's
            return None
        value = _atom(base)
        return None if value is None else f"{value}.{node.attr}"  # type: ignore[attr-defined]
    if cls is _SUBSCRIPT:
        base, index = node.value, node.slice  # type: ignore[attr-defined]
        if type(base) not in (_NAME, _ATTRIBUTE, _SUBSCRIPT):
            return None
        value = _atom(base)
        if value is None:
            return None
        inner = _items(index.elts) if type(index) is _TUPLE and index.elts else unparse(index)
        return f"{value}[{inner}]"
    if cls is _CONSTANT:
        return _constant(node)  # type: ignore[arg-type]
    if cls is _LIST:
        return "[" + ", ".join(unparse(e) for e in node.elts) + "]"  # type: ignore[attr-defined]
    return None


def _constant(node: ast.Constant) -> str | None:
    value = node.value
    if node.kind is not None:  # u"": ast writes the prefix
        return None
    if value is ...:
        return "..."
    if isinstance(value, _PLAIN_CONSTANTS):
        return repr(value)
    if type(value) is float:
        text = repr(value)
        return None if "inf" in text or "nan" in text else text
    return None  # complex, a tuple constant: ast's


def _items(elements: list[ast.expr]) -> str:
    """``_Unparser.items_view``: a single item keeps its comma."""
    if len(elements) == 1:
        return unparse(elements[0]) + ","
    return ", ".join(unparse(e) for e in elements)


def _union(node: ast.BinOp) -> str | None:
    """``a | b | c``: left-associative, so a union on the left needs no parentheses and one on the
    right does (that case, and every other operator, is ast's)."""
    if type(node.op) is not ast.BitOr:
        return None
    left = _union(node.left) if type(node.left) is _BINOP else _operand(node.left)
    right = _operand(node.right)
    return None if left is None or right is None else f"{left} | {right}"


def _operand(node: ast.expr) -> str | None:
    """An operand of ``|``: atoms, tuples (always parenthesised there) and ``-1``."""
    cls = type(node)
    if cls is _TUPLE:  # its precedence is below both "test" and ``|``'s: always in parentheses
        return "(" + _items(node.elts) + ")"  # type: ignore[attr-defined]
    if cls is _UNARYOP and type(node.op) is ast.USub and type(node.operand) is _CONSTANT:  # type: ignore[attr-defined]
        value = node.operand.value  # type: ignore[attr-defined]
        if type(value) is int or type(value) is float:
            number = _constant(node.operand)  # type: ignore[attr-defined]
            return None if number is None else "-" + number
        return None
    return _atom(node)
