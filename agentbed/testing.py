"""Helpers for tests that need an external component (Docker, Java, alfworld, Chromium).

Under ``CI=true`` a missing component is a failure that says what to install; elsewhere the
test is skipped with the same message. Nothing is skipped silently.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def require(available: bool, what: str, how: str) -> None:
    """Fail (in CI) or skip (elsewhere) unless ``available``; ``how`` says how to install it."""
    if available:
        return
    message = f"{what} is not available: {how}"
    if in_ci():
        pytest.fail(f"CI=true and {message}", pytrace=False)
    pytest.skip(message)


@contextmanager
def chromium_browser(*args: str) -> Iterator[Any]:
    """Debian's headless Chromium driven by Playwright (its own browser builds are never fetched:
    ``executable_path`` is the system one), launched with ``args`` beside the usual flags."""
    chromium = shutil.which("chromium")
    require(chromium is not None, "Debian's chromium (headless browser for the viewer and report tests)",
            "run scripts/setup-chromium as root, or: apt-get update && apt-get install -y chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        require(False, "playwright (the dev extra)", "bash scripts/setup test")
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu", *args])
        try:
            yield launched
        finally:
            launched.close()


def episode_bytes(path: str | os.PathLike[str], *, other_header: tuple[str, ...] = ()) -> bytes:
    """A log's bytes as they would be without its run binding (the header's ``run`` member,
    :mod:`agentbed.binding`), re-chained without a key: what two runs of one plan must agree on
    byte for byte, whatever executor, concurrency or completion order (each run's id differs).
    ``other_header`` names further header members to leave out (``("provenance",)`` compares a
    log made by an installed copy, which records no commit, with one made in a checkout)."""
    from agentbed.log import GENESIS, _seal

    prev, out = GENESIS, []
    with open(path, "rb") as fh:
        for line in fh:
            record = json.loads(line)
            header = ("run", *other_header) if record.get("type") == "header" else ()
            for name in ("prev", "hash", "mac", *header):
                record.pop(name, None)
            text, prev = _seal(record, prev)
            out.append(text)
    return ("\n".join(out) + "\n").encode("utf-8")


def cli_in_process(*argv: str, cwd: str | os.PathLike[str] | None = None) -> subprocess.CompletedProcess[str]:
    """``agentbed ARGV`` through :func:`agentbed.cli.main` in this process (from ``cwd`` when given):
    its exit status, stdout and stderr, as ``subprocess.run(..., capture_output=True, text=True)``
    gives them for the console script, without an interpreter start (about 0.4 s of CPU each). A
    ``SystemExit`` is its status, as the process would exit. For tests of what a command does, not
    of the process's start-up."""
    from agentbed.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.ExitStack() as stack:
        if cwd is not None:
            stack.enter_context(contextlib.chdir(cwd))
        stack.enter_context(contextlib.redirect_stdout(out))
        stack.enter_context(contextlib.redirect_stderr(err))
        try:
            status = main(list(argv)) or 0
        except SystemExit as exit_:  # as the interpreter exits: None is 0, a message goes to stderr as 1
            status = 0 if exit_.code is None else exit_.code if isinstance(exit_.code, int) else 1
            if not isinstance(exit_.code, int | None):
                print(exit_.code, file=err)
    return subprocess.CompletedProcess(["agentbed", *argv], status, out.getvalue(), err.getvalue())
