"""``agentbed view``'s HTTP server: the standard library's threading server, a small JSON API and
one static page (HTML, JS and CSS shipped in the package; nothing is fetched from elsewhere).

The page polls (every second) for what it shows; each answer carries an ETag, and a poll whose
data did not change gets ``304 Not Modified`` (inspect's viewer follows its logs the same way).
A request that fails inside the server answers 500 with the message as JSON and the server
goes on: a bad file never takes it down.

Binding beyond the loopback interface needs ``--token``; then every request must carry it, as
``?token=`` (the printed URL has it; the page passes it on) or the ``X-Agentbed-Token`` header.

Only the viewer's own page can change anything (an approval decision), even on loopback, where
any web page the user opens can send requests to the port:
- every request's ``Host`` must name the address the server is bound to (a DNS-rebinding page
  sends its own name, and is refused before it can read anything);
- a state-changing request must carry the per-server secret (made at start, written into the
  page the server serves, which another origin cannot read) in ``X-Agentbed-Secret``, an
  ``Origin`` that is the viewer's own, and ``Content-Type: application/json`` (neither an HTML
  form nor a ``no-cors`` fetch can send that type, or a custom header, without a preflight the
  server never grants); a read that re-executes an episode (``/api/replay``) needs the secret too;
- a request with two of any header these checks read is refused (400), and no other page may
  frame the viewer (``frame-ancestors 'none'``, ``X-Frame-Options: DENY``) to steer a click.
A body must be JSON (400 otherwise) of at most ``MAX_BODY`` bytes (413); every socket has a
timeout, so a client that stops sending cannot hold a thread; no answer carries a traceback,
and the token is never printed.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import mimetypes
import os
import secrets
import socket
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from agentbed.errors import UsageError
from agentbed.view import api
from agentbed.view.approvals import ApprovalBoard, ApprovalBoards
from agentbed.view.catalog import Catalog
from agentbed.view.peer import peer_uid

STATIC = Path(__file__).resolve().parent / "static"
MAX_BODY = 256 * 1024  # a decision is a few hundred bytes; an edited call is bounded by the approval schema
SOCKET_TIMEOUT = 15.0  # seconds a connection may stay silent (headers, body or keep-alive) before it is closed
SECRET_HEADER = "X-Agentbed-Secret"
SECRET_META = b'<meta name="agentbed-secret" content="%s">'
# reads that do work beyond reading (/api/replay re-executes an episode's world): asked for with
# the secret as a decision is, so that no other page (an <img>, a no-cors fetch) can start them
EXECUTING = frozenset({"/api/replay"})


class Refused(Exception):
    """A request refused with a status and a one-line reason (never a traceback)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _plain(value: Any) -> Any:
    """What ``json.dumps`` makes of a value it cannot encode: a run's seeds read as a range, the
    list of its integers (as run.json holds them); anything else, its text."""
    return list(value) if isinstance(value, range) else str(value)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_binding(host: str, token: str | None) -> None:
    if not is_loopback(host) and not token:
        raise UsageError(f"--host {host}: not a loopback address; serving runs beyond this machine needs --token "
                         "(every request must then carry it)")


class ViewServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, root: Path, host: str = "127.0.0.1", port: int = 0, token: str | None = None,
                 approvals: Path | None = None, approvals_under: Path | None = None) -> None:
        """``approvals``: one run's folder of questions; ``approvals_under``: a folder of runs, whose
        every run's ``R.approvals`` is answered (:class:`ApprovalBoards`)."""
        check_binding(host, token)
        host = host.removeprefix("[").removesuffix("]")
        if ":" in host:  # an IPv6 literal (::1): the class's AF_INET could not bind it (session 18's probe)
            self.address_family = socket.AF_INET6
        self.catalog = Catalog(root)
        self.token = token
        self.board: ApprovalBoard | ApprovalBoards | None = (
            ApprovalBoard(approvals) if approvals is not None
            else ApprovalBoards(approvals_under) if approvals_under is not None else None)
        self.secret = secrets.token_urlsafe(32)  # what only the page this server serves knows
        super().__init__((host, port), _Handler)

    def allowed_hosts(self) -> set[str] | None:
        """The Host header values that name this server (None: any IP literal, when bound to every
        interface). A name that is not the bound address is what a DNS-rebinding page sends."""
        host, port = self._host_port()
        if ipaddress.ip_address(host).is_unspecified:
            return None
        names = {f"{self._shown_host()}:{port}"}
        if is_loopback(host):
            names.add(f"localhost:{port}")
        return names

    def host_ok(self, value: str) -> bool:
        allowed = self.allowed_hosts()
        if allowed is not None:
            return value.lower() in allowed
        name, _, port = value.rpartition(":")
        try:
            ipaddress.ip_address(name.strip("[]"))
        except ValueError:
            return False
        return port == str(self.server_address[1])

    def _host_port(self) -> tuple[str, int]:
        host, port = self.server_address[:2]
        return str(host), int(port)  # a TCP server's address: (str, int)

    def _shown_host(self) -> str:
        """The bound address as a URL and a Host header write it (an IPv6 literal in brackets)."""
        host = self._host_port()[0]
        return f"[{host}]" if ":" in host else host

    @property
    def url(self) -> str:
        return f"http://{self._shown_host()}:{self._host_port()[1]}/" + (f"?token={self.token}" if self.token else "")

    def serve_in_thread(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve_forever, name="agentbed-view", daemon=True)
        thread.start()
        return thread


class _Handler(BaseHTTPRequestHandler):
    server: ViewServer
    _peer: tuple[int | None] | None = None  # the client end's uid, asked once per connection
    protocol_version = "HTTP/1.1"
    timeout = SOCKET_TIMEOUT  # StreamRequestHandler sets it on the socket: no read waits forever

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass  # one line per poll would drown the terminal

    def _authorised(self, query: dict[str, str]) -> bool:
        token = self.server.token
        if not token:
            return True
        given = self.headers.get("X-Agentbed-Token") or query.get("token") or ""
        return hmac.compare_digest(given.encode(), token.encode())

    def _own_user(self) -> bool:
        """Whether the connection's client end is the server's own user's (or cannot be known):
        asked once per connection (see :mod:`agentbed.view.peer`)."""
        if self._peer is None:
            self._peer = (peer_uid(self.client_address, self.server._host_port()),)
        return self._peer[0] is None or self._peer[0] == os.geteuid()

    def do_GET(self) -> None:  # noqa: N802 - the base class's name
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch("POST")

    def _dispatch(self, method: str) -> None:
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        try:
            self._admit(method, query, parts.path)
            if parts.path.startswith("/api/"):
                route = _GET_ROUTES.get(parts.path) if method == "GET" else _POST_ROUTES.get(parts.path)
                if route is None:
                    raise Refused(404, f"no such API: {method} {parts.path}")
                body = self._body() if method == "POST" else None
                status, doc = route(self.server, query, body)
                self._json(status, doc)
            elif method == "GET":
                self._static(parts.path)
            else:
                raise Refused(405, "method not allowed")
        except Refused as exc:
            # the rest of a refused body is never read; a refused GET keeps what the client asked
            # for (Connection: close, or keep-alive), never holding a closing client open
            self.close_connection = self.close_connection or method == "POST" or bool(self.headers.get("Upgrade"))
            self._json(exc.status, {"error": str(exc)})
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True
        except Exception as exc:  # noqa: BLE001 - one request fails, the server goes on
            # one line, without the query string (it may hold the token) and without a traceback
            print(f"agentbed view: {method} {parts.path}: {type(exc).__name__}: {exc}", file=sys.stderr)
            self._json(500, {"error": f"{type(exc).__name__}: the request failed inside the viewer"})

    def _admit(self, method: str, query: dict[str, str], path: str) -> None:
        """Refuse what is not this viewer's own page speaking to it (see the module docstring)."""
        for name in ("Host", "Origin", SECRET_HEADER, "Content-Type", "X-Agentbed-Token"):
            if len(self.headers.get_all(name) or ()) > 1:  # which one counts would be the parser's guess
                raise Refused(400, f"more than one {name} header")
        if not self.server.host_ok(self.headers.get("Host") or ""):
            raise Refused(421, "Host does not name this viewer's address (a DNS-rebinding page, or a proxy)")
        if not self._authorised(query):
            raise Refused(401, "this viewer needs its token (?token=...)")
        if not self.server.token and not self._own_user():
            raise Refused(403, "this viewer answers only the user who started it (another user: --token)")
        origin = self.headers.get("Origin")
        own = origin is not None and origin.lower() == f"http://{self.headers.get('Host', '').lower()}"
        if method == "GET":
            # a browser sends Origin on another page's fetch and on every websocket handshake, never
            # on the viewer's own reads: one naming another page is refused (a read's answer carries
            # no Access-Control-Allow-Origin anyway; session 17's probe: defense in depth)
            if origin is not None and not own:
                raise Refused(403, "Origin is not this viewer's own page")
            if path in EXECUTING:  # runs an episode's world again: an <img> on any page could ask it
                self._check_secret("only the viewer's own page may re-execute an episode")
            return
        if not own:
            raise Refused(403, "Origin is not this viewer's own page")
        self._check_secret("only the viewer's own page may change anything")
        kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise Refused(415, "Content-Type must be application/json")

    def _check_secret(self, why: str) -> None:
        given = self.headers.get(SECRET_HEADER) or ""
        if not hmac.compare_digest(given.encode(), self.server.secret.encode()):
            raise Refused(403, f"missing or wrong {SECRET_HEADER}: {why}")

    def _body(self) -> Any:
        if self.headers.get("Transfer-Encoding"):
            raise Refused(411, "a body needs Content-Length (no Transfer-Encoding)")
        text = (self.headers.get("Content-Length") or "").strip()
        if not text.isdigit():
            raise Refused(400 if text else 411, "Content-Length must be a non-negative integer")
        length = int(text)
        if length > MAX_BODY:
            raise Refused(413, f"request body larger than {MAX_BODY} bytes")
        data = self.rfile.read(length) if length else b""
        if len(data) < length:
            raise Refused(400, "request body shorter than its Content-Length")
        try:
            return json.loads(data)
        except (ValueError, RecursionError):
            raise Refused(400, "request body is not JSON") from None

    def _json(self, status: int, doc: Any) -> None:
        body = json.dumps(doc, ensure_ascii=False, default=_plain, allow_nan=False).encode("utf-8")
        etag = '"' + hashlib.sha1(body).hexdigest() + '"'
        if status == 200 and self.headers.get("If-None-Match") == etag:
            self._send(304, b"", "application/json", etag)
            return
        self._send(status, body, "application/json; charset=utf-8", etag)

    def _static(self, path: str) -> None:
        name = "index.html" if path in ("/", "/index.html") else path.lstrip("/")
        target = (STATIC / name).resolve()
        if not target.is_relative_to(STATIC) or not target.is_file():
            self._send(404, b"not found", "text/plain")
            return
        kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        body = target.read_bytes()
        if name == "index.html":  # the page, and only the page, learns the secret
            body = body.replace(b"<head>", b"<head>\n" + SECRET_META % self.server.secret.encode(), 1)
        self._send(200, body, f"{kind}; charset=utf-8")

    def _send(self, status: int, body: bytes, kind: str, etag: str | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-cache")
        # frame-ancestors: no other page may frame the viewer and steer a click onto "approve"
        self.send_header("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; "
                         "style-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("X-Content-Type-Options", "nosniff")
        if etag:
            self.send_header("ETag", etag)
        self.end_headers()
        if body:
            self.wfile.write(body)


Route = Callable[[ViewServer, dict[str, str], Any], tuple[int, Any]]


def _run_or_404(server: ViewServer, query: dict[str, str]) -> Any:
    return server.catalog.run(query.get("run", ""))


def _runs(server: ViewServer, query: dict[str, str], _body: Any) -> tuple[int, Any]:
    doc = api.runs_document(server.catalog)
    if server.board is not None:
        doc["approvals"] = server.board.pending()
    return 200, doc


def _run(server: ViewServer, query: dict[str, str], _body: Any) -> tuple[int, Any]:
    view = _run_or_404(server, query)
    return (200, api.run_document(view)) if view else (404, {"error": f"no run {query.get('run')!r}"})


def _episodes(server: ViewServer, query: dict[str, str], _body: Any) -> tuple[int, Any]:
    view = _run_or_404(server, query)
    return (200, api.episodes_document(view, query)) if view else (404, {"error": f"no run {query.get('run')!r}"})


def _episode(server: ViewServer, query: dict[str, str], _body: Any) -> tuple[int, Any]:
    view = _run_or_404(server, query)
    doc = api.episode_document(view, query.get("episode", "")) if view else None
    return (200, doc) if doc else (404, {"error": f"no episode {query.get('episode')!r} in {query.get('run')!r}"})


def _replay(server: ViewServer, query: dict[str, str], _body: Any) -> tuple[int, Any]:
    view = _run_or_404(server, query)
    return (200, api.replay_document(view, query.get("episode", ""))) if view else (404, {"error": "no such run"})


def _approvals(server: ViewServer, query: dict[str, str], _body: Any) -> tuple[int, Any]:
    if server.board is None:
        return 200, {"enabled": False, "pending": []}
    return 200, {"enabled": True, "folder": str(server.board.folder), "pending": server.board.pending()}


def _decide(server: ViewServer, query: dict[str, str], body: Any) -> tuple[int, Any]:
    if server.board is None:
        return 409, {"error": "this viewer was started without --approvals DIR"}
    try:
        return 200, server.board.decide(body)
    except UsageError as exc:
        return 400, {"error": str(exc)}


_GET_ROUTES: dict[str, Route] = {"/api/runs": _runs, "/api/run": _run, "/api/episodes": _episodes,
                                 "/api/episode": _episode, "/api/replay": _replay, "/api/approvals": _approvals}
_POST_ROUTES: dict[str, Route] = {"/api/decide": _decide}
