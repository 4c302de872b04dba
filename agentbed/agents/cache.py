"""A model-call cache on disk: the provider's reply to one exact request, reused instead of a call.

The key is the SHA-256 of the provider and model, the endpoint, the full message list, the tool
schemas, the sampling parameters, the episode's seed and its epoch (the rollout number), so a hit
is the answer to the very request the agent would send. The endpoint is the base URL the client
sends to (:func:`endpoint_of`, without credentials or query), so two servers answering under one
model name (two local OpenAI-compatible servers, a stub and a real endpoint) never share entries.
The llama.cpp server a run starts itself is the endpoint ``local-server``, not its address: it
picks a new port each time it starts, and the same weights behind it give the same answers.
Entries stored before the endpoint entered the key (session 19) are misses for any model whose
client names a base URL (every OpenAI-format one): the request is made again once and stored
under its new key; the old entries are left to expire.

Nothing nondeterministic is in the key: the conversation is reduced to what a provider answers
(:func:`request_messages`: roles, text, tool calls and tool answers), and the ids a provider
draws at random for each reply and each tool call (``chatcmpl-...``, ``call_...``) are replaced by
their order of appearance, so the same conversation gives the same key in any run.

One entry is one JSON file, ``<dir>/<key[:2]>/<key>.json``, written to a temporary name and
*linked* into place only if no entry is there yet (first writer wins), so readers never see half
an entry and concurrent runs sharing a directory never overwrite (steal) each other's entries:
:meth:`ModelCallCache.put` returns the entry that is stored, and an agent that lost the race
continues with the winner's reply, so both runs' logs agree with what a rerun will read. An
entry older than the expiry is a miss (and is replaced by the next reply). An entry that cannot
be read or does not have the expected fields is a miss with a warning, never a crash.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import threading
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


_ID_FIELDS = ("id", "tool_call_id")


def request_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The part of each serialised message (langchain-core's ``message_to_dict``) that a provider
    answers, with every provider-drawn id replaced by its order of appearance: no response ids,
    timestamps, fingerprints or usage."""
    ids: dict[str, str] = {}

    def canonical_id(value: Any) -> Any:
        if not isinstance(value, str):
            return value
        return ids.setdefault(value, f"id{len(ids)}")

    out = []
    for message in messages:
        data = message.get("data", {}) if isinstance(message.get("data"), Mapping) else {}
        entry: dict[str, Any] = {"type": message.get("type"), "content": data.get("content")}
        if data.get("tool_call_id") is not None:
            entry["tool_call_id"] = canonical_id(data["tool_call_id"])
        calls = data.get("tool_calls") or []
        if calls:
            entry["tool_calls"] = [{"id": canonical_id(c.get("id")), "name": c.get("name"), "args": c.get("args")}
                                   for c in calls if isinstance(c, Mapping)]
        raw = (data.get("additional_kwargs") or {}).get("tool_calls") if isinstance(
            data.get("additional_kwargs"), Mapping) else None
        if raw:  # the argument text as sent back to the provider
            entry["raw_tool_calls"] = [
                {"id": canonical_id(c.get("id")), "function": c.get("function")} for c in raw if isinstance(c, Mapping)]
        out.append(entry)
    return out


def endpoint_of(chat_model: Any) -> str | None:
    """The base URL a LangChain chat model's client sends to, as ``scheme://host:port/path``
    (no user, password, query or trailing slash); None for a model that names none (a fake one)."""
    from urllib.parse import urlsplit

    client = getattr(chat_model, "root_client", None)  # the OpenAI SDK's: what it really sends to
    for value in (getattr(client, "base_url", None), *(getattr(chat_model, name, None) for name in (
            "openai_api_base", "base_url", "anthropic_api_url", "azure_endpoint", "endpoint_url", "api_base"))):
        if value is None or not str(value).strip():
            continue
        try:
            url = urlsplit(str(value).strip())
            port = f":{url.port}" if url.port else ""
        except ValueError:  # not a URL we can read: the text itself, credentials and all stay hashed
            return str(value)
        host = (url.hostname or "").lower()
        return f"{url.scheme.lower()}://{'[' + host + ']' if ':' in host else host}{port}{url.path.rstrip('/')}"
    return None


def cache_key(*, provider: str, model: str | None, messages: Sequence[Mapping[str, Any]], tools: Sequence[Any],
              params: Mapping[str, Any], seed: int, epoch: int) -> str:
    """The SHA-256 naming one request; every part is canonical JSON, so equal requests give equal
    keys, and the messages are reduced by :func:`request_messages`."""
    request = {"format": FORMAT, "provider": provider, "model": model, "messages": request_messages(messages),
               "tools": list(tools), "params": dict(params), "seed": seed, "epoch": epoch}
    text = json.dumps(request, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class CachedReply:
    """What the provider answered: the reply as langchain-core's ``message_to_dict`` gives it, and
    the tool-call argument text read from the HTTP response (id -> text) where there was one."""

    message: dict[str, Any]
    captured: dict[str, str]
    retries: tuple[dict[str, Any], ...] = ()  # the failed attempts before the reply (the log records them)


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
        retries = entry.get("retries", [])
        return CachedReply(entry["message"], {str(k): str(v) for k, v in entry["captured"].items()},
                           tuple(r for r in retries if isinstance(r, dict)) if isinstance(retries, list) else ())

    # -- request profiles: how a lazily built model keys its requests (agentbed.agents.request_keys)
    def _profile_path(self, model: str, recipe: str, tools: Sequence[str]) -> Path:
        name = hashlib.sha256(json.dumps([recipe, list(tools)]).encode("utf-8")).hexdigest()
        return self.directory / "profiles" / hashlib.sha256(model.encode("utf-8")).hexdigest()[:16] / f"{name}.json"

    def has_profiles(self, model: str) -> bool:
        """Whether a run stored request profiles of ``model`` here (a rerun's calls are likely cached)."""
        folder = self.directory / "profiles" / hashlib.sha256(model.encode("utf-8")).hexdigest()[:16]
        try:
            return any(folder.iterdir())
        except OSError:
            return False

    def get_profile(self, model: str, recipe: str, tools: Sequence[str]) -> tuple[str, dict[str, Any]] | None:
        """The stored profile (model type, request parameters) of ``model`` built as ``recipe`` with
        ``tools``; None when absent, expired or unreadable (the model is then built)."""
        path = self._profile_path(model, recipe, tools)
        try:
            if self._now - path.stat().st_mtime > self.expiry:
                return None
            entry = json.loads(path.read_bytes())
        except (OSError, ValueError, RecursionError):
            return None
        if not (isinstance(entry, dict) and entry.get("format") == FORMAT and entry.get("recipe") == recipe
                and isinstance(entry.get("type"), str) and isinstance(entry.get("params"), dict)):
            return None
        return entry["type"], entry["params"]

    def put_profile(self, model: str, recipe: str, tools: Sequence[str], profile: tuple[str, Mapping[str, Any]]) -> None:
        """Store a profile as canonical JSON (the form :func:`cache_key` hashes), once."""
        path = self._profile_path(model, recipe, tools)
        if path.exists():
            return
        params = json.loads(json.dumps(dict(profile[1]), sort_keys=True, default=str))
        data = json.dumps({"format": FORMAT, "recipe": recipe, "model": model, "type": profile[0], "params": params},
                          sort_keys=True).encode("utf-8")
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(data)
            os.replace(tmp, path)  # every writer writes the same bytes
        except OSError as exc:
            warnings.warn(f"model cache: {path}: could not store the request profile ({exc})", CacheWarning,
                          stacklevel=2)
            with contextlib.suppress(OSError):
                tmp.unlink()

    def put(self, key: str, reply: CachedReply, **about: Any) -> CachedReply:
        """Store a reply unless a fresh entry is already there (``about``: provider, model... kept
        beside it for people reading the cache); return the reply the cache holds for ``key``,
        which is another run's when it stored first."""
        path = self.path(key)
        entry = {"format": FORMAT, "key": key, **about, "message": reply.message, "captured": reply.captured,
                 "retries": list(reply.retries)}
        data = json.dumps(entry, sort_keys=True, default=str).encode("utf-8")  # ASCII: lone surrogates survive
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.{id(reply)}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(data)
            for _ in range(2):
                try:
                    os.link(tmp, path)  # atomic and exclusive: never replaces another writer's entry
                    return reply
                except FileExistsError:
                    with warnings.catch_warnings():  # get() warned of an unreadable entry already
                        warnings.simplefilter("ignore", CacheWarning)
                        held = self.get(key)
                    if held is not None:
                        return held
                    with contextlib.suppress(FileNotFoundError):
                        path.unlink()  # expired or unreadable: make room, once
            return reply
        except OSError as exc:  # a full or read-only cache must not end the episode
            warnings.warn(f"model cache: {path}: could not store the reply ({exc})", CacheWarning, stacklevel=2)
            return reply
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()
