"""Scripted models for the loopback OpenAI stub whose answers depend only on the request, so that
the same episodes give the same replies whatever order the requests arrive in."""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

from openai_stub import Reply


def request_ident(body: dict[str, Any]) -> str:
    """A name for a request's conversation: equal conversations give equal names."""
    text = json.dumps(body.get("messages", []), sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def vault_three_calls(body: dict[str, Any], delay: float = 0.0, jitter: float = 0.0) -> Reply:
    """Vault ``open-fast`` in three calls: read a log page, fetch a token, open the vault with it
    (works in any OpenAI-format conversation: agentbed's or Inspect's). The delay is ``delay`` plus
    up to ``jitter`` more, drawn from the request, so concurrent episodes finish out of order."""
    messages = body["messages"]
    ident = request_ident(body)
    wait = delay + jitter * random.Random(ident).random()
    step = sum(1 for m in messages if m["role"] == "assistant")
    usage = {"prompt_tokens": 200 + 50 * step, "completion_tokens": 20, "ident": ident, "delay": wait}
    if step == 0:
        return Reply([("read_logs", '{"page": 1}')], content="confidence: 0.9", **usage)
    if step == 1:
        return Reply([("get_token", "{}")], content="confidence: 0.8", **usage)
    token = _last_token(messages)
    return Reply([("open_vault", json.dumps({"token": token}))], content="confidence: 0.7", **usage)


def _last_token(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message["role"] == "tool":
            content = message["content"]
            text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
            try:
                found = json.loads(text).get("access_token")
            except (ValueError, AttributeError):
                found = None
            if found:
                return str(found)
    return "none"
