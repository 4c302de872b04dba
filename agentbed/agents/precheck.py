"""A ``--model`` string checked before a run without importing its provider's client (issue 55).

LangChain's chat models and the OpenAI client take seconds to import (``langchain_core``'s tracers
and ``langsmith``, ``openai.types``), so building the agent to see whether it can be built kept a
model run silent that long before its first progress line. What a build would refuse is checked
here from what is cheap to read instead, and the client is imported at the run's first call:

- the provider: LangChain's own table of providers (``_BUILTIN_PROVIDERS``), read from its source
  file with :mod:`ast`, not imported; and whether the provider's package is installed;
- the key: the variables the provider's client reads when it is built;
- the settings: only ``--temperature`` and ``--max-tokens-per-call``, which
  :func:`agentbed.agents.generation.parse_settings` has checked and the provider's chat model declares.

Anything else (another provider, ``-M`` settings, a suite's own model agent) is checked by
building the agent, as before. tests/agents/test_precheck.py holds the verdicts here to the
build's own, over keys present, absent and empty.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentbed.agents.generation import MAX_TOKENS, TEMPERATURE, timeout_from_environment
from agentbed.errors import UsageError

# Providers checked without a build: whether the client would find credentials, from the
# environment as the provider's client reads it when it is built (openai's ``OpenAI()``).
KEY_CHECKS = {"openai": lambda env: bool(env.get("OPENAI_API_KEY"))}
QUICK_SETTINGS = frozenset({TEMPERATURE, MAX_TOKENS})


def missing_key(model: str) -> str:
    """The one-line error of an OpenAI-format model without credentials."""
    return f"--model {model!r}: no API key; set OPENAI_API_KEY (and OPENAI_BASE_URL for a compatible server)"


@functools.cache
def builtin_providers() -> dict[str, str]:
    """LangChain's providers, each with the module that holds its chat model, read from
    ``langchain/chat_models/base.py`` without importing it; empty when it cannot be read."""
    try:
        spec = importlib.util.find_spec("langchain")
    except (ImportError, ValueError):
        return {}
    if spec is None or not spec.submodule_search_locations:
        return {}
    source = Path(next(iter(spec.submodule_search_locations))) / "chat_models" / "base.py"
    try:
        tree = ast.parse(source.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return {}
    target: ast.expr
    for node in tree.body:
        if isinstance(node, ast.AnnAssign):
            target, table = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, table = node.targets[0], node.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id in ("_BUILTIN_PROVIDERS", "_SUPPORTED_PROVIDERS") \
                and isinstance(table, ast.Dict):
            return {key.value: _module_of(value) for key, value in zip(table.keys, table.values, strict=True)
                    if isinstance(key, ast.Constant) and isinstance(key.value, str)}
    return {}


def _module_of(entry: ast.expr) -> str:
    first = entry.elts[0] if isinstance(entry, ast.Tuple) and entry.elts else None
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else ""


def checked_without_client(model: str, settings: Mapping[str, Any],
                           environ: Mapping[str, str] | None = None) -> bool:
    """True when everything building ``model``'s agent with ``settings`` would refuse has been
    checked here (a missing package or key is a :class:`UsageError`, one line); False when only a
    build can tell, and the caller must build it."""
    provider, _, _ = model.partition(":")
    has_key = KEY_CHECKS.get(provider)
    module = builtin_providers().get(provider)
    if has_key is None or not module or "?" in model or not set(settings) <= QUICK_SETTINGS:
        return False
    package = module.split(".", 1)[0]
    if importlib.util.find_spec(package) is None:
        raise UsageError(f"--model {model!r}: needs the {package.replace('_', '-')} package; install it with pip")
    if not has_key(os.environ if environ is None else environ):
        raise UsageError(missing_key(model))
    timeout_from_environment()  # a bad AGENTBED_MODEL_TIMEOUT, as a build would refuse it
    return True


ENDPOINT_VARIABLE = re.compile(r"(_BASE_URL|_API_BASE|_API_URL|_ENDPOINT|_API_HOST|^OLLAMA_HOST)$")


def recipe_of(model: str, timeout: float | None, settings: Mapping[str, Any]) -> str:
    """A name for what a lazily built model is made of: everything its requests' profile can
    depend on (the model string, its settings and timeout, and the versions of LangChain and the
    provider's package, whose classes make the profile), so a stored profile is never reused for
    a model built otherwise. The variables that move a provider's endpoint (``OPENAI_BASE_URL``...)
    are part of it: the profile holds the endpoint, which is in the cache key."""
    provider = model.partition(":")[0]
    packages = ["langchain", "langchain-core"]
    module = builtin_providers().get(provider)
    if module:
        packages.append(module.split(".", 1)[0].replace("_", "-"))
    versions: dict[str, str | None] = {}
    for package in packages:
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = None
    endpoints = {k: v for k, v in os.environ.items() if ENDPOINT_VARIABLE.search(k)}
    text = json.dumps({"format": 2, "model": model, "timeout": timeout, "settings": dict(settings),  # 2: the endpoint
                       "versions": versions, **({"endpoints": endpoints} if endpoints else {})},
                      sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
