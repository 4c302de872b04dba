"""The names a module uses of a module it imports whole (``m.NAME``), read from its text.

CoCoder's dependency graph counts ``nx.Graph`` in a module that did ``import networkx as nx``
against the module that defines ``Graph``; the module is parsed only as its skeleton
(:mod:`environments.cocoder.skeleton`), whose blanked bodies hold most such uses. So they are
scanned from the text, on demand and only for the modules that import a module whole: every
``m.NAME`` in code, outside comments and strings, but inside an f-string's replacement fields,
which the parser reads as code. Where a field's reach is unclear the scan raises
:class:`~environments.cocoder.skeleton.Unsure` and the caller reads the module's parse instead
(tests/cocoder/test_skeleton.py compares both readings).
"""

from __future__ import annotations

import bisect
import re

from environments.cocoder.skeleton import _CODE_PREFIX, _STR, Unsure, _inside, triple_strings

_IMPORT_LINE = re.compile(r"[ \t\f]*(?:from|import)[ \t]")
_ONE_STRING = re.compile(_STR)


def attribute_names(text: str, bound: str, regions: list[tuple[int, int]] | None = None) -> set[str]:
    """The names ``X`` of every ``bound.X`` in code (``bound`` a name or a dotted module path, the
    chain starting at a name: ``y.bound.X`` does not count), outside comments and strings but
    inside an f-string's replacement fields, which the parser reads as code. Raises
    :class:`Unsure` where a field's reach is unclear (a format spec, a nested string)."""
    regions = triple_strings(text) if regions is None else regions
    starts = [s for s, _ in regions]
    dot = r"[ \t]*\.[ \t]*"
    pattern = re.compile(dot.join(re.escape(p) for p in bound.split(".")) + dot + r"([^\W\d]\w*)")
    names: set[str] = set()
    for m in pattern.finditer(text):
        at = m.start()
        before = text[at - 1] if at else "\n"
        if before.isalnum() or before in "_.":
            continue
        i = _inside(regions, starts, at)
        if i >= 0:
            if _f_prefix(text, regions[i][0]) and _in_field(text, regions[i][0] + 3, at):
                names.add(m.group(1))
            continue
        line = text.rfind("\n", 0, at) + 1
        j = bisect.bisect_right(starts, at) - 1
        if j >= 0 and regions[j][1] > line:
            line = regions[j][1]
        if _CODE_PREFIX.fullmatch(text, line, at) is not None:
            if not _IMPORT_LINE.match(text, line):  # ``from pkg.mod import x`` is no attribute
                names.add(m.group(1))
            continue
        opened = _string_start(text, line, at)
        if opened >= 0 and _f_prefix(text, opened) and _in_field(text, opened + 1, at):
            names.add(m.group(1))
    return names


def _string_start(text: str, start: int, at: int) -> int:
    """The opening quote of the one-line string around ``at`` (not in code) on the line that
    starts at ``start``, or -1 when ``at`` is in a comment."""
    pos = start
    while pos < at:
        c = text[pos]
        if c == "#":
            return -1
        if c in "'\"":
            string = _ONE_STRING.match(text, pos)
            if string is None or string.end() > at:
                return pos
            pos = string.end()
            continue
        pos += 1
    return -1


def _f_prefix(text: str, quote: int) -> bool:
    """Whether the string whose quote is at ``quote`` is an f-string (``f``, ``rf``, ``fr``)."""
    letters = quote
    while letters > 0 and quote - letters < 2 and text[letters - 1].isalpha():
        letters -= 1
    if letters > 0 and (text[letters - 1].isalnum() or text[letters - 1] == "_"):
        return False  # a name before the quote (``if"x"``): no prefix at all
    return text[letters:quote].lower() in ("f", "rf", "fr")


_FIELD_TOKEN = re.compile(r"\{\{|\}\}|[{}:!'\"]")


def _in_field(text: str, content: int, at: int) -> bool:
    """Whether ``at`` in an f-string whose text starts at ``content`` is inside a replacement
    field's expression. Raises :class:`Unsure` for what this count does not follow (a quote, a
    ``:`` or ``!`` in a field, doubled braces inside one)."""
    depth = 0
    for token in _FIELD_TOKEN.finditer(text, content, at):
        t = token.group()
        if depth == 0:
            depth += t == "{"
        elif t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
        else:
            raise Unsure("an f-string field this count does not follow")
    return depth > 0
