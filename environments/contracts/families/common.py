"""Small helpers shared by the family modules: seeded random tokens and HMACs."""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Callable
from typing import Any
from urllib.parse import SplitResult, parse_qsl, urlsplit


def random_bytes(rng: Any, n: int) -> bytes:
    """``n`` bytes from the episode's seeded generator (numpy Generator)."""
    return bytes(rng.integers(0, 256, size=n, dtype="uint8").tolist())


def b64url(data: bytes, padding: bool = False) -> str:
    text = base64.urlsafe_b64encode(data).decode("ascii")
    return text if padding else text.rstrip("=")


def token(rng: Any, n: int = 24, prefix: str = "") -> str:
    return prefix + b64url(random_bytes(rng, n))


def hex_token(rng: Any, n: int = 16) -> str:
    return random_bytes(rng, n).hex()


def hmac_sha256_hex(key: bytes | str, message: bytes | str) -> str:
    key = key.encode() if isinstance(key, str) else key
    message = message.encode("utf-8") if isinstance(message, str) else message
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def equal(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode("utf-8", "surrogatepass"), b.encode("utf-8", "surrogatepass"))


def unreachable(host: str) -> Any:
    """The answer to a URL whose scheme or host is not the issuing service's: the request never
    reaches the verifier, so the sandbox's HTTP client fails as curl does (error 6)."""
    from environments.contracts.family import reject_integrity

    return reject_integrity(502, {"error": "could_not_resolve_host",
                                  "message": f"curl: (6) Could not resolve host: {host[:120]}"})


CURL_BAD_URL = "curl: (3) URL using bad/illegal format or missing URL"


def curl_refuses(url: str) -> Any | None:
    """The sandbox's HTTP client is curl: it refuses an empty URL or one with a control character
    or space (a newline a chat UI wrapped in, a tab) before sending anything (curl 7.88, error 3,
    CURLE_URL_MALFORMAT), where Python's urlsplit would silently drop a newline or tab."""
    from environments.contracts.family import reject_integrity

    if url == "" or any(ord(c) <= 0x20 or ord(c) == 0x7F for c in url):
        return reject_integrity(502, {"error": "url_malformed", "message": CURL_BAD_URL})
    return None


def single_valued(query: list[tuple[str, str]], names: tuple[str, ...]) -> bool:
    """Whether each of ``names`` occurs at most once in the query (a duplicated signed
    parameter is ambiguous; every verifier here refuses it)."""
    keys = [k for k, _ in query]
    return all(keys.count(n) <= 1 for n in names)


def addressed(url: str, serves: Callable[[str], bool]) -> tuple[SplitResult, list[tuple[str, str]]] | Any:
    """(parts, query pairs) of a URL for a service whose hosts ``serves`` accepts over http(s),
    or curl's answer when the URL cannot reach that service."""
    refused = curl_refuses(url)
    if refused is not None:
        return refused
    try:
        parts = urlsplit(url)
        query = parse_qsl(parts.query, keep_blank_values=True)
        host = parts.hostname or ""
    except ValueError:
        return unreachable(url[:60])
    if parts.scheme not in ("https", "http") or not serves(host):
        return unreachable(host or url[:60])
    return parts, query
