"""PyYAML's parse answered once per text, for the tests that run AgentDojo's own runner.

AgentDojo's runner loads a suite's environment text again and again (every task without an attack
the default one, every benchmark version the same few), each time through PyYAML's pure-Python
parser. Under :func:`parse_once` the parse stays PyYAML's, and each caller gets a fresh deep copy
of what it returned, so nothing a caller mutates is shared. A wrong answer could only make
AgentDojo's scores or requests differ from agentbed's, which those tests compare."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import yaml


def parse_once(monkeypatch: Any, parsed: Callable[[str], Any]) -> None:
    """``yaml.safe_load`` of a text answered by ``parsed`` (a memo of PyYAML's own safe_load), copied;
    a stream is read as before."""
    parse = yaml.safe_load
    monkeypatch.setattr(yaml, "safe_load", lambda stream: copy.deepcopy(parsed(stream)) if isinstance(stream, str)
                        else parse(stream))
