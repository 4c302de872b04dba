"""Generation settings for a run's chat models: ``--temperature``, ``--max-tokens-per-call`` and
``-M KEY=VALUE``, handed to the provider's LangChain chat model as constructor arguments.

Settings are checked where they would be used, before anything runs: :func:`check_settings`
builds the model with them and refuses a value the model's class rejects (pydantic validates
types and ranges) and a key it does not declare (LangChain would otherwise pass an unknown key on
in ``model_kwargs``, with only a warning, to be refused by the provider at the first call).
A run records them in run.json (``generation``); each episode's log records them in the agent's
description; the model-call cache key holds them through the model's identifying parameters.
"""

from __future__ import annotations

import inspect
import json
import math
import os
import re
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from agentbed.errors import UsageError

# settings with a flag of their own; the provider-neutral names LangChain's chat models take
TEMPERATURE = "temperature"
MAX_TOKENS = "max_tokens"


# The per-call timeout in seconds of every model a run builds, when set (`agentbed run --timeout`
# sets it before its workers start; Ray ships it to its nodes with the provider's variables).
TIMEOUT_VAR = "AGENTBED_MODEL_TIMEOUT"


def timeout_from_environment() -> float | None:
    text = os.environ.get(TIMEOUT_VAR)
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"{TIMEOUT_VAR}={text!r}: expected a number of seconds") from None
    if not (math.isfinite(value) and value > 0):
        raise UsageError(f"{TIMEOUT_VAR}={text!r}: expected a number of seconds > 0")
    return value


# Names of settings that carry credentials or headers: never generation settings, since settings
# are written into run.json, every log header and the cache key. They come from the provider's
# environment variables (OPENAI_API_KEY ...), which agentbed never writes anywhere.
SECRET_NAME = re.compile(r"key|token|secret|passw|credential|auth|header|cookie|http_client|session",
                         re.IGNORECASE)


def secret_names(settings: Mapping[str, Any], prefix: str = "") -> list[str]:
    """The settings (at any depth of a mapping value, e.g. ``model_kwargs``) whose name says they
    carry a secret or a header."""
    found = []
    for key, value in settings.items():
        name = f"{prefix}{key}"
        if SECRET_NAME.search(str(key)) and not _HARMLESS.fullmatch(str(key)):
            found.append(name)
        if isinstance(value, Mapping):
            found += secret_names(value, f"{name}.")
    return found


_HARMLESS = re.compile(r"\w*tokens(_to_sample)?|prompt_cache_key", re.IGNORECASE)  # counts of tokens, a cache name


def parse_settings(temperature: float | None, max_tokens: int | None, items: Sequence[str] | None) -> dict[str, Any]:
    """The run's settings, sorted by key. ``-M`` values are JSON when they parse as JSON
    (``0.9``, ``true``, ``["a"]``), else the text itself."""
    settings: dict[str, Any] = {}
    for item in items or []:
        key, eq, text = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise UsageError(f"-M {item!r}: expected KEY=VALUE, e.g. -M top_p=0.9")
        if key in settings:
            raise UsageError(f"-M {key}: given twice")
        try:
            value: Any = json.loads(text)
        except ValueError:
            value = text
        if isinstance(value, float) and not math.isfinite(value):
            raise UsageError(f"-M {item!r}: the value must be a finite number")
        settings[key] = value
    for key, value, flag in ((TEMPERATURE, temperature, "--temperature"), (MAX_TOKENS, max_tokens, "--max-tokens-per-call")):
        if value is None:
            continue
        if key in settings:
            raise UsageError(f"-M {key}=... and {flag} both set {key}; give one")
        settings[key] = value
    if TEMPERATURE in settings:
        t = settings[TEMPERATURE]
        if isinstance(t, bool) or not isinstance(t, int | float) or not (math.isfinite(t) and t >= 0):
            raise UsageError(f"--temperature {t!r}: must be a finite number >= 0")
    if MAX_TOKENS in settings:
        n = settings[MAX_TOKENS]
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise UsageError(f"--max-tokens-per-call {n!r}: must be a whole number >= 1")
    secrets = secret_names(settings)
    if secrets:
        raise UsageError(f"-M {secrets[0]}: a key, token or header is not a generation setting (settings are written "
                         "into run.json and every log); give it through the provider's environment variable, e.g."
                         " OPENAI_API_KEY")
    return dict(sorted(settings.items()))


def undeclared(chat_model: Any, settings: Mapping[str, Any]) -> list[str]:
    """Keys of ``settings`` the model's class does not declare: LangChain moved them into
    ``model_kwargs`` (to be sent to the provider unchecked), or the class has no such field."""
    extra = getattr(chat_model, "model_kwargs", None)
    if isinstance(extra, Mapping):
        return sorted(k for k in settings if k in extra and k != "model_kwargs")
    fields = getattr(type(chat_model), "model_fields", None) or {}
    names = set(fields) | {f.alias for f in fields.values() if getattr(f, "alias", None)}
    return sorted(k for k in settings if k not in names)


def unaccepted_request_fields(chat_model: Any, settings: Mapping[str, Any]) -> list[str]:
    """Keys of ``settings["model_kwargs"]`` that the provider's client would refuse at every call:
    checked for OpenAI-format models against the SDK's own ``chat.completions.create`` (any
    other client takes what its LangChain class declares, :func:`undeclared`)."""
    extra = settings.get("model_kwargs")
    if not isinstance(extra, Mapping) or type(chat_model).__name__ not in ("ChatOpenAI", "AzureChatOpenAI"):
        return []
    try:
        from openai.resources.chat.completions import Completions
    except ImportError:  # pragma: no cover - comes with langchain-openai
        return []
    accepted = set(inspect.signature(Completions.create).parameters) - {"self", "messages", "model", "stream"}
    return sorted(k for k in extra if k not in accepted)


def build_quietly(build: Any) -> Any:
    """Call ``build()`` with LangChain's "parameter moved to model_kwargs" warnings silenced
    (:func:`undeclared` turns them into an error instead)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build()
