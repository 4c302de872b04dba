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
"""

from __future__ import annotations

import html
import json
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote


@dataclass(frozen=True)
class Corruption:
    name: str
    label: str
    transform: Callable[[str], str | None]
    needs_display: bool = False

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
)}
