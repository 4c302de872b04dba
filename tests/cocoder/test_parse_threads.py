"""CPython 3.11 keeps the AST conversion's recursion depth in per-interpreter state: a parse in
another thread that runs while one is converting (a finaliser run by the garbage collector lets
threads switch mid-way) fails with "AST constructor recursion depth mismatch". A CoCoder team's
agents run in threads (as do in-process runs of a host program), so every parse of the project goes
through ``agentbed.pyparse.parse_python`` (CoCoder's ``facts.parse``): one at a time, and that error
(which says nothing of the source) retried."""

import ast

import pytest

from environments.cocoder import facts


def test_a_depth_mismatch_from_another_threads_parse_is_retried(monkeypatch):
    real, calls = ast.parse, []

    def collides_once(source, filename="<unknown>"):
        calls.append(filename)
        if len(calls) == 1:
            raise SystemError("AST constructor recursion depth mismatch (before=33, after=18)")
        return real(source, filename=filename)

    monkeypatch.setattr(ast, "parse", collides_once)
    tree = facts.parse("def f():\n    return 1\n", "m.py")
    assert isinstance(tree.body[0], ast.FunctionDef) and calls == ["m.py", "m.py"]


def test_other_system_errors_and_syntax_errors_are_not_retried(monkeypatch):
    calls = []

    def broken(source, filename="<unknown>"):
        calls.append(filename)
        raise SystemError("something else")

    monkeypatch.setattr(ast, "parse", broken)
    with pytest.raises(SystemError, match="something else"):
        facts.parse("x = 1\n", "m.py")
    assert calls == ["m.py"]
    monkeypatch.undo()
    with pytest.raises(SyntaxError):
        facts.parse("def (:\n", "bad.py")
