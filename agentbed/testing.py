"""Helpers for tests that need an external component (Docker, Java, alfworld, Chromium).

Under ``CI=true`` a missing component is a failure that says what to install; elsewhere the
test is skipped with the same message. Nothing is skipped silently.
"""

from __future__ import annotations

import os

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
