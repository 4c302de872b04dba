"""``agentbed view``'s HTTP server: the standard library's threading server, a small JSON API and
one static page (HTML, JS and CSS shipped in the package; nothing is fetched from elsewhere).

The page polls (every second) for what it shows; each answer carries an ETag, and a poll whose
data did not change gets ``304 Not Modified`` (inspect's viewer follows its logs the same way).
A request that fails inside the server answers 500 with the message as JSON and the server
goes on: a bad file never takes it down.

Binding beyond the loopback interface needs ``--token``; then every request must carry it, as
``?token=`` (the printed URL has it; the page passes it on) or the ``X-Agentbed-Token`` header.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import mimetypes
import sys
import threading
import traceback
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from agentbed.errors import UsageError
from agentbed.view import api
from agentbed.view.approvals import ApprovalBoard
from agentbed.view.catalog import Catalog

STATIC = Path(__file__).resolve().parent / "static"
MAX_BODY = 1024 * 1024  # a decision is a few hundred bytes


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
                 approvals: Path | None = None) -> None:
        check_binding(host, token)
        self.catalog = Catalog(root)
        self.token = token
        self.board = ApprovalBoard(approvals) if approvals is not None else None
        super().__init__((host, port), _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        shown = f"[{host}]" if ":" in str(host) else host
        return f"http://{shown}:{port}/" + (f"?token={self.token}" if self.token else "")

    def serve_in_thread(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve_forever, name="agentbed-view", daemon=True)
        thread.start()
        return thread


class _Handler(BaseHTTPRequestHandler):
    server: ViewServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass  # one line per poll would drown the terminal

    def _authorised(self, query: dict[str, str]) -> bool:
        token = self.server.token
        if not token:
            return True
        given = self.headers.get("X-Agentbed-Token") or query.get("token") or ""
        return hmac.compare_digest(given.encode(), token.encode())

    def do_GET(self) -> None:  # noqa: N802 - the base class's name
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch("POST")

    def _dispatch(self, method: str) -> None:
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        if not self._authorised(query):
            self._send(401, b'{"error": "this viewer needs its token (?token=...)"}', "application/json")
            return
        try:
            if parts.path.startswith("/api/"):
                route = _GET_ROUTES.get(parts.path) if method == "GET" else _POST_ROUTES.get(parts.path)
                if route is None:
                    self._json(404, {"error": f"no such API: {method} {parts.path}"})
                    return
                body = self._body() if method == "POST" else None
                status, doc = route(self.server, query, body)
                self._json(status, doc)
            elif method == "GET":
                self._static(parts.path)
            else:
                self._json(405, {"error": "method not allowed"})
        except BrokenPipeError:
            pass
        except Exception as exc:  # noqa: BLE001 - one request fails, the server goes on
            print(f"agentbed view: {self.path}: {type(exc).__name__}: {exc}", file=sys.stderr)
            traceback.print_exc(limit=3, file=sys.stderr)
            self._json(500, {"error": f"{type(exc).__name__}: {exc}"})

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            raise UsageError("request body too large")
        data = self.rfile.read(length) if length else b""
        return json.loads(data or b"null")

    def _json(self, status: int, doc: Any) -> None:
        body = json.dumps(doc, ensure_ascii=False, default=str, allow_nan=False).encode("utf-8")
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
        self._send(200, target.read_bytes(), f"{kind}; charset=utf-8")

    def _send(self, status: int, body: bytes, kind: str, etag: str | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; "
                         "style-src 'self' 'unsafe-inline'")
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
