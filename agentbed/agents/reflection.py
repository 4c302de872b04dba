"""What a chat agent asked to reflect is shown: its recent actions and what each one got back.

A bare "reflect" request gives a model nothing it has not already ignored. The note shows the
episode's own feedback instead: the last few actions, the first line of the answer to each, the
actions sent more than once, and the ones whose answer was the same as the answer before it
(they changed nothing). The agent then replans with that in front of it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from agentbed.agents.confidence import content_text

RECENT_STEPS = 6
LINE_CHARS = 120


def shown_action(action: str) -> str:
    """An action as the note names it: a tool call's command or arguments, else the text."""
    try:
        sent = json.loads(action)
    except (TypeError, ValueError):
        return action.strip()[:LINE_CHARS]
    if not isinstance(sent, dict) or "tool" not in sent:
        return action.strip()[:LINE_CHARS]
    arguments = sent.get("arguments") or {}
    if isinstance(arguments, dict) and set(arguments) == {"command"}:
        return str(arguments["command"])[:LINE_CHARS]
    args = ", ".join(f"{k}={json.dumps(v)}" for k, v in arguments.items()) if isinstance(arguments, dict) else ""
    return f"{sent['tool']}({args})"[:LINE_CHARS]


def recent_steps(messages: Sequence[BaseMessage], action_of_reply: Callable[[BaseMessage], str],
                 last: int = RECENT_STEPS) -> list[tuple[str, str]]:
    """(action, first line of its answer) for the last ``last`` replies that got an answer."""
    steps: list[tuple[str, str]] = []
    for i, message in enumerate(messages):
        if not isinstance(message, AIMessage):
            continue
        answer = next((m for m in messages[i + 1:] if isinstance(m, ToolMessage | HumanMessage)), None)
        if answer is None:
            continue
        lines = [line.strip() for line in content_text(answer.content).splitlines() if line.strip()]
        steps.append((shown_action(action_of_reply(message)), (lines[0] if lines else "")[:LINE_CHARS]))
    return steps[-last:]


def feedback_note(prompt: str, messages: Sequence[BaseMessage],
                  action_of_reply: Callable[[BaseMessage], str]) -> str:
    """``prompt`` followed by the summary of the recent steps (``prompt`` alone if none)."""
    steps = recent_steps(messages, action_of_reply)
    if not steps:
        return prompt
    lines = [prompt, "", "Your last actions and what each one got back:"]
    lines += [f"{k}. {action} -> {answer or '(no text)'}" for k, (action, answer) in enumerate(steps, start=1)]
    repeated = [a for a, n in Counter(a for a, _ in steps).items() if n > 1]
    unchanged = sorted({steps[k][0] for k in range(1, len(steps)) if steps[k][1] == steps[k - 1][1]})
    if repeated:
        lines.append("Sent more than once: " + "; ".join(repeated) + ".")
    if unchanged:
        lines.append("Changed nothing (the same answer as the step before): " + "; ".join(unchanged) + ".")
    if repeated or unchanged:
        lines.append("Do not send those again unless something has changed; choose a different action.")
    return "\n".join(lines)
