"""A function body that imports from its package, reduced to those import statements.

The dependency graph reads a function body only for its imports (``environments.cocoder.skeleton``):
each one inside a function is ``local``, and none is ``type_only`` unless the body mentions
``TYPE_CHECKING``. So the statements around them (the ``try`` an import sits in, the code before
and after it, nested functions) decide nothing, and a body whose package imports are all plain
statements can be given to the parser as just those statements, in their order, each at the
body's indentation on the line where it was: the same imports, a fraction of the syntax nodes.

Only what this reading can vouch for is reduced; otherwise :func:`import_statements` returns
None and the caller keeps the body as before. An import line must start a statement: it begins
with ``import`` or ``from`` and the line before it does not end in a backslash (inside brackets a
line cannot begin with either keyword and be valid Python; inside a one-line string continued by a
backslash it could, and that is refused), it holds no quote and no ``;``, and its statement ends
where its brackets close and its backslashes stop.
"""

from __future__ import annotations

import bisect
import re

_STATEMENT = re.compile(r"[ \t\f]*(?:import|from)[ \t]")
_INDENT = re.compile(r"[ \t\f]*")
_TYPE_CHECKING = re.compile(r"\bTYPE_CHECKING\b")


def import_statements(text: str, keep: int, end: int, indent: str, lines: list[int],
                      regions: list[tuple[int, int]], starts: list[int]) -> str | None:
    """The replacement for ``text[keep:end]`` (a body's statements after its docstring, ``keep``
    at a line's start): only the import statements that start on the lines starting at ``lines``
    (ascending, within the range), each re-indented to ``indent``; every other line empty, so each
    line stays where it was. None when this reading cannot vouch for the result."""
    if _TYPE_CHECKING.search(text, keep, end):
        return None
    pieces: list[str] = []
    done = keep
    for start in lines:
        if start < done:
            continue  # a line inside the previous statement
        i = bisect.bisect_right(starts, start) - 1
        if i >= 0 and regions[i][1] > start:
            return None  # the line starts inside a triple-quoted string
        if text[max(0, start - 3):max(0, start - 1)].rstrip("\r").endswith("\\"):
            return None  # a continuation of the line before
        word = _past_indent(text, start)
        if text.startswith("#", word):
            continue  # a comment: no statement
        stop = _statement_end(text, start, end) if _STATEMENT.match(text, start) else None
        if stop is None:
            return None
        pieces += ["\n" * text.count("\n", done, start), indent, text[word:stop]]
        done = stop
    if not pieces:
        return None
    pieces.append("\n" * text.count("\n", done, end))
    return "".join(pieces)


def _past_indent(text: str, start: int) -> int:
    found = _INDENT.match(text, start)
    return start if found is None else found.end()


_SCAN = re.compile(r"[()'\";\n#\\]")


def _statement_end(text: str, start: int, end: int) -> int | None:
    """Where the import statement at ``start`` ends (at its last line's break, or ``end``), or None
    for what this reading does not follow (a quote, a ``;``, brackets that do not balance)."""
    depth, pos = 0, start
    while (m := _SCAN.search(text, pos, end)) is not None:
        c = m.group()
        pos = m.end()
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                return None
        elif c == "#":
            line_end = text.find("\n", pos, end)
            pos = end if line_end < 0 else line_end
        elif c == "\\":
            if text[pos:pos + 1] != "\n" and text[pos:pos + 2] != "\r\n":
                return None
            pos = text.find("\n", pos) + 1
        elif c == "\n":
            if depth == 0:
                return m.start()
        else:  # a quote or ;
            return None
    return end if depth == 0 else None
