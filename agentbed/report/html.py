"""A minimal HTML builder: escaped text, elements with attributes, and the report's stylesheet.

Everything the report shows comes from files a user or a workload wrote, so every piece of
text goes through :func:`esc`; only markup built here (and sanitised SVG) is trusted.
"""

from __future__ import annotations

import html
import json
import math
import re
import secrets
from collections.abc import Callable, Iterable
from typing import Any, TextIO

_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


class Markup(str):
    """A string that is already HTML (built by :func:`el` or sanitised), so it is not escaped again."""


def esc(value: Any) -> Markup:
    if isinstance(value, Markup):
        return value
    return Markup(html.escape(str(value), quote=True))


def slug(text: str) -> str:
    """An id fragment that is safe in HTML ids, CSS selectors and URL fragments."""
    return _ID_UNSAFE.sub("-", text).strip("-").lower() or "x"


def el(tag: str, *children: Any, **attrs: Any) -> Markup:
    """``el("td", "x", class_="num")`` -> ``<td class="num">x</td>``; None children and attrs are dropped."""
    parts = [tag]
    for name, value in attrs.items():
        if value is None or value is False:
            continue
        name = name.rstrip("_").replace("_", "-")
        parts.append(name if value is True else f'{name}="{esc(value)}"')
    body = "".join(esc(c) for c in children if c is not None)
    return Markup(f"<{' '.join(parts)}>{body}</{tag}>")


class Splices:
    """Text too long to build into the page whole (a 100,000-seed run's list of seeds), written into
    the file as it is made: :meth:`add` gives a marker to build into the page in its place, and
    :meth:`write` writes the page with each marker replaced by its text, escaped a chunk at a time.
    The bytes are those of the page built whole. A marker is an HTML comment carrying a nonce drawn
    per page: a run's text is escaped and sanitised SVG keeps no comment, so nothing else spells one."""

    def __init__(self) -> None:
        self._nonce = secrets.token_hex(16)
        self._parts: list[Callable[[], Iterable[str]]] = []

    def add(self, chunks: Callable[[], Iterable[str]]) -> Markup:
        """A marker for the text ``chunks()`` gives (plain text, escaped as it is written)."""
        self._parts.append(chunks)
        return Markup(f"<!--splice {self._nonce} {len(self._parts) - 1}-->")

    def write(self, page: str, fh: TextIO) -> None:
        at = 0
        for marker in re.finditer(f"<!--splice {self._nonce} ([0-9]+)-->", page):
            fh.write(page[at:marker.start()])
            for chunk in self._parts[int(marker.group(1))]():
                fh.write(esc(chunk))
            at = marker.end()
        fh.write(page[at:])


def fmt_number(value: float) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if not math.isfinite(value):
        return "n/a" if math.isnan(value) else str(value)
    if value != 0 and (abs(value) >= 1e6 or abs(value) < 1e-3):
        return f"{value:.3g}"
    return f"{value:.1f}" if abs(value) >= 100 else f"{value:.3f}"


def is_interval(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(value.get(k), int | float) for k in ("estimate", "low", "high"))


def fmt_interval(value: dict[str, Any]) -> str:
    return f"{fmt_number(value['estimate'])} [{fmt_number(value['low'])}, {fmt_number(value['high'])}]"


def fmt_cell(value: Any) -> str:
    """How a table cell from a summary reads: numbers rounded, intervals as ``est [low, high]``."""
    if value is None:
        return "–"
    if isinstance(value, bool | int | float):
        return fmt_number(value)
    if is_interval(value):
        return fmt_interval(value)
    if isinstance(value, list | tuple) and all(isinstance(v, str | int | float) for v in value):
        return ", ".join(fmt_cell(v) for v in value)
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


STYLE = """
:root { --fg: #1d232b; --muted: #5b6672; --line: #d7dde4; --bad: #a4161a; --bad-bg: #fff1f0;
        --ok: #1b6e3a; --head: #f3f5f8; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1180px; padding: 24px; color: var(--fg);
       font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 20px; margin: 32px 0 8px; border-bottom: 2px solid var(--line); }
h3 { font-size: 16px; margin: 20px 0 6px; }
nav ul { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 6px 18px; }
table { border-collapse: collapse; margin: 6px 0 4px; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: var(--head); font-weight: 600; }
td.num { text-align: right; }
code, .command { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12.5px; }
.command { color: var(--muted); margin: 2px 0 10px; }
.command::before { content: "regenerate: "; font-family: system-ui, sans-serif; }
.facts { color: var(--muted); }
.problem { background: var(--bad-bg); border-left: 4px solid var(--bad); padding: 6px 10px; margin: 8px 0; }
.problem code { color: var(--bad); }
.status-error, .status-stopped { color: var(--bad); } .status-ok { color: var(--ok); }
figure { margin: 10px 0 18px; } figcaption { font-weight: 600; margin-bottom: 4px; }
figure svg { max-width: 100%; height: auto; }
figure { overflow-x: auto; } figure svg.plot { max-width: none; } /* the shared plots keep 11 px labels: wide ones scroll */
.scroll { overflow-x: auto; }
#episodes-table td:nth-child(n+5):nth-child(-n+11) { text-align: right; }
#episodes-table td:first-child { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12.5px; }
details > summary { cursor: pointer; font-weight: 600; margin: 8px 0; }
"""
