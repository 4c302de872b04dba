"""A model-call cache on disk: the provider's reply to one exact request, reused instead of a call.

The key is the SHA-256 of the provider and model, the full message list, the tool schemas, the
sampling parameters, the episode's seed and its epoch (the rollout number), so a hit is the
answer to the very request the agent would send. The endpoint's address is not in the key: a
local server (llama.cpp) picks a new port each time it starts, and the same model behind it
gives the same answers.

One entry is one JSON file, ``<dir>/<key[:2]>/<key>.json``, written to a temporary name and
renamed into place, so readers never see half an entry and several processes can share a
directory. An entry older than the expiry is a miss (and is overwritten by the next reply).
An entry that cannot be read or does not have the expected fields is a miss with a warning,
never a crash.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentbed.errors import UsageError

FORMAT = "agentbed.model-cache/1"
DEFAULT_EXPIRY_SECONDS = 7 * 24 * 3600.0
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


class CacheWarning(UserWarning):
    """A cache entry could not be used (it was corrupt or unreadable); the call went to the provider."""


def default_cache_dir() -> Path:
    """The per-user cache directory: ``$AGENTBED_CACHE_DIR``, else ``$XDG_CACHE_HOME/agentbed/models``,
    else ``~/.cache/agentbed/models``."""
    if os.environ.get("AGENTBED_CACHE_DIR"):
        return Path(os.environ["AGENTBED_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "agentbed" / "models"


def parse_duration(text: str, what: str = "--cache-expiry") -> float:
    """``"90s"``, ``"30m"``, ``"12h"``, ``"7d"``, ``"2w"`` or plain seconds; ``"never"`` for no expiry."""
    if text.strip().lower() in {"never", "none", "inf"}:
        return float("inf")
    match = _DURATION.match(text)
    if not match:
        raise UsageError(f"{what} {text!r}: expected a duration like 30m, 12h, 7d or never")
    return float(match.group(1)) * _UNIT_SECONDS[match.group(2)]


def cache_key(*, provider: str, model: str, messages: Sequence[Mapping[str, Any]], tools: Sequence[Any],
              params: Mapping[str, Any], seed: int, epoch: int) -> str:
    """The SHA-256 naming one request; every part is canonical JSON, so equal requests give equal keys."""
    request = {"format": FORMAT, "provider": provider, "model": model, "messages": list(messages),
               "tools": list(tools), "params": dict(params), "seed": seed, "epoch": epoch}
    text = json.dumps(request, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class CachedReply:
    """What the provider answered: the reply as langchain-core's ``message_to_dict`` gives it, and
    the tool-call argument text read from the HTTP response (id -> text) where there was one."""

    message: dict[str, Any]
    captured: dict[str, str]


class ModelCallCache:
    """Entries under ``directory``; ``expiry`` in seconds, measured from when this object was made
    (the start of a run), so that code freezing the system clock cannot make entries look fresh."""

    def __init__(self, directory: str | os.PathLike[str] | None = None, *,
                 expiry: float = DEFAULT_EXPIRY_SECONDS) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.expiry = expiry
        self._now = time.time()

    def path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> CachedReply | None:
        path = self.path(key)
        try:
            if self._now - path.stat().st_mtime > self.expiry:
                return None
            entry = json.loads(path.read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValueError, RecursionError) as exc:  # unreadable or not JSON
            warnings.warn(f"model cache: {path}: unreadable entry ignored ({type(exc).__name__}: {exc})",
                          CacheWarning, stacklevel=2)
            return None
        if (not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("key") != key
                or not isinstance(entry.get("message"), dict) or not isinstance(entry.get("captured"), dict)):
            warnings.warn(f"model cache: {path}: entry without the expected fields ignored", CacheWarning,
                          stacklevel=2)
            return None
        return CachedReply(entry["message"], {str(k): str(v) for k, v in entry["captured"].items()})

    def put(self, key: str, reply: CachedReply, **about: Any) -> None:
        """Store a reply (``about``: provider, model... kept beside it for people reading the cache)."""
        path = self.path(key)
        entry = {"format": FORMAT, "key": key, **about, "message": reply.message, "captured": reply.captured}
        data = json.dumps(entry, sort_keys=True, default=str).encode("utf-8")  # ASCII: lone surrogates survive
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.{id(reply)}.tmp")
            tmp.write_bytes(data)
            tmp.replace(path)
        except OSError as exc:  # a full or read-only cache must not end the episode
            warnings.warn(f"model cache: {path}: could not store the reply ({exc})", CacheWarning, stacklevel=2)
