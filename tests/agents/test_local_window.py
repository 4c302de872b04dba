"""What the compact profile sends (agentbed.agents.local.profile): the window is paged, so the
messages shown after the first observation start at the same exchange for a page of steps (what
llama.cpp's prompt cache keeps), and the grammar asks for one-line JSON without touching the
schema. The real server plays both in test_local_model.py."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from agentbed.agents.local.profile import (
    COMPACT_JSON,
    LLGUIDANCE_JSON,
    LocalProfile,
    action_schema,
    constrained_schema,
    constrained_to,
    shown,
)
from environments.vault.env import VaultEnv


def conversation(exchanges: int) -> list[BaseMessage]:
    messages: list[BaseMessage] = [SystemMessage("menu"), HumanMessage("obs 0")]
    for i in range(1, exchanges + 1):
        messages += [AIMessage(f"act {i}"), HumanMessage(f"obs {i}")]
    return messages


def texts(messages: list[BaseMessage]) -> list[tuple[str, str]]:
    return [(m.type, str(m.content)) for m in messages]


@pytest.mark.parametrize("window", [1, 2, 3, 4, 5])
def test_the_window_shows_the_latest_exchanges_and_drops_a_page_of_them_at_a_time(window):
    page = -(-window // 2)
    profile = LocalProfile(window=window)
    sent = [texts(shown(conversation(n), profile)) for n in range(4 * window + 4)]
    for n, out in enumerate(sent):
        assert out[:2] == [("system", "menu"), ("human", "obs 0")]
        acts = [text for kind, text in out if kind == "ai"]
        assert acts == [f"act {i}" for i in range(n - len(acts) + 1, n + 1)]  # the latest, in order
        assert out[2:] == [pair for i in range(n - len(acts) + 1, n + 1)
                           for pair in (("ai", f"act {i}"), ("human", f"obs {i}"))]
        assert len(acts) == n if n <= window else window - page + 1 <= len(acts) <= window
    # a step whose prompt does not start with the previous step's whole prompt re-reads it: once a page
    broken = [n for n in range(window, len(sent) - 1) if sent[n + 1][:len(sent[n])] != sent[n]]
    assert broken == list(range(window, len(sent) - 1, page))


def test_the_grammar_is_llguidances_json_on_one_line_or_the_response_format_and_the_schema_as_it_was():
    schema = action_schema(VaultEnv.tools)
    before = repr(schema)
    one_line, spaced = constrained_to(schema), constrained_to(schema, one_line=False)
    assert repr(schema) == before  # not mutated: ConfidentProfile adds its keys to its own copy
    assert list(one_line) == ["grammar"] and one_line["grammar"].startswith(LLGUIDANCE_JSON)
    assert json.loads(one_line["grammar"].removeprefix(LLGUIDANCE_JSON)) == {**schema, "x-guidance": COMPACT_JSON}
    assert COMPACT_JSON == {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}
    assert spaced == {"response_format": {"type": "json_schema", "json_schema": {"name": "action", "schema": schema}}}
    assert constrained_schema(one_line) == constrained_schema(spaced) == schema
    assert constrained_schema({"messages": []}) is None
    assert LocalProfile.from_model("local:gemma-3-270m?one_line=false").one_line is False
