"""Fixtures for the viewer: a small real run (the vault suite, two agents) and a live server."""

from __future__ import annotations

import json
import shutil
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentbed.cli import main
from agentbed.view.server import ViewServer


def make_run(out: Path, *extra: str) -> Path:
    status = main(["run", "vault", "--agent", "oracle,naive", "--seeds", "2", "--executor", "serial", "--quiet",
                   "--out", str(out), *extra])
    assert status == 0
    return out


@pytest.fixture(scope="session")
def vault_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run, made once per session; tests that change a folder copy it first."""
    return make_run(tmp_path_factory.mktemp("view-run") / "vault-a")


@pytest.fixture
def runs_root(tmp_path: Path, vault_run: Path) -> Path:
    root = tmp_path / "runs"
    root.mkdir()
    shutil.copytree(vault_run, root / "vault-a")
    return root


class Client:
    def __init__(self, server: ViewServer) -> None:
        self.server = server
        self.base = server.url.split("?")[0].rstrip("/")

    def get(self, path: str, headers: dict[str, str] | None = None) -> tuple[int, Any]:
        """A GET as the viewer's own page sends it (with its secret), unless ``headers`` says otherwise."""
        sent = {"X-Agentbed-Secret": self.server.secret, **(headers or {})}
        request = urllib.request.Request(self.base + path, headers={k: v for k, v in sent.items() if v})
        try:
            with urllib.request.urlopen(request, timeout=30) as resp:
                body = resp.read()
                return resp.status, json.loads(body) if body and path.startswith("/api/") else body
        except urllib.error.HTTPError as exc:
            body = exc.read()
            return exc.code, json.loads(body) if body.startswith(b"{") else body

    def post(self, path: str, doc: Any, headers: dict[str, str] | None = None) -> tuple[int, Any]:
        """A POST as the viewer's own page sends it (its Origin, its secret, JSON), unless ``headers``
        says otherwise."""
        data = json.dumps(doc).encode()
        sent = {"Content-Type": "application/json", "Origin": self.base, "X-Agentbed-Secret": self.server.secret,
                **(headers or {})}
        request = urllib.request.Request(self.base + path, data=data, headers={k: v for k, v in sent.items() if v})
        try:
            with urllib.request.urlopen(request, timeout=30) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())


def serve(root: Path, **kw: Any) -> Iterator[Client]:
    server = ViewServer(root, port=0, **kw)
    server.serve_in_thread()
    try:
        yield Client(server)
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def client(runs_root: Path) -> Iterator[Client]:
    yield from serve(runs_root, approvals=runs_root.parent / "approvals")
