"""Keys and MACs that make a run's records unforgeable by whoever lacks the key.

A SHA-256 chain shows that a log was not changed *by accident*: anyone can edit a record and
re-hash every record after it, and the chain holds again. With a secret key (the environment
variable ``AGENTBED_LOG_KEY``, or a file named by ``AGENTBED_LOG_KEY_FILE``), each log's footer
and each run manifest also carry an HMAC-SHA256 (RFC 2104) under that key, and ``verify``
checks it, so a re-chained forgery fails unless the forger holds the key.
"""

from __future__ import annotations

import hashlib
import hmac
import os

from agentbed.errors import UsageError

KEY_VAR = "AGENTBED_LOG_KEY"
KEY_FILE_VAR = "AGENTBED_LOG_KEY_FILE"
MIN_KEY_BYTES = 16


def log_key() -> bytes | None:
    """The key from the environment, or None when there is none."""
    text = os.environ.get(KEY_VAR)
    if text:
        key = text.encode("utf-8")
        source = KEY_VAR
    elif os.environ.get(KEY_FILE_VAR):
        path = os.environ[KEY_FILE_VAR]
        from agentbed.validate import read_bytes

        try:
            key = read_bytes(path, limit=1 << 16, what="key file").strip()
        except UsageError as exc:
            raise UsageError(f"{KEY_FILE_VAR}={exc}") from None
        source = f"{KEY_FILE_VAR}={path}"
    else:
        return None
    if len(key) < MIN_KEY_BYTES:
        raise UsageError(f"{source}: a key must have at least {MIN_KEY_BYTES} bytes")
    return key


def key_id(key: bytes) -> str:
    """A name for the key that reveals nothing of it: the first 16 hex digits of its HMAC over a
    fixed label (so a run can say which key signed it, and a wrong key is named as such)."""
    return mac(key, b"agentbed key id")[:16]


def mac(key: bytes, data: bytes) -> str:
    return hmac.new(key, data, hashlib.sha256).hexdigest()


def mac_ok(key: bytes, data: bytes, claimed: str) -> bool:
    return hmac.compare_digest(mac(key, data), claimed)


def signature_unchecked(signer: str | None) -> str:
    """What every surface says of a signed run checked without its key: plainly, that the
    signature was not checked and why (``signer``: the manifest's key id)."""
    return (f"signature (HMAC) NOT checked: the run is signed (key id {signer or '?'}) but no key was given "
            f"({KEY_VAR} unset)")


def key_note(key: bytes | None) -> str:
    """What a verification without a key can and cannot show."""
    if key is not None:
        return "HMACs checked with the key"
    return (f"no key ({KEY_VAR} unset): the hash chain catches accidental changes, not an edit whose "
            "author re-hashed the chain")
