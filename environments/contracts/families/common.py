"""Small helpers shared by the family modules: seeded random tokens and HMACs."""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Any


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
