"""Retrying provider calls: which errors are transient, and exponential backoff with seeded jitter.

The policy is ours, not the provider client's (the client is built with ``max_retries=0``),
so every retry is visible: :func:`call_with_retries` returns one :class:`RetryRecord` per
failed attempt, and when it gives up the last exception propagates with a note listing them.
"""

from __future__ import annotations

import email.utils
import json
import math
import random
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

import httpx

T = TypeVar("T")

# HTTP statuses worth another attempt: request timeout, conflict, rate limit, and server errors.
RETRYABLE_STATUS = frozenset({408, 409, 429})


class BadResponse(Exception):
    """The provider answered a call (HTTP 2xx) with a body that is no chat completion: empty, not
    JSON, cut short, or without a choice. Its failure, not the model's: retried like a 5xx, and an
    episode it ends is an errored one (kind ``bad_response``), never a failed attempt."""


def is_unreadable_answer(exc: BaseException) -> bool:
    """Whether a provider's client failed to read an answer rather than got an error: openai's or
    anthropic's ``APIResponseValidationError`` (a body not of the documented shape) or undecodable
    JSON. Only SDKs already imported are asked: one not imported raised nothing."""
    if isinstance(exc, json.JSONDecodeError):
        return True
    for name in ("openai", "anthropic"):
        kind = getattr(sys.modules.get(name), "APIResponseValidationError", None)
        if isinstance(kind, type) and isinstance(exc, kind):
            return True
    return False


@dataclass(frozen=True)
class Backoff:
    """Delay before retry ``attempt`` (0-based): ``base * factor**attempt`` capped at ``max_delay``,
    then shortened by up to ``jitter`` of itself at random, so that clients do not retry in step.

    A server's ``Retry-After`` is a floor (still capped at ``max_delay``).
    """

    base: float = 1.0
    factor: float = 2.0
    max_delay: float = 30.0
    jitter: float = 0.5

    def __post_init__(self) -> None:
        if self.base < 0 or self.factor < 1 or self.max_delay < 0 or not 0 <= self.jitter <= 1:
            raise ValueError(f"invalid backoff {self}: need base >= 0, factor >= 1, max_delay >= 0, 0 <= jitter <= 1")

    def delay(self, attempt: int, rng: random.Random, retry_after: float | None = None) -> float:
        nominal = min(self.max_delay, self.base * self.factor ** attempt)
        delay = nominal * (1.0 - self.jitter * rng.random())
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.max_delay))
        return delay


@dataclass(frozen=True)
class RetryRecord:
    """One failed attempt: what went wrong and how long we waited before the next one."""

    attempt: int
    error: str
    status: int | None
    retry_after: float | None
    delay: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def status_code(exc: BaseException) -> int | None:
    """The HTTP status an SDK exception carries, if any (openai, anthropic and httpx all expose one)."""
    code = getattr(exc, "status_code", None)
    if code is None:
        code = getattr(getattr(exc, "response", None), "status_code", None)
    return code if isinstance(code, int) else None


def is_transient(exc: BaseException) -> bool:
    """Whether another attempt may succeed: timeouts, lost connections, HTTP 408/409/429 and 5xx,
    and a malformed body (:class:`BadResponse`).

    LangChain's ``ModelError`` subclasses say so themselves (``is_retryable``); raw SDK and
    transport errors are classified by type and status code.
    """
    flag = getattr(type(exc), "is_retryable", None)
    if isinstance(flag, bool) and flag:
        return True
    if isinstance(exc, BadResponse | TimeoutError | ConnectionError | httpx.TimeoutException | httpx.NetworkError):
        return True
    try:
        import openai
    except ImportError:  # pragma: no cover - openai comes with langchain-openai
        openai = None  # type: ignore[assignment]
    if openai is not None and isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    code = status_code(exc)
    return code is not None and (code in RETRYABLE_STATUS or code >= 500)


def retry_after_seconds(exc: BaseException, now: Callable[[], float] = time.time) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms`` or ``Retry-After``), if it said."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    try:
        millis = headers.get("retry-after-ms")
        if millis is not None:
            seconds = float(millis) / 1000.0
        elif (value := headers.get("retry-after")) is None:
            return None
        else:
            try:
                seconds = float(value)
            except ValueError:
                seconds = email.utils.parsedate_to_datetime(value).timestamp() - now()
    except (TypeError, ValueError, OverflowError):
        return None
    # "inf", "nan", "1e999": no time at all (a log or an event cannot hold it as JSON)
    return max(0.0, seconds) if math.isfinite(seconds) else None


def throttle_signal(exc: BaseException) -> tuple[str, float | None] | None:
    """Whether a failed call says the provider is overloaded, and how: ``("rate_limit", wait)`` for
    HTTP 429, ``("retry_after", wait)`` for another status with a ``Retry-After``, ``("timeout", None)``
    for a timeout; None otherwise (a 500 or a dropped connection says nothing about load)."""
    code = status_code(exc)
    wait = retry_after_seconds(exc)
    if code == 429:
        return "rate_limit", wait
    if wait is not None:
        return "retry_after", wait
    timeout_types: tuple[type[BaseException], ...] = (TimeoutError, httpx.TimeoutException)
    try:
        import openai

        timeout_types += (openai.APITimeoutError,)
    except ImportError:  # pragma: no cover - openai comes with langchain-openai
        pass
    if isinstance(exc, timeout_types) or code == 408:
        return "timeout", None
    return None


def call_with_retries(call: Callable[[], T], *, max_retries: int, backoff: Backoff, rng: random.Random,
                      sleep: Callable[[float], None] = time.sleep) -> tuple[T, list[RetryRecord]]:
    """Run ``call``; on a transient error wait and try again, at most ``max_retries`` more times.

    Returns the result and the failed attempts. A permanent error, or a transient one after the
    last retry, propagates unchanged except for a note summarising the attempts.
    """
    records: list[RetryRecord] = []
    for attempt in range(max_retries + 1):
        try:
            return call(), records
        except Exception as exc:
            if not is_transient(exc) or attempt == max_retries:
                if records or is_transient(exc):
                    add_note(exc, f"agentbed: provider call failed after {attempt + 1} attempt(s): "
                             + "; ".join(r.error for r in records + [_record(exc, attempt, 0.0)]))
                raise
            wait = retry_after_seconds(exc)
            delay = backoff.delay(attempt, rng, wait)
            records.append(_record(exc, attempt, delay, wait))
            sleep(delay)
    raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises


def _record(exc: BaseException, attempt: int, delay: float, retry_after: float | None = None) -> RetryRecord:
    code = status_code(exc)
    text = f"{type(exc).__name__}" + (f" (HTTP {code})" if code is not None else "")
    return RetryRecord(attempt=attempt, error=text, status=code, retry_after=retry_after, delay=delay)


def add_note(exc: BaseException, note: str) -> None:
    """``exc.add_note(note)``, also on an exception whose ``__notes__`` is not a list (a tuple, set
    by its class or its raiser): there ``add_note`` raises TypeError, which replaced the provider's
    error in the episode's log with agentbed's own (session 18's probe)."""
    try:
        exc.add_note(note)
    except TypeError:
        try:
            exc.__notes__ = [*(getattr(exc, "__notes__", None) or ()), note]
        except (AttributeError, TypeError):  # no instance attributes at all: the note is lost, not the error
            pass


def mark_provider_failure(exc: BaseException) -> None:
    """Note on an exception the provider's client raised (after any retries) that it is the
    provider's failure, when no kind of :mod:`agentbed.problems` names it already: an HTTP status
    agentbed has no kind for (402 for an exhausted quota, 408, 413, 451...) or a reply the client
    could not build (a content of the wrong type). Without the note such an episode counted as a
    failed attempt of the model, a score (session 17's probe)."""
    from agentbed.problems import OTHER, PROVIDER_NOTE, classify

    if classify("".join(traceback.format_exception_only(exc))) is OTHER:
        add_note(exc, PROVIDER_NOTE)
