"""``ast.parse`` that is safe to call from several threads of one process.

CPython 3.11 keeps the depth of its AST conversion in per-interpreter state: a parse in another
thread that runs while one is converting (a finaliser run by the garbage collector lets threads
switch mid-way) fails with ``SystemError: AST constructor recursion depth mismatch``. agentbed runs
episodes in threads (a CoCoder team, model-bound runs, in-process runs of a host program), so every
parse of the project goes through :func:`parse_python`: one at a time, and that error, which says
nothing of the source, retried (each call starts the depth afresh). A parse by other code in
another thread can still collide with one of ours; the retry covers that.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()
ATTEMPTS = 3


def parse_python(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)``, serialised and retried on the depth-mismatch SystemError;
    every other error (SyntaxError, RecursionError, ...) is raised as ``ast.parse`` raises it."""
    with _LOCK:
        for attempt in range(ATTEMPTS):
            try:
                return ast.parse(source, filename=filename)
            except SystemError as exc:
                if "recursion depth mismatch" not in str(exc) or attempt == ATTEMPTS - 1:
                    raise
    raise AssertionError("unreachable")
