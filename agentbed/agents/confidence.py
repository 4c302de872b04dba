"""The confidence a model states in its reply, read robustly, and the risk derived from it.

The system prompt asks the model to write ``confidence: <number between 0 and 1>`` beside its
tool call (in the text, never inside the tool arguments, whose bytes must stay as written).
Models answer in many shapes: ``confidence: 0.8``, ``Confidence = 80%``, ``"confidence": .9``,
``confidence 7/10``. Anything else, or a number that is not a probability, gives ``None``.
"""

from __future__ import annotations

import math
import re
from typing import Any

_NUMBER = r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
_PATTERN = re.compile(
    r"\bconfidence\b[\"'*_\s]*(?:level|score)?[\"'*_\s]*[:=]?[\"'*_\s]*" + _NUMBER + r"\s*(%|/\s*" + _NUMBER + r")?",
    re.IGNORECASE,
)
# Looking further than this into a reply would only find numbers that are not the confidence.
_MAX_SCAN = 20_000


def content_text(content: Any) -> str:
    """The text of a message's content, whether a string or a list of content blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
        return "\n".join(parts)
    return ""


def parse_confidence(text: str) -> float | None:
    """The last confidence stated in ``text`` as a probability in [0, 1], or ``None``.

    A percentage (``80%``) or a fraction (``8/10``) is scaled; a bare number above 1 and at
    most 100 is read as a percentage; anything else out of range is ignored.
    """
    found = None
    for match in _PATTERN.finditer(text[:_MAX_SCAN]):
        value = _as_probability(match.group(1), match.group(2), match.group(3))
        if value is not None:
            found = value
    return found


def risk_from_confidence(confidence: float | None) -> float | None:
    """The runner's risk scalar: the model's stated probability of being wrong."""
    return None if confidence is None else round(1.0 - confidence, 12)


def _as_probability(number: str, suffix: str | None, denominator: str | None) -> float | None:
    try:
        value = float(number)
    except ValueError:
        return None
    if suffix and suffix.startswith("/"):
        try:
            scale = float(denominator or "")
        except ValueError:
            return None
        if scale <= 0:
            return None
        value /= scale
    elif suffix == "%" or 1.0 < value <= 100.0:
        value /= 100.0
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        return None
    return value
