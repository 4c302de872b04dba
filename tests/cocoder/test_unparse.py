"""environments.cocoder.unparse writes what ``ast.unparse`` writes: Python's own unparser is the
oracle, on the signatures of real packages and on generated expression trees."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from environments.cocoder.unparse import unparse, unparse_arguments


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations)))


@pytest.mark.parametrize("package", ["networkx.classes", "email", "asyncio", "concurrent", "typing"])
def test_every_signature_of_a_real_package(package):
    folder = _package_dir(package) if package != "typing" else Path(ast.__file__).parent
    files = sorted(folder.rglob("*.py")) if package != "typing" else [folder / "typing.py", folder / "dataclasses.py"]
    checked = 0
    for path in files:
        tree = ast.parse(path.read_bytes())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                assert unparse_arguments(node.args) == ast.unparse(node.args), (path, node.lineno)
                checked += 1
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns is not None:
                assert unparse(node.returns) == ast.unparse(node.returns), (path, node.lineno)
            if isinstance(node, ast.ClassDef):
                for base in node.bases:
                    assert unparse(base) == ast.unparse(base), (path, node.lineno)
    assert checked > 20


_NAMES = st.sampled_from(["a", "int", "None_", "typing", "Optional", "x1"])
_CONSTANTS = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.text(max_size=6), st.binary(max_size=3),
                       st.floats(allow_nan=True, allow_infinity=True), st.just(...), st.complex_numbers(max_magnitude=9),
                       st.tuples(st.integers(0, 3), st.text(max_size=2)))
_OPERATORS = st.sampled_from([ast.BitOr, ast.BitOr, ast.Add, ast.Sub, ast.Mult, ast.BitAnd, ast.Pow])


def _constant(value: object, kind: str | None) -> ast.Constant:
    return ast.Constant(value=value, kind=kind if isinstance(value, str) else None)


def _extend(children: st.SearchStrategy[ast.expr]) -> st.SearchStrategy[ast.expr]:
    names = _NAMES.map(lambda n: ast.Name(id=n, ctx=ast.Load()))
    return st.one_of(
        st.builds(lambda v, a: ast.Attribute(value=v, attr=a, ctx=ast.Load()), children, _NAMES),
        st.builds(lambda v, s: ast.Subscript(value=v, slice=s, ctx=ast.Load()), children, children),
        st.builds(lambda v, es: ast.Subscript(value=v, slice=ast.Tuple(elts=es, ctx=ast.Load()), ctx=ast.Load()),
                  st.one_of(names, children), st.lists(children, max_size=3)),
        st.builds(lambda es: ast.Tuple(elts=es, ctx=ast.Load()), st.lists(children, max_size=3)),
        st.builds(lambda es: ast.List(elts=es, ctx=ast.Load()), st.lists(children, max_size=3)),
        st.builds(lambda left, op, right: ast.BinOp(left=left, op=op(), right=right), children, _OPERATORS, children),
        st.builds(lambda op, v: ast.UnaryOp(op=op(), operand=v), st.sampled_from([ast.USub, ast.UAdd, ast.Not]),
                  children),
        st.builds(lambda f, es: ast.Call(func=f, args=es, keywords=[]), children, st.lists(children, max_size=2)),
        st.builds(lambda v: ast.Starred(value=v, ctx=ast.Load()), children),
        st.builds(lambda a, b: ast.Slice(lower=a, upper=b), children, children),
        st.builds(lambda t, a, b: ast.IfExp(test=t, body=a, orelse=b), children, children, children),
    )


_EXPRESSIONS = st.recursive(
    st.one_of(_NAMES.map(lambda n: ast.Name(id=n, ctx=ast.Load())),
              st.builds(_constant, _CONSTANTS, st.sampled_from([None, None, "u"]))),
    _extend, max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(_EXPRESSIONS)
def test_generated_expressions(expr):
    try:
        expected = ast.unparse(expr)
    except Exception as exc:  # a tree ast cannot write (a Starred where it is no expression): the same error
        with pytest.raises(type(exc)):
            unparse(expr)
        return
    assert unparse(expr) == expected


def _arg(name: str, annotation: ast.expr | None) -> ast.arg:
    return ast.arg(arg=name, annotation=annotation)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_generated_parameter_lists(data):
    optional = st.one_of(st.none(), _EXPRESSIONS)
    count = data.draw(st.integers(0, 4))
    names = [f"p{i}" for i in range(count)]
    positional = [_arg(n, data.draw(optional)) for n in names]
    split = data.draw(st.integers(0, count))
    args = ast.arguments(
        posonlyargs=positional[:split], args=positional[split:],
        vararg=data.draw(st.one_of(st.none(), optional.map(lambda a: _arg("rest", a)))),
        kwonlyargs=[_arg(f"k{i}", data.draw(optional)) for i in range(data.draw(st.integers(0, 2)))],
        kw_defaults=[], kwarg=data.draw(st.one_of(st.none(), optional.map(lambda a: _arg("kw", a)))),
        defaults=data.draw(st.lists(_EXPRESSIONS, max_size=count)))
    args.kw_defaults = [data.draw(optional) for _ in args.kwonlyargs]
    assert unparse_arguments(args) == ast.unparse(args)
