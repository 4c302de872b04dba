"""Backoff, error classification, Retry-After parsing and confidence parsing."""

from __future__ import annotations

import random

import httpx
import openai
import pytest
from langchain_core.exceptions import ModelAuthenticationError, ModelRateLimitError

from agentbed.agents.confidence import parse_confidence, risk_from_confidence
from agentbed.agents.retry import Backoff, call_with_retries, is_transient, retry_after_seconds


def status_error(code: int, **headers: str) -> openai.APIStatusError:
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx.Response(code, headers=headers, request=request)
    cls = {429: openai.RateLimitError, 500: openai.InternalServerError, 503: openai.InternalServerError,
           400: openai.BadRequestError, 401: openai.AuthenticationError}.get(code, openai.APIStatusError)
    return cls("scripted", response=response, body=None)


def test_backoff_grows_exponentially_within_jitter_and_cap():
    backoff = Backoff(base=1.0, factor=2.0, max_delay=5.0, jitter=0.5)
    rng = random.Random(1)
    delays = [backoff.delay(a, rng) for a in range(5)]
    for attempt, delay in enumerate(delays):
        nominal = min(5.0, 2.0 ** attempt)
        assert nominal * 0.5 <= delay <= nominal
    assert delays == [backoff.delay(a, r) for r in [random.Random(1)] for a in range(5)]


def test_retry_after_is_a_floor_capped_by_max_delay():
    backoff = Backoff(base=0.1, max_delay=3.0)
    assert backoff.delay(0, random.Random(0), retry_after=2.0) == 2.0
    assert backoff.delay(0, random.Random(0), retry_after=90.0) == 3.0


def test_invalid_backoff_is_refused():
    with pytest.raises(ValueError, match="jitter"):
        Backoff(jitter=2.0)


@pytest.mark.parametrize("exc, transient", [
    (status_error(429), True), (status_error(500), True), (status_error(503), True),
    (status_error(400), False), (status_error(401), False),
    (openai.APITimeoutError(httpx.Request("POST", "http://127.0.0.1")), True),
    (httpx.ConnectError("refused"), True), (TimeoutError(), True), (ConnectionResetError(), True),
    (ModelRateLimitError("429"), True), (ModelAuthenticationError("401"), False), (ValueError("x"), False),
])
def test_transient_errors_are_told_from_permanent_ones(exc, transient):
    assert is_transient(exc) is transient


def test_retry_after_headers():
    assert retry_after_seconds(status_error(429, **{"retry-after": "3"})) == 3.0
    assert retry_after_seconds(status_error(429, **{"retry-after-ms": "250"})) == 0.25
    date = "Wed, 21 Oct 2015 07:28:10 GMT"
    assert retry_after_seconds(status_error(429, **{"retry-after": date}), now=lambda: 1445412480.0) == 10.0
    assert retry_after_seconds(status_error(429, **{"retry-after": "soon"})) is None
    for endless in ("inf", "nan", "1e999", "-inf"):  # no time at all: as if not said (never Infinity in a log)
        assert retry_after_seconds(status_error(429, **{"retry-after": endless})) is None
    assert retry_after_seconds(status_error(429, **{"retry-after-ms": "1e999"})) is None
    assert retry_after_seconds(status_error(500)) is None
    assert retry_after_seconds(ValueError()) is None


def test_call_with_retries_records_each_failed_attempt():
    failures = [status_error(429, **{"retry-after": "1.5"}), status_error(503)]

    def flaky() -> str:
        if failures:
            raise failures.pop(0)
        return "ok"

    slept: list[float] = []
    result, records = call_with_retries(flaky, max_retries=5, backoff=Backoff(base=0.01), rng=random.Random(0),
                                        sleep=slept.append)
    assert result == "ok"
    assert [(r.status, r.retry_after) for r in records] == [(429, 1.5), (503, None)]
    assert slept[0] == 1.5 and slept == [r.delay for r in records]


def test_zero_retries_means_one_attempt():
    calls = []

    def failing() -> None:
        calls.append(1)
        raise status_error(500)

    with pytest.raises(openai.InternalServerError):
        call_with_retries(failing, max_retries=0, backoff=Backoff(), rng=random.Random(0), sleep=lambda s: None)
    assert len(calls) == 1


@pytest.mark.parametrize("text, expected", [
    ("confidence: 0.8", 0.8), ("Confidence = 80%", 0.8), ('{"confidence": .9}', 0.9), ("confidence 7/10", 0.7),
    ("**Confidence:** 0.65\nI'll fetch the token.", 0.65), ("confidence level: 95", 0.95),
    ("confidence: 0.2 ... on reflection, confidence: 0.6", 0.6), ("confidence: 1", 1.0), ("confidence: 0", 0.0),
    ("no number here", None), ("confidence: high", None), ("confidence: 250", None), ("confidence 3/0", None),
    ("", None), ("I am 90% sure", None),
])
def test_confidence_is_parsed_robustly(text, expected):
    value = parse_confidence(text)
    assert value == (pytest.approx(expected) if expected is not None else None)


def test_risk_is_one_minus_confidence():
    assert risk_from_confidence(0.8) == pytest.approx(0.2)
    assert risk_from_confidence(None) is None
