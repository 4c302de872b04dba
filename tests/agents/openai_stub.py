"""A small OpenAI-compatible chat-completions server on loopback, for driving the real client.

It answers ``POST /v1/chat/completions`` from a script: a list of :class:`Reply` consumed in
order, or a function from the request body to a :class:`Reply`. A reply is a completion with
tool calls (argument text sent exactly as scripted), text and usage, or an HTTP error (429 with
Retry-After, 500, 503...), or raw bytes as the body (empty, not JSON, cut short), or a connection
closed without an answer (a reset), optionally after a delay. Every request body is kept for
assertions. :meth:`OpenAIStub.die` and :meth:`OpenAIStub.revive` stop and restart it on the same
port (a provider that goes away mid-run and comes back).
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ERROR_TYPES = {429: "rate_limit_exceeded", 500: "server_error", 503: "service_unavailable", 400: "invalid_request_error"}


@dataclass
class Reply:
    """One scripted answer. ``tool_calls`` are (name, raw argument text) pairs."""

    tool_calls: Sequence[tuple[str, str]] = ()
    content: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    prompt_tokens: int = 11
    completion_tokens: int = 7
    ident: str | None = None  # names the completion and its tool calls instead of the request number
    raw: bytes | None = None  # sent as the body as it is (with ``status``), instead of a completion
    reset: bool = False  # close the connection without an answer


def error(status: int, **headers: str) -> Reply:
    return Reply(status=status, headers=headers)


Script = Sequence[Reply] | Callable[[dict[str, Any]], Reply]


EPISODE_HEADER = "x-test-episode"  # set by chaos.tag_episodes; the body gets it under EPISODE_KEY
EPISODE_KEY = "_test_episode"


class OpenAIStub:
    """Start with :meth:`start` (returns the base URL), stop with :meth:`stop`."""

    def __init__(self, script: Script) -> None:
        self._queue: deque[Reply] | None = None if callable(script) else deque(script)
        self._policy = script if callable(script) else None
        self.requests: list[dict[str, Any]] = []
        self.served = 0  # requests answered, errors included
        self.active = 0  # requests being answered now
        self.peak = 0  # the most requests it held at once (a connection cap's test)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "stub not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self, port: int = 0) -> str:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                episode = self.headers.get(EPISODE_HEADER)
                if episode is not None and isinstance(body, dict):  # a tagged request (chaos.tag_episodes)
                    body[EPISODE_KEY] = episode
                stub._answer(self, body)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - keep test output clean
                pass

        ThreadingHTTPServer.allow_reuse_address = True  # revive on the port just closed
        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self.base_url

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers sleeping through a scripted delay
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def die(self, *, cut: bool = True) -> int:
        """Stop listening (new calls refused; those in flight are cut, or with ``cut=False`` get the
        answers already decided); returns the port."""
        port = int(self._server.server_address[1]) if self._server is not None else 0
        if cut:
            self.stop()
        elif self._server is not None:  # handlers run in threads of their own, on their own connections
            self._server.shutdown()
            self._server.server_close()
            if self._thread is not None:
                self._thread.join(timeout=5)
        self._server = None
        return port

    def revive(self, port: int) -> str:
        """Listen again on ``port``, with the same script."""
        self._stopping.clear()
        return self.start(port)

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            number = len(self.requests)
            if self._policy is not None:
                try:
                    return self._policy(body)
                except Exception as exc:  # noqa: BLE001 - a broken script must fail the test, not hang it
                    return Reply(status=400, content=f"stub policy failed at request {number}: {exc!r}")
            assert self._queue is not None
            if not self._queue:
                return Reply(status=400, content=f"stub script exhausted at request {number}")
            return self._queue.popleft()

    def _answer(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        with self._lock:
            self.active += 1
            self.peak = max(self.peak, self.active)
        try:
            reply, number = self._decide(body)
        finally:
            # A request stops counting before its reply is written: once the client has read it, it may
            # hand its slot on, and the next request can arrive before this thread would run again.
            with self._lock:
                self.active -= 1
        if reply is not None:
            self._write(handler, reply, number, body)

    def _decide(self, body: dict[str, Any]) -> tuple[Reply | None, int]:
        reply = self._next_reply(body)
        with self._lock:
            self.served += 1
            number = self.served
        if reply.delay and self._stopping.wait(reply.delay):
            return None, number
        return reply, number

    def _write(self, handler: BaseHTTPRequestHandler, reply: Reply, number: int, body: dict[str, Any]) -> None:
        if reply.reset:
            handler.close_connection = True
            with contextlib.suppress(OSError):
                handler.connection.shutdown(socket.SHUT_RDWR)
            return
        if reply.raw is not None:
            data = reply.raw
        elif reply.status != 200:
            payload = {"error": {"message": reply.content or f"scripted HTTP {reply.status}",
                                 "type": ERROR_TYPES.get(reply.status, "error"), "code": None, "param": None}}
        else:
            payload = completion(reply, number, body.get("model", "stub"))
        if reply.raw is None:
            data = json.dumps(payload).encode("utf-8")
        try:
            handler.send_response(reply.status)
            handler.send_header("content-type", "application/json")
            handler.send_header("content-length", str(len(data)))
            for name, value in reply.headers.items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client timed out and went away


def completion(reply: Reply, number: int, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    ident = reply.ident or str(number)
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": f"call_{ident}_{i}", "type": "function", "function": {"name": name, "arguments": arguments}}
            for i, (name, arguments) in enumerate(reply.tool_calls)
        ]
    return {
        "id": f"chatcmpl-{ident}", "object": "chat.completion",
        "created": 1_700_000_000 + (0 if reply.ident else number), "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
        "usage": {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
                  "total_tokens": reply.prompt_tokens + reply.completion_tokens},
    }


@contextlib.contextmanager
def stub_servers(monkeypatch: Any, api_key: str = "test") -> Iterator[Callable[[Any], OpenAIStub]]:
    """``start(policy)`` starts a stub and points the OpenAI client at it through the environment
    (so a run's workers inherit it), with ``api_key`` as its key; every stub started is stopped on
    leaving. What the model-run tests' fixtures yield."""
    started: list[OpenAIStub] = []

    def start(policy: Any) -> OpenAIStub:
        server = OpenAIStub(policy)
        server.start()
        started.append(server)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", api_key)
        return server

    try:
        yield start
    finally:
        for server in started:
            server.stop()
