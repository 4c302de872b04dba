"""A chaos provider: the loopback OpenAI stub (:mod:`openai_stub`) answering as a real provider on
a bad day, from a seeded, configurable mix of faults.

Each call draws its fault from the mix with an RNG seeded by the call's identity: (seed, the
episode, the request's conversation, which attempt of that call it is). The episode (the agent's
name and its episode seed) comes with the request when the run's chat agents are tagged
(:func:`tag_episodes`, a test fixture's monkeypatch, which forked workers inherit): every
request then carries its episode in a header, and the attempts are counted per episode and call,
which are sequential within an episode. So the same run meets the same faults whatever order its
requests arrive in, with ``-j 1`` or ``-j 2`` (tests/agents/test_chaos_chain.py checks the bytes).
An untagged request (another client) is named by its conversation alone: identical conversations
of different episodes then share one attempt counter, and which of them meets which draw follows
arrival order.

A share of conversations (``doomed``) fails on every attempt in every episode that sends it, as an
endpoint that is down for some requests, until :meth:`Chaos.recover` (the provider is back): their
episodes error after the retries. The first attempt of each episode's first call meets a fault of
the rotation (every fault of the mix, in its order: number episode seed + a shift drawn from the
model's name, for episode seeds below the number of faults), so that the first calls of a run
serve many kinds whatever the conversations are. The rest of the
answers come from a scripted model (``model``).

:class:`ChaosProvider` serves it from a process of its own, as a real provider is: worker
processes forked by the run inherit no listening socket of it, so when it dies its port is really
closed, and it comes back on the same one ``down`` seconds later. It dies at a call, not after a
count of requests (which followed arrival order, session 19): ``die_at`` names an episode (tagged
requests only), and the first attempt of that episode's first call is cut as the provider goes
away. Answers it had already decided are still written; every connection made while it is down
is refused. Which calls are refused still follows timing, so a run whose outcomes must be a
function of the seed retries after such an error for longer than ``down`` (the chain test's
``quick_retries``): a refused attempt never reaches the provider, counts in no call's attempts,
and only its record in the step's retries can differ between runs.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import multiprocessing
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

from openai_stub import EPISODE_HEADER, EPISODE_KEY, OpenAIStub, Reply, error
from scripted_models import request_ident

COMPLETION = b'{"id": "x", "object": "chat.completion", "created": 1, "model": "m", '
BAD_BODIES = {
    "empty": b"",
    "not_json": b"<html><body>502 Bad Gateway</body></html>",
    "truncated": COMPLETION + b'"choices": [{"index": 0, "message": {"role": "assis',
    "no_choices": COMPLETION + b'"choices": []}',
    "null_choices": COMPLETION + b'"choices": null}',
    "no_message": COMPLETION + b'"choices": [{"index": 0, "message": null, "finish_reason": "stop"}]}',
    "a_list": b"[1, 2, 3]",
    "an_error_object": b'{"error": {"message": "upstream timed out"}}',
}
# tool-call argument texts of every JSON type but an object
WRONG_ARGUMENTS = ["[1, 2, 3]", "[]", "42", "-0.5", '"page 1"', "null", "true", "false"]


@dataclass(frozen=True)
class Mix:
    """The share of requests that meet each fault; the rest are answered by the model. ``slow``
    answers arrive after ``slow_seconds`` (under the client's timeout), ``hang`` after
    ``hang_seconds`` (past it)."""

    rate_limit: float = 0.04  # 429 with a Retry-After
    rate_limit_bare: float = 0.03  # 429 without one
    server_error: float = 0.06  # 500, 502 or 503
    reset: float = 0.03  # the connection closed without an answer
    hang: float = 0.02
    bad_body: float = 0.06  # HTTP 200 with one of BAD_BODIES
    wrong_arguments: float = 0.05  # a tool call whose arguments are JSON but not an object
    slow: float = 0.08
    doomed: float = 0.08  # conversations that fail on every attempt (until recovered)
    retry_after: str = "0.05"
    slow_seconds: float = 0.15
    hang_seconds: float = 3.0

    def faults(self) -> list[tuple[str, float]]:
        shares = asdict(self)
        return [(name, shares[name]) for name in ("rate_limit", "rate_limit_bare", "server_error", "reset", "hang",
                                                  "bad_body", "wrong_arguments", "slow")]


DOOMED_FAULTS = ["server_error", "rate_limit", "bad_body", "reset"]


class Chaos:
    """A stub policy: ``Chaos(model, seed=3, mix=Mix())`` is callable on a request body."""

    def __init__(self, model: Callable[[dict[str, Any]], Reply], *, seed: int, mix: Mix = Mix(),
                 die_at: str | None = None) -> None:
        self.model, self.seed, self.mix, self.die_at = model, seed, mix, die_at
        self.dying = threading.Event()  # set at die_at's call: the serving process stops listening
        self.seen: Counter[str] = Counter()  # attempts per call
        self.drawn: Counter[str] = Counter()  # faults served, by name
        self.recovered = False
        self.rotation = [name for name, share in mix.faults() if share > 0]
        self._untagged_rotation = list(self.rotation)  # untagged requests: in arrival order
        self._lock = threading.Lock()

    def recover(self) -> None:
        """The provider is back: no call is doomed any more (transient faults go on)."""
        self.recovered = True

    def __call__(self, body: dict[str, Any]) -> Reply:
        episode = body.get(EPISODE_KEY)
        conversation = f"{request_ident(body)}/{body.get('model')}"
        ident = f"{episode}/{conversation}"  # one call of one episode: its attempts come one after another
        with self._lock:
            attempt = self.seen[ident]
            self.seen[ident] += 1
        rng = random.Random(f"{self.seed}/{ident}/{attempt}")
        if (episode is not None and episode == self.die_at and not attempt and not self.dying.is_set()
                and _first_call(body)):
            with self._lock:
                self.drawn["death"] += 1
            self.dying.set()
            return Reply(reset=True)  # this call's connection goes with the provider
        # a doomed conversation fails in every episode that sends it, as an endpoint down for some requests
        doomed = not self.recovered and random.Random(f"{self.seed}/{conversation}/doomed").random() < self.mix.doomed
        if doomed:
            fault: str | None = random.Random(f"{self.seed}/{conversation}").choice(DOOMED_FAULTS)
        else:
            fault = self._rotated(episode, body, attempt) or self._draw(rng)
        with self._lock:
            self.drawn[fault or "none"] += 1
        return self._answer(fault, body, rng)

    def _rotated(self, episode: str | None, body: dict[str, Any], attempt: int) -> str | None:
        """The fault the rotation gives this attempt, if any: for a tagged request, the first
        attempt of an episode's first call meets the rotation's fault number (episode seed + a
        shift drawn from the model's name), for episode seeds below the rotation's length; an
        untagged request meets the next unserved one (arrival order)."""
        if episode is None:
            with self._lock:
                return self._untagged_rotation.pop(0) if self._untagged_rotation else None
        seed = int(str(episode).rsplit("/", 1)[1])
        if attempt or seed >= len(self.rotation) or not _first_call(body):
            return None
        shift = int(hashlib.sha256(str(body.get("model")).encode("utf-8")).hexdigest(), 16)
        return self.rotation[(seed + shift) % len(self.rotation)]

    def _draw(self, rng: random.Random) -> str | None:
        x = rng.random()
        for name, share in self.mix.faults():
            if x < share:
                return name
            x -= share
        return None

    def _answer(self, fault: str | None, body: dict[str, Any], rng: random.Random) -> Reply:
        mix = self.mix
        if fault == "rate_limit":
            return error(429, **{"retry-after": mix.retry_after})
        if fault == "rate_limit_bare":
            return error(429)
        if fault == "server_error":
            return error(rng.choice([500, 502, 503]))
        if fault == "reset":
            return Reply(reset=True)
        if fault == "hang":
            return replace(self.model(body), delay=mix.hang_seconds)
        if fault == "bad_body":
            return Reply(raw=BAD_BODIES[rng.choice(sorted(BAD_BODIES))])
        reply = self.model(body)
        if fault == "wrong_arguments" and reply.tool_calls:
            name = reply.tool_calls[0][0]
            return replace(reply, tool_calls=[(name, rng.choice(WRONG_ARGUMENTS))])
        if fault == "slow":
            return replace(reply, delay=mix.slow_seconds)
        return reply


def _first_call(body: dict[str, Any]) -> bool:
    """Whether a request is its episode's first call: no model reply in its conversation yet."""
    return not any(m.get("role") == "assistant" for m in body.get("messages", []))


_EPISODE: contextvars.ContextVar[str | None] = contextvars.ContextVar("chaos_episode", default=None)


def tag_episodes(monkeypatch: Any) -> None:
    """Make every request of the run's chat agents carry its episode (``agent name/episode seed``)
    in a header, so :class:`Chaos` draws by the call's identity, not by arrival order. A chat
    agent's episode runs in one thread (the in-flight executor's), where ``reset`` sets it and the
    client's request hook reads it; forked workers inherit the patch."""
    from agentbed.agents.chat import ChatAgent
    from agentbed.agents.toolcalls import ResponseCapture

    reset, http_client = ChatAgent.reset, ResponseCapture.http_client

    def tagged_reset(self: ChatAgent, *, seed: int, task: Any = None) -> None:
        reset(self, seed=seed, task=task)
        _EPISODE.set(f"{self.name}/{seed}")

    def tag(request: Any) -> None:
        episode = _EPISODE.get()
        if episode is not None:
            request.headers[EPISODE_HEADER] = episode

    def tagged_client(self: ResponseCapture, **kwargs: Any) -> Any:
        client = http_client(self, **kwargs)
        client.event_hooks = {**client.event_hooks, "request": [*client.event_hooks.get("request", []), tag]}
        return client

    monkeypatch.setattr(ChatAgent, "reset", tagged_reset)
    monkeypatch.setattr(ResponseCapture, "http_client", tagged_client)


def describe(drawn: dict[str, int]) -> str:
    """What a chaos provider served, for a failing test's message."""
    return "faults served: " + json.dumps(dict(sorted(drawn.items())))


class ChaosProvider:
    """A :class:`Chaos` stub in a child process: ``start()`` returns its base URL; it dies at the
    first call of episode ``die_at`` (see the module docstring) and listens again ``down`` seconds
    later; ``recover()``, ``drawn()`` and ``stop()`` talk to it over a pipe."""

    def __init__(self, model: Callable[[dict[str, Any]], Reply], *, seed: int, mix: Mix = Mix(),
                 die_at: str | None = None, down: float = 0.3) -> None:
        self.args = (model, seed, mix, die_at, down)
        self._conn: Any = None
        self._process: Any = None

    def start(self) -> str:
        ctx = multiprocessing.get_context("fork")
        self._conn, child = ctx.Pipe()
        self._process = ctx.Process(target=_serve, args=(child, *self.args), daemon=True)
        self._process.start()
        child.close()
        return self._ask("url")

    def _ask(self, command: str) -> Any:
        self._conn.send(command)
        if not self._conn.poll(30):
            raise AssertionError(f"the chaos provider did not answer {command!r}")
        return self._conn.recv()

    def recover(self) -> None:
        self._ask("recover")

    def drawn(self) -> dict[str, int]:
        return self._ask("drawn")

    def stop(self) -> None:
        if self._process is None:
            return
        try:
            self._ask("stop")
        except (OSError, EOFError, AssertionError):
            pass
        self._process.join(timeout=10)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        self._process = None


def _serve(conn: Any, model: Callable[[dict[str, Any]], Reply], seed: int, mix: Mix, die_at: str | None,
           down: float) -> None:
    chaos = Chaos(model, seed=seed, mix=mix, die_at=die_at)
    stub = OpenAIStub(chaos)
    stub.start()
    if die_at is not None:
        def die_and_revive() -> None:
            chaos.dying.wait()
            port = stub.die(cut=False)  # answers already decided are written: they were drawn
            time.sleep(down)
            stub.revive(port)

        threading.Thread(target=die_and_revive, daemon=True).start()
    answers: dict[str, Callable[[], Any]] = {"url": lambda: stub.base_url, "recover": chaos.recover,
                                             "drawn": lambda: dict(chaos.drawn)}
    try:
        while True:
            command = conn.recv()
            if command == "stop":
                conn.send(None)
                break
            conn.send(answers[command]())
    except EOFError:
        pass
    finally:
        stub.stop()
