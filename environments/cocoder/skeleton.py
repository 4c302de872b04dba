"""What CoCoder's dependency graph needs of a file, without parsing its function bodies.

The graph (``environments.cocoder.depgraph``) needs, per module: the top-level definitions
(names, signatures with their docstring's first line, the work estimate), every import with
whether it is function-local or ``TYPE_CHECKING``-only, and, only for a module imported whole
(``import pkg.mod as m``), the names it uses as ``m.NAME``. Function bodies are most of a file and
most of what ``ast.parse`` costs (Python's parser alone is 5.6x and 10.8x grimp's whole scan on
networkx and ray), yet they hold none of the definitions, only some imports and some ``m.NAME``.

So a file is parsed as its *skeleton*: the same text with each function body that has no
``import`` in it blanked (its docstring kept, or ``pass``), lines kept where they were so line
numbers and the source lines of top-level assignments are unchanged. A body with the word
``import`` of the package outside a triple-quoted string is reduced to those import statements
(``environments.cocoder.localimports``), or, where that reading cannot vouch for it, kept up to
the statement holding its last such import: every import statement is in the tree in its order.
The ``m.NAME`` uses are read on demand (:func:`environments.cocoder.attributes.attribute_names`),
only for the modules that import a module whole, by a scan that skips comments and strings.

Anything this text-level cut cannot vouch for raises :class:`Unsure` (an unusual header, an
unclosed triple quote, ``nx.NAME`` inside an f-string), and the caller parses the whole file
instead. A cut that went wrong in a way nothing here detects leaves unbalanced code behind, which
the parser rejects, and again the whole file is parsed. The graphs are compared with the
whole-file build on networkx, ray, the pinned repositories and generated packages
(tests/cocoder/test_skeleton.py).

Not checked here: syntax errors inside a blanked body (the whole-file parse found them). A task's
package is still parsed whole when it is loaded (``environments.cocoder.tasks``), where a syntax
error has to be a one-line refusal.
"""

from __future__ import annotations

import ast
import bisect
import re
from functools import lru_cache

from environments.cocoder.localimports import import_statements

_TRIPLE = re.compile(r'"""|\'\'\'')
_DEF = re.compile(r"def[ \t]")
_STR = r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\''
_PLAIN = r"[^()\[\]{}'\"#\n]"


def _nested(depth: int) -> str:
    """A bracketed expression nested at most ``depth`` deep, with one-line strings, comments and
    line breaks inside."""
    inner = rf"{_PLAIN}|\n|#[^\n]*+|{_STR}" + (f"|{_nested(depth - 1)}" if depth > 1 else "")
    return rf"(?:\((?:{inner})*\)|\[(?:{inner})*\]|\{{(?:{inner})*\}})"


# def NAME(args) [-> annotation]: the rest of the line, brackets nested up to 3 deep (most
# headers); other headers go through _header_end's bracket count
_HEADER = re.compile(rf"def[ \t]+\w+[ \t]*{_nested(3)}[ \t]*"
                     rf"(?:->(?:[^:'\"#\n()\[\]{{}}]|{_STR}|{_nested(3)})*)?:([^\n]*)(?:\n|$)")
_HEADER_TOKEN = re.compile(rf"\"\"\"|'''|[(\[{{]|[)\]}}]|{_STR}|#[^\n]*|:")
_HEADER_LIMIT = 5000  # characters: a longer header is left to the whole-file parse
_BLANK_LINES = re.compile(r"(?:[ \t\r\f]*(?:#[^\n]*)?\n)*")
_DOCSTRING_START = re.compile(r"[ \t\f]*[rRuUbB]{0,2}([\"'])")
_ONE_LINE_STRING = re.compile(rf"[ \t\f]*[rRuUbB]{{0,2}}(?:{_STR})[ \t\r\f]*(?:#[^\n]*)?(?:\n|$)")
_GOES_ON = re.compile(r"from[ \t]+\.|[(\\][ \t]*(?:#.*)?$|;")  # relative, or continued (a paren, a backslash, ;)
_INDENT = re.compile(r"[ \t\f]*")
_REST_OF_LINE = re.compile(r"[ \t\r\f]*(?:#[^\n]*)?(?:\n|$)")
_CODE_PREFIX = re.compile(rf"(?:[^'\"#\n]|{_STR})*")  # a line's start up to a point, all code


def _past(pattern: re.Pattern[str], text: str, pos: int) -> int:
    """Where ``pattern`` (one that may match nothing) stops matching from ``pos``."""
    found = pattern.match(text, pos)
    return found.end() if found is not None else pos


class Unsure(Exception):
    """The text-level reading cannot vouch for this file: parse all of it."""


def triple_strings(text: str) -> list[tuple[int, int]]:
    """(start, end) of every triple-quoted string, in order: where a body's end, a ``def`` or an
    ``import`` cannot be. A triple quote inside a one-line string or a comment is skipped."""
    found: list[tuple[int, int]] = []
    pos = 0
    while (m := _TRIPLE.search(text, pos)) is not None:
        start = m.start()
        line = text.rfind("\n", 0, start) + 1
        if found and found[-1][1] > line:
            line = found[-1][1]
        if _CODE_PREFIX.fullmatch(text, line, start) is None:  # inside a string or a comment
            pos = m.end()
            continue
        quote, end = m.group(), start + 3
        while True:
            end = text.find(quote, end)
            if end < 0:
                raise Unsure("unclosed triple quote")
            escape = end
            while text[escape - 1] == "\\":
                escape -= 1
            if (end - escape) % 2 == 0:  # an even run of backslashes escapes nothing
                break
            end += 1
        found.append((start, end + 3))
        pos = end + 3
    return found


def _inside(regions: list[tuple[int, int]], starts: list[int], pos: int) -> int:
    """The index of the triple-quoted string around ``pos``, or -1."""
    i = bisect.bisect_right(starts, pos) - 1
    return i if i >= 0 and regions[i][1] > pos else -1


@lru_cache(maxsize=64)
def _word_pattern(word: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w.])" + re.escape(word) + r"(?!\w)")


@lru_cache(maxsize=64)
def _body_end_pattern(indent: int) -> re.Pattern[str]:
    """The start of the first line indented no deeper than ``indent`` that is not blank or a
    comment (a form feed at a line's start is no indentation)."""
    return re.compile(r"\n\f*[ \t]{0," + str(indent) + r"}[^ \t\r\n#\f]")


def _imports_package(text: str, start: int, end: int, regions: list[tuple[int, int]], starts: list[int],
                     package: re.Pattern[str]) -> list[tuple[int, int]]:
    """The (start, end) of each line of text[start:end] that may import from ``package``: the word
    ``import`` outside a triple-quoted string on a line that names the package, starts a relative
    import or goes on to the next (comments and one-line strings count). An import of another
    package alone (``import numpy as np``) is not one: the graph drops it."""
    pos, found = start, []
    while (hit := text.find("import", pos, end)) >= 0:
        pos = hit + 6
        before, after = text[hit - 1], text[hit + 6: hit + 7]
        if before.isalnum() or before == "_" or after.isalnum() or after == "_":
            continue
        i = _inside(regions, starts, hit)
        if i >= 0:
            pos = regions[i][1]
            continue
        line_start = text.rfind("\n", 0, hit) + 1
        line_end = text.find("\n", hit)
        line_end = line_end if line_end >= 0 else len(text)
        if package.search(text, line_start, line_end) or _GOES_ON.search(text[line_start:line_end]):
            found.append((line_start, line_end))
            pos = line_end
    return found


@lru_cache(maxsize=64)
def _next_statement_pattern(indent: str) -> re.Pattern[str]:
    """The start of the next line indented exactly ``indent`` that starts a statement of that
    block (not a clause of one: ``except``, ``else``, ``elif``, ``finally``; not a closing bracket)."""
    return re.compile(r"\n" + re.escape(indent) + r"(?![ \t\f#\r\n)\]}]|(?:except|else|elif|finally)\b)")


def _after_statement(text: str, at: int, end: int, indent: str, regions: list[tuple[int, int]],
                     starts: list[int]) -> int:
    """The start of the first statement of a body indented ``indent`` that begins after ``at``
    and before ``end``, or ``end``. A line inside brackets or after a backslash that happens to
    match leaves unbalanced code before it, which the parser rejects (then the file is parsed whole)."""
    pattern = _next_statement_pattern(indent)
    found = pattern.search(text, at - 1, end)
    while found is not None and (i := _inside(regions, starts, found.start() + 1)) >= 0:
        found = pattern.search(text, regions[i][1], end)
    return end if found is None else found.start() + 1


def skeleton(text: str, package: str, regions: list[tuple[int, int]] | None = None) -> tuple[str, set[int]]:
    """``text`` with the bodies of functions that import nothing from ``package`` (the top-level
    package's name) blanked and triple-quoted strings emptied (see the module docstring), every
    line where it was; and the lines of the ``def`` headers read (:func:`check_defs`). Raises
    :class:`Unsure`."""
    named = _word_pattern(package)
    regions = triple_strings(text) if regions is None else regions
    starts = [s for s, _ in regions]
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement), in order, not overlapping
    docstrings: set[int] = set()  # the regions that are a def's docstring: their first line is kept
    def_lines: set[int] = set()
    counted, line_no = 0, 1  # text[:counted] has line_no - 1 line breaks
    skip_to = 0  # inside a body already handled
    for m in _DEF.finditer(text):
        at = m.start()
        if at < skip_to:
            continue
        line = text.rfind("\n", 0, at) + 1
        lead = text[line:at].replace("\f", "")  # a form feed at a line's start is no indentation
        if lead.strip(" \t") not in ("", "async") or _inside(regions, starts, at) >= 0:
            continue  # "def" inside a line, a name or a string
        line_no += text.count("\n", counted, at)
        counted = at
        def_lines.add(line_no)
        indent = len(lead) - len(lead.lstrip(" \t"))
        body = _header_end(text, at)
        if body < 0:
            continue  # a one-line body: nothing to blank
        first = _past(_BLANK_LINES, text, body)
        start = _DOCSTRING_START.match(text, first)
        if start is not None and (i := _inside(regions, starts, start.start(1))) >= 0:
            docstrings.add(i)  # whatever happens below, this string's first line is kept
        found = _body_end_pattern(indent).search(text, body - 1)
        while found is not None and (i := _inside(regions, starts, found.start() + 1)) >= 0:
            found = _body_end_pattern(indent).search(text, regions[i][1])
        end = found.start() + 1 if found is not None else len(text)
        skip_to = end
        if first >= end:
            continue
        keep = _docstring_end(text, first, end, regions, starts)
        if keep is None:
            continue  # a first statement this reading does not vouch for
        imports = _imports_package(text, body, end, regions, starts, named)
        if imports:  # reduced to its package imports, or kept up to the statement with the last one
            inner = text[first:_past(_INDENT, text, first)]
            only = import_statements(text, keep, end, inner, [s for s, _ in imports], regions, starts)
            cut = keep if only is not None else _after_statement(text, imports[-1][1], end, inner, regions, starts)
            if cut < end:
                edits.append((cut, end, only or "\n" * text.count("\n", cut, end)))
            continue
        if keep == first:  # no docstring: the first statement becomes ``pass``
            code = _past(_INDENT, text, first)
            line_end = text.find("\n", first)
            line_end = end if line_end < 0 else min(line_end + 1, end)
            edits.append((code, end, "pass\n" + "\n" * text.count("\n", line_end, end)))
        else:
            edits.append((keep, end, "\n" * text.count("\n", keep, end)))
    return _apply(text, edits + _emptied_strings(text, regions, docstrings, edits)), def_lines


def check_defs(tree: ast.Module, def_lines: set[int]) -> None:
    """Raise :class:`Unsure` unless every function whose signature the graph reads (top level, or
    a method of a top-level class) had its header read by :func:`skeleton`: one it missed may
    have lost its docstring."""
    for node in tree.body:
        inner = node.body if isinstance(node, ast.ClassDef) else [node]
        for item in inner:
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.lineno not in def_lines:
                raise Unsure(f"line {item.lineno}: a def the text-level reading missed")


def _emptied_strings(text: str, regions: list[tuple[int, int]], docstrings: set[int],
                     blanked: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Each triple-quoted string outside the blanked bodies reduced to its line breaks (its value
    reaches the graph only as a def's docstring, whose first line is kept; a top-level
    assignment's interface is its source lines, read from the file, not the tree). Strings on a
    ``class`` or ``def`` line are left alone: their value could be in a signature."""
    edits = []
    j = 0
    for i, (start, end) in enumerate(regions):
        while j < len(blanked) and blanked[j][1] <= start:
            j += 1
        if j < len(blanked) and blanked[j][0] <= start:
            continue
        breaks = text.count("\n", start, end)
        if not breaks:
            continue
        line = text[text.rfind("\n", 0, start) + 1:start].lstrip(" \t")
        if line.startswith(("class", "def", "async")):
            continue
        quote = text[start:start + 3]
        if i in docstrings:
            first = text[start + 3:text.find("\n", start)]
            if not first.strip() or first.rstrip("\r").endswith("\\") or not _REST_OF_LINE.match(text, end):
                continue  # the first line comes later or goes on, or code follows the string: kept whole
            # the line breaks after the string: inside it they would be cleandoc's work
            edits.append((start, end, quote + first + quote + "\n" * breaks))
        else:
            edits.append((start, end, quote + "\n" * breaks + quote))
    return edits


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    pieces, done = [], 0
    for start, end, replacement in sorted(edits):
        if start < done:  # edits that overlap would duplicate text: a bug here, never a guess
            raise Unsure("overlapping edits")
        pieces += [text[done:start], replacement]
        done = end
    pieces.append(text[done:])
    return "".join(pieces)


def _header_end(text: str, at: int) -> int:
    """Where the body of the ``def`` at ``at`` starts (the line after its header), or -1 when the
    body is on the header's line."""
    header = _HEADER.match(text, at)
    if header is not None:
        return header.end() if _REST_OF_LINE.fullmatch(header.group(1) + "\n") else -1
    depth = 0
    for token in _HEADER_TOKEN.finditer(text, at, at + _HEADER_LIMIT):
        c = token.group()
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == ":" and depth == 0:
            rest = _REST_OF_LINE.match(text, token.end())
            return rest.end() if rest is not None else -1
        elif c in ('"""', "\'\'\'"):
            break
    raise Unsure(f"line {text.count(chr(10), 0, at) + 1}: a def header this reading does not handle")


def _docstring_end(text: str, first: int, end: int, regions: list[tuple[int, int]], starts: list[int]) -> int | None:
    """Where the body's docstring ends (``first`` when the body starts with no string), or None
    when its first statement starts with a string that may go on (``"a" "b"``, ``(...)``)."""
    if text.startswith("(", _past(_INDENT, text, first)):
        return None  # a parenthesised first statement may be a docstring
    start = _DOCSTRING_START.match(text, first)
    if start is None:
        return first
    i = _inside(regions, starts, start.start(1))
    if i >= 0 and regions[i][0] == start.start(1):
        rest = _REST_OF_LINE.match(text, regions[i][1])
    else:
        rest = _ONE_LINE_STRING.match(text, first)
    return None if rest is None or rest.end() > end else rest.end()
