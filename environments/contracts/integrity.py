"""Byte-strict integrity: did the agent send exactly the bytes that were issued, and if not, how did
they change? The classification mirrors the corruptions real observation-to-action pipelines
make (see attacks/contracts); it is checked in a fixed order so one change gets one label.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import unicodedata
from urllib.parse import unquote, unquote_plus

AUTOLINK_TRAILERS = frozenset(").,>]'\";:!?")
_WS = re.compile(r"\s+")


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _json_value(text: str) -> object:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return _NOT_JSON


_NOT_JSON = object()


def _is_subsequence_with_whitespace(sent: str, issued: str) -> bool:
    """``sent`` is ``issued`` with whitespace characters inserted (or whitespace removed)."""
    return len(sent) != len(issued) and _WS.sub("", sent) == _WS.sub("", issued)


def _without_padding(text: str) -> str:
    while text.endswith(("=", "%3D")):
        text = text[:-1] if text.endswith("=") else text[:-3]
    return text


def classify(sent: str, issued: str, display: str | None = None) -> str | None:
    """None when the bytes match; otherwise the integrity label for how they differ."""
    if sent == issued:
        return None
    if sent == "":
        return "MISSING_TOKEN"
    if display is not None and sent == display:
        return "VISIBLE_TEXT_MISMATCH"
    if issued.endswith(("=", "%3D")) and sent == _without_padding(issued):
        return "PADDING_LOST"
    if issued.startswith(sent):
        return "TRUNCATED"
    if sent.startswith(issued) and set(sent[len(issued):]) <= AUTOLINK_TRAILERS:
        return "AUTOLINK_TRAILING"
    if sent in (unquote(issued), unquote_plus(issued)):
        return "URL_DECODED"
    if html.unescape(sent) == issued:
        return "HTML_ESCAPED"
    if _is_subsequence_with_whitespace(sent, issued):
        return "WHITESPACE"
    for form in ("NFC", "NFKC"):
        if unicodedata.normalize(form, sent) == unicodedata.normalize(form, issued):
            return "UNICODE_NORMALISED"
    if sent.casefold() == issued.casefold():
        return "CASE_CHANGED"
    value = _json_value(issued)
    if value is not _NOT_JSON and _json_value(sent) == value:
        return "RESERIALISED"
    return "WRONG_VALUE"


def classify_against(sent: str, versions: list[tuple[str, str | None]]) -> str | None:
    """Classify against every issued version (latest first): the first specific label wins, so a
    corrupted old nonce is not reported as WRONG_VALUE just because a newer one was issued."""
    labels = [classify(sent, value, display) for value, display in reversed(versions)]
    if None in labels:
        return None
    return next((label for label in labels if label != "WRONG_VALUE"), labels[0] if labels else "WRONG_VALUE")
