"""Agents whose observation-to-action path corrupts artifacts: a wrapper around another agent.

The wrapper watches observations for artifacts (every string a response carried, and the
href/visible text of every link) and, in each action, corrupts the longest argument that is one
of them or several of them concatenated (an assembled URL, an id proof), as a real pipeline
between the model and the tool would. ``applied`` counts the
corruptions that changed an argument, so tests know when a corruption applied to a task.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from typing import Any

from agentbed.agents.base import Action, Agent
from agentbed.tools import Tool, make_action
from attacks.contracts.corruptions import CORRUPTIONS, Corruption

_ANCHOR = re.compile(r'<a href="([^"]*)">(.*?)</a>', re.S)
MIN_ARTIFACT_CHARS = 6


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _call_of(action: Action) -> dict[str, Any] | None:
    """The tool call an action carries, or None when it is not one (the wrapper passes it on)."""
    try:
        call = json.loads(action.text)
    except (TypeError, ValueError):
        return None
    return call if isinstance(call, dict) else None


class CorruptingAgent(Agent):
    """Runs ``inner`` and corrupts the artifacts it sends with ``corruption``."""

    def __init__(self, inner: Agent, corruption: Corruption, only: str | None = None) -> None:
        self.inner = inner
        self.corruption = corruption
        self.only = only  # corrupt this argument only (a rule about one value), else the longest artifact
        self.name = f"corrupt-{corruption.name}"

    def reset(self, *, seed: int, task: Any = None) -> None:
        self.inner.reset(seed=seed, task=task)
        self.seen: set[str] = set()
        self.display: dict[str, str] = {}
        self.applied = 0
        self.active = getattr(task, "params", {}).get("family") not in self.corruption.not_for

    def _watch(self, observation: str) -> None:
        try:
            obs = json.loads(observation)
        except ValueError:
            return
        for text in _strings(obs.get("body") if isinstance(obs, dict) else None):
            anchor = _ANCHOR.fullmatch(text)
            if anchor:
                href = html.unescape(anchor.group(1))
                self.seen.add(href)
                self.display[href] = anchor.group(2)
            elif len(text) >= MIN_ARTIFACT_CHARS:
                self.seen.add(text)

    def _assembled(self, text: str) -> bool:
        """Whether ``text`` is two or more seen strings concatenated (a URL assembled from
        fragments, a proof made of ids): the pipeline carries it like any other artifact."""
        pieces: list[int | None] = [0] + [None] * len(text)  # pieces[i]: fewest seen strings spelling text[:i]
        for i in range(len(text)):
            here = pieces[i]
            if here is None:
                continue
            for seen in self.seen:
                if not text.startswith(seen, i):
                    continue
                j = i + len(seen)
                there = pieces[j]
                if there is None or there > here + 1:
                    pieces[j] = here + 1
        spelled = pieces[len(text)]
        return spelled is not None and spelled >= 2

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        self._watch(observation)
        action = self.inner.act(observation, tools)
        call = _call_of(action)
        if call is None:
            return action
        args = call.get("arguments", {})
        candidates = [k for k, v in args.items() if isinstance(v, str) and (v in self.seen or self._assembled(v))
                      and self.only in (None, k)]
        if not candidates or not self.active:
            return action
        target = max(candidates, key=lambda k: len(args[k]))
        corrupted = self.corruption.apply(args[target], self.display.get(args[target]))
        if corrupted is None:
            return action
        self.applied += 1
        args = {**args, target: corrupted}
        return Action(make_action(call["tool"], **args), usage=action.usage, meta={"corrupted": target})


def corrupting(inner: Agent, name: str) -> CorruptingAgent:
    return CorruptingAgent(inner, CORRUPTIONS[name])


class ParameterDriftAgent(Agent):
    """Runs ``inner`` and re-derives the request on a repeat call: the second and later calls of
    a tool that send an artifact change an integer argument (+1: an amount re-totalled, a page
    size raised), as a pipeline that recomputes a retry's parameters does. The artifact's issuer
    bound it to the first request's parameters (Stripe idempotency keys, AIP-158 page tokens)."""

    name = "param-drift"

    def __init__(self, inner: Agent) -> None:
        self.inner = inner

    def reset(self, *, seed: int, task: Any = None) -> None:
        self.inner.reset(seed=seed, task=task)
        self.seen: set[str] = set()
        self.calls: dict[str, int] = {}
        self.applied = 0

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        try:
            self.seen.update(s for s in _strings(json.loads(observation).get("body")) if len(s) >= MIN_ARTIFACT_CHARS)
        except (ValueError, AttributeError):
            pass
        action = self.inner.act(observation, tools)
        call = _call_of(action)
        if call is None:
            return action
        args = call.get("arguments", {})
        carries = any(isinstance(v, str) and v in self.seen for v in args.values())
        integers = [k for k, v in args.items() if isinstance(v, int) and not isinstance(v, bool)]
        if not carries:
            return action
        self.calls[call["tool"]] = self.calls.get(call["tool"], 0) + 1
        if self.calls[call["tool"]] < 2 or not integers:
            return action
        self.applied += 1
        drifted = {**args, integers[0]: args[integers[0]] + 1}
        return Action(make_action(call["tool"], **drifted), usage=action.usage, meta={"drifted": integers[0]})
