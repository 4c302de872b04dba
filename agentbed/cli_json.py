"""``--json`` output, one convention for every verb that reports.

A verb given ``--json`` prints exactly one JSON document on stdout and nothing else there
(progress and problems go to stderr). Every document is an object whose first two fields say
what it is: ``{"format": "agentbed.cli/1", "command": VERB, ...}``; the rest is the verb's own
(docs/cli.md, "Machine-readable output", lists each verb's fields). Numbers are finite: a NaN or
an infinity (an undefined interval, a missing value) is written as ``null``, so any strict JSON
reader can parse it.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Mapping
from typing import IO, Any

FORMAT = "agentbed.cli/1"
emitted: list[str] = []  # the documents this invocation printed (cli.main clears it): one at most


def add_json_flag(parser: argparse.ArgumentParser, what: str = "the result") -> None:
    """The ``--json`` flag, with the same wording on every verb."""
    parser.add_argument("--json", action="store_true",
                        help=f"print {what} as one JSON document on stdout (schema: docs/cli.md)")


def finite(value: Any) -> Any:
    """``value`` with every non-finite float replaced by None (recursively through dicts, lists, tuples)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def document(command: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """The document a verb prints: format and command first, then its own fields."""
    return {"format": FORMAT, "command": command, **finite(dict(fields))}


def emit(command: str, fields: Mapping[str, Any], stream: IO[str] | None = None) -> None:
    """Print the verb's one JSON document (a line of its own) on stdout."""
    text = json.dumps(document(command, fields), allow_nan=False, default=str, ensure_ascii=False)
    print(text, file=stream or sys.stdout, flush=True)
    emitted.append(command)
