"""How real pipelines corrupt an artifact between the observation and the action.

Each corruption is a plain function ``str -> str`` over the artifact and names the label the
grader must assign (environments/contracts/integrity.py). A corruption that would not change a
given artifact does not apply to it (``apply`` returns None). Sources of each pattern:

* truncation: context or display limits cut long URLs (published ContractBench long-token tasks)
* URL-decoding: a tool or template unquotes %2B / %2F / %3D (Azure SAS sig issues)
* whitespace: line wrapping at 76 columns or a pasted newline (urlsplit drops it silently)
* case change: a "normalising" step lower- or upper-cases a token
* JSON re-serialisation: a body parsed and dumped again (key order, spacing) before HMAC check
* base64 padding loss: '=' stripped as in base64url (RFC 7515 style) where padding is required
* Unicode normalisation: NFKC applied to text that is signed as raw UTF-8
* auto-link trailing characters: markdown linkifiers keep a closing ')' or '.'
* visible link text: the text of an anchor copied instead of its href
* HTML entity escaping: '&' written as '&amp;' by an HTML renderer
* zero-width space: rich-text editors and chat clients insert U+200B at wrap points
* homoglyphs: a "font fix" or an OCR step swaps Latin letters for Cyrillic look-alikes
* smart quotes: word processors and Markdown typographers curl straight quotes
* parameter appended / duplicated / dropped: link trackers add utm_* parameters, a template
  repeats the last parameter, a URL "cleaner" removes the one it does not know
* re-encoding: a second percent-encoding pass ('%' -> '%25'), or base64 -> base64url
* extension: a "#" fragment or a footnote marker glued to the artifact
* typo: one character inside the artifact changed (a model's copy error)
* empty: a template variable that failed to render sends an empty string
* made-up: the model invents a value of the same length instead of copying it
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote

from environments.contracts.integrity import HOMOGLYPHS, SMART_QUOTES


@dataclass(frozen=True)
class Corruption:
    name: str
    label: str
    transform: Callable[[str], str | None]
    needs_display: bool = False
    not_for: frozenset[str] = frozenset()  # families where the corrupted value is a valid request

    def apply(self, value: str, display: str | None = None) -> str | None:
        """The corrupted artifact, or None when this corruption does not apply to it."""
        if self.needs_display:
            return display if display is not None and display != value else None
        out = self.transform(value)
        return out if out is not None and out != value else None


def truncate(value: str) -> str | None:
    return value[: max(1, len(value) * 3 // 4)] if len(value) >= 4 else None


def wrap_newline(value: str) -> str | None:
    if len(value) < 4:
        return None
    at = min(76, len(value) // 2)
    return value[:at] + "\n" + value[at:]


def change_case(value: str) -> str | None:
    return value.upper() if value.upper() != value else value.lower()


def reserialise(value: str) -> str | None:
    try:
        obj = json.loads(value)
    except ValueError:
        return None
    return json.dumps(obj, sort_keys=True, ensure_ascii=False) if isinstance(obj, dict) else None


def strip_padding(value: str) -> str | None:
    """Base64 '=' padding dropped, raw or percent-encoded (a SAS ``sig=...%3D`` at the URL's end)."""
    if value.endswith("="):
        return value.rstrip("=")
    stripped = value
    while stripped.endswith("%3D"):
        stripped = stripped[:-3]
    return stripped if stripped != value else None


def nfkc(value: str) -> str | None:
    return unicodedata.normalize("NFKC", value)


def autolink(value: str) -> str | None:
    return value + ")" if value.startswith(("http://", "https://")) else None


def html_escape(value: str) -> str | None:
    return html.escape(value, quote=False)


_BASE64 = re.compile(r"[A-Za-z0-9+/]+=*")


def zero_width(value: str) -> str | None:
    return value[: len(value) // 2] + "\u200b" + value[len(value) // 2:] if len(value) >= 4 else None


def homoglyph(value: str) -> str | None:
    at = next((i for i, ch in enumerate(value) if ch in HOMOGLYPHS), None)
    return None if at is None else value[:at] + HOMOGLYPHS[value[at]] + value[at + 1:]


_CURLY = {v: k for k, v in reversed(SMART_QUOTES.items())}  # '"' -> U+201C, "'" -> U+2018


def smart_quotes(value: str) -> str | None:
    return "".join(_CURLY.get(ch, ch) for ch in value)


def _params(value: str) -> tuple[str, list[str]] | None:
    """(prefix up to and including '?', parameters) of a URL with a query or a form body."""
    if "?" in value:
        base, query = value.split("?", 1)
        return base + "?", query.split("&")
    return ("", value.split("&")) if "=" in value and "&" in value else None


def append_parameter(value: str) -> str | None:
    parts = _params(value)
    return None if parts is None else value + "&utm_source=chat"


def duplicate_parameter(value: str) -> str | None:
    parts = _params(value)
    return None if parts is None else value + "&" + parts[1][-1]


def drop_parameter(value: str) -> str | None:
    parts = _params(value)
    if parts is None or len(parts[1]) < 2:
        return None
    base, params = parts
    return base + "&".join(params[:1] + params[2:])  # a "cleaner" drops the second parameter


def reencode(value: str) -> str | None:
    if "%" in value:
        return value.replace("%", "%25")
    if not _BASE64.fullmatch(value):
        return None
    swapped = value.replace("+", "-").replace("/", "_")  # base64 -> base64url (RFC 4648 section 5)
    return swapped if swapped != value else None


def extend(value: str) -> str | None:
    return value + "#download" if value.startswith(("http://", "https://")) else value + "[1]"


def typo(value: str) -> str | None:
    if len(value) < 8:
        return None
    at = len(value) * 2 // 3
    ch = value[at]
    new = "7" if ch.isdigit() and ch != "7" else "8" if ch.isdigit() else "q" if ch.lower() != "q" else "z"
    return value[:at] + new + value[at + 1:]


def made_up(value: str) -> str | None:
    """A value of the same length with no relation to the artifact (a hex stream seeded by it)."""
    stream = ""
    while len(stream) < len(value):
        stream += hashlib.sha256((value + str(len(stream))).encode("utf-8", "surrogatepass")).hexdigest()
    return stream[: len(value)]


CORRUPTIONS: dict[str, Corruption] = {c.name: c for c in (
    Corruption("truncate", "TRUNCATED", truncate),
    Corruption("url-decode", "URL_DECODED", unquote),
    Corruption("newline", "WHITESPACE", wrap_newline),
    Corruption("case", "CASE_CHANGED", change_case),
    Corruption("json-reserialise", "RESERIALISED", reserialise),
    Corruption("padding", "PADDING_LOST", strip_padding),
    Corruption("unicode-nfkc", "UNICODE_NORMALISED", nfkc),
    Corruption("autolink", "AUTOLINK_TRAILING", autolink),
    Corruption("visible-text", "VISIBLE_TEXT_MISMATCH", lambda v: None, needs_display=True),
    Corruption("html-escape", "HTML_ESCAPED", html_escape),
    Corruption("zero-width", "INVISIBLE_CHARACTER", zero_width),
    Corruption("homoglyph", "HOMOGLYPH", homoglyph),
    Corruption("smart-quotes", "SMART_QUOTES", smart_quotes),
    Corruption("param-append", "PARAMETER_APPENDED", append_parameter),
    Corruption("param-duplicate", "PARAMETER_DUPLICATED", duplicate_parameter),
    Corruption("param-drop", "PARAMETER_DROPPED", drop_parameter),
    Corruption("reencode", "ENCODING_CHANGED", reencode),
    Corruption("extend", "EXTENDED", extend),
    Corruption("typo", "MUTATED_TOKEN", typo),
    # an empty PaginationToken asks for the first page again (AWS GetResources, AIP-158)
    Corruption("empty", "MISSING_TOKEN", lambda value: "", not_for=frozenset({"page-token"})),
    Corruption("made-up", "WRONG_VALUE", made_up),
)}
