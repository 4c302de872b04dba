"""The viewer's server never hangs, leaks or changes anything for a stranger, spoken to byte by
byte over raw sockets: Host, Origin, secret and Content-Type checks; bad and oversized bodies;
a client that stops sending; a failing route with the token in its URL; FIFOs and links where
logs and folders should be; ``/api/replay`` on a log outside the run."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from agentbed.approval import decision_path
from agentbed.view import api
from agentbed.view import server as view_server

from .conftest import serve
from .test_view_attacks import pending

KEY = "vault.t.naive.s0.step1"


def raw(client, request: bytes, *, wait: float = 30.0) -> bytes:
    """Send bytes as they are; everything the server answers until it closes (or ``wait``)."""
    host, port = client.base.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=wait) as sock:
        sock.sendall(request)
        chunks = []
        try:
            while data := sock.recv(65536):
                chunks.append(data)
        except TimeoutError:
            chunks.append(b"<client timed out>")
        return b"".join(chunks)


def post(client, body: bytes, **headers: str) -> bytes:
    host = client.base.removeprefix("http://")
    sent = {"Host": host, "Origin": client.base, "Content-Type": "application/json",
            "X-Agentbed-Secret": client.server.secret, "Content-Length": str(len(body)), "Connection": "close",
            **headers}
    lines = "".join(f"{k}: {v}\r\n" for k, v in sent.items() if v != "")
    return raw(client, f"POST /api/decide HTTP/1.1\r\n{lines}\r\n".encode() + body)


def status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


@pytest.fixture
def approving(runs_root, tmp_path):
    folder = tmp_path / "approvals"
    pending(folder, KEY)
    for client in serve(runs_root, approvals=folder):
        yield client, folder


DECISION = json.dumps({"key": KEY, "decision": "approve", "author": "x"}).encode()


@pytest.mark.parametrize(("headers", "expected"), [
    ({"Host": "evil.example:7575"}, 421),
    ({"Host": "rebind.test"}, 421),
    ({"Origin": ""}, 403),
    ({"Origin": "http://127.0.0.1:1"}, 403),
    ({"Origin": "null"}, 403),
    ({"X-Agentbed-Secret": ""}, 403),
    ({"X-Agentbed-Secret": "guess"}, 403),
    ({"Content-Type": "text/plain"}, 415),
    ({"Content-Type": "application/x-www-form-urlencoded"}, 415),
    ({"Content-Type": "multipart/form-data; boundary=x"}, 415),
])
def test_a_request_not_from_the_viewer_page_changes_nothing(approving, headers, expected):
    client, folder = approving
    answer = post(client, DECISION, **headers)
    assert status(answer) == expected and b"Traceback" not in answer
    assert not decision_path(folder, KEY).exists()


def test_the_viewer_page_itself_decides(approving):
    client, folder = approving
    assert status(post(client, DECISION)) == 200 and decision_path(folder, KEY).exists()


def test_reads_need_the_bound_host_too(approving, monkeypatch):
    client, _ = approving
    # a refused read honours the client's "Connection: close": the server closes at once instead of
    # holding the socket for its silence timeout (it held each one for 15 s)
    monkeypatch.setattr(view_server._Handler, "timeout", 60.0)
    for path in ("/", "/api/approvals", "/api/runs"):
        answer = raw(client, f"GET {path} HTTP/1.1\r\nHost: rebind.test:80\r\nConnection: close\r\n\r\n".encode(),
                     wait=30)
        assert not answer.endswith(b"<client timed out>")
        assert status(answer) == 421 and b"agentbed-secret" not in answer and KEY.encode() not in answer
    page = raw(client, f"GET / HTTP/1.1\r\nHost: {client.base[7:]}\r\nConnection: close\r\n\r\n".encode())
    assert status(page) == 200 and f'content="{client.server.secret}"'.encode() in page


@pytest.mark.parametrize(("body", "length", "expected"), [
    (b"not json", None, 400),
    (b"{\"key\": ", None, 400),
    (b"[" * 100_000 + b"]" * 100_000, None, 400),
    (b"", "-1", 400),
    (b"", "abc", 400),
    (b"{}", "99999999999", 413),
    (b"x" * (view_server.MAX_BODY + 1), None, 413),
    (b"{}", "", 411),
])
def test_bad_bodies_are_400_or_413_without_a_traceback(approving, body, length, expected):
    client, folder = approving
    answer = post(client, body, **({"Content-Length": length} if length is not None else {}))
    assert status(answer) == expected, answer[:300]
    assert b"Traceback" not in answer and b"File \"" not in answer
    assert not decision_path(folder, KEY).exists()


def test_a_client_that_stops_sending_holds_no_thread(approving, monkeypatch):
    client, _ = approving
    monkeypatch.setattr(view_server._Handler, "timeout", 0.5)
    host = client.base[7:]
    for stalled in (b"GET /api/runs HTTP/1.1\r\nHost: ",  # headers never finished
                    f"POST /api/decide HTTP/1.1\r\nHost: {host}\r\nOrigin: {client.base}\r\nContent-Type: "
                    f"application/json\r\nX-Agentbed-Secret: {client.server.secret}\r\nContent-Length: 100\r\n\r\n"
                    "{".encode()):  # a body shorter than announced
        answer = raw(client, stalled, wait=30)
        assert not answer.endswith(b"<client timed out>")  # the server closed the connection itself


def test_a_failing_route_prints_one_line_without_the_token(runs_root, monkeypatch, capfd):
    def broken(catalog):
        raise RuntimeError("the catalog broke")

    monkeypatch.setattr(api, "runs_document", broken)
    for client in serve(runs_root, token="tok-0123456789-secret"):
        answer = raw(client, f"GET /api/runs?token=tok-0123456789-secret HTTP/1.1\r\nHost: {client.base[7:]}\r\n"
                             "Connection: close\r\n\r\n".encode())
        assert status(answer) == 500 and b"Traceback" not in answer
    err = capfd.readouterr().err
    assert "tok-0123456789-secret" not in err and "Traceback" not in err
    assert err.count("\n") == 1 and "RuntimeError" in err


def test_fifos_never_hang_the_runs_list(runs_root):
    run = runs_root / "vault-a"
    os.mkfifo(run / "episodes" / "vault.fifo.naive.s0.jsonl")
    os.unlink(run / "index.jsonl")
    os.mkfifo(run / "index.jsonl")
    os.mkfifo(run / "vault" / "summary.json.tmp")
    (run / "odd").mkdir()
    os.mkfifo(run / "odd" / "summary.json")
    for client in serve(runs_root):
        code, doc = client.get("/api/run?run=vault-a")
        assert code == 200
        problems = " ".join(p["message"] for p in doc["problems"])
        assert "FIFO" in problems


def test_links_out_of_a_run_are_not_followed(runs_root, tmp_path):
    outside = tmp_path / "outside"
    (outside / "evil").mkdir(parents=True)
    (outside / "evil" / "summary.json").write_text(json.dumps({"title": "FOREIGN", "headline": []}))
    run = runs_root / "vault-a"
    (run / "evil").symlink_to(outside / "evil", target_is_directory=True)
    log = next((run / "episodes").glob("*.jsonl"))
    foreign = outside / "foreign.jsonl"
    foreign.write_bytes(log.read_bytes())
    link = run / "episodes" / "vault.linked.naive.s0.jsonl"
    link.symlink_to(foreign)
    for client in serve(runs_root):
        code, doc = client.get("/api/run?run=vault-a")
        assert code == 200 and "evil" not in doc["summaries"]
        assert "FOREIGN" not in json.dumps(doc)
        _, rows = client.get("/api/episodes?run=vault-a")
        assert "vault.linked.naive.s0" not in [r["id"] for r in rows["rows"]]
        assert any("link out of" in p["message"] for p in doc["problems"])


def test_replay_has_the_containment_of_episode(runs_root, tmp_path, monkeypatch):
    run = runs_root / "vault-a"
    lines = (run / "index.jsonl").read_text().splitlines()
    record = json.loads(lines[0])
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_bytes((run / record["log"]).read_bytes())
    record["log"] = os.path.relpath(outside, run)
    (run / "index.jsonl").write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n")
    ran: list[Path] = []
    import agentbed.replay

    monkeypatch.setattr(agentbed.replay, "rerun", lambda path: ran.append(path) or ([], []))
    for client in serve(runs_root):
        _, episode = client.get(f"/api/episode?run=vault-a&episode={record['episode_id']}")
        _, replay = client.get(f"/api/replay?run=vault-a&episode={record['episode_id']}")
    assert "outside the run directory" in episode["check"]
    assert "outside the run directory" in replay["error"] and ran == []


def test_a_checked_header_sent_twice_is_refused(approving):
    """Session 16's probe: a second Host (or Origin, Content-Type, secret) after a good one was
    decided on the first and the decision recorded; which of two counts is now nobody's guess."""
    client, folder = approving
    host = client.base.removeprefix("http://")
    for extra in ("Host: evil.example:7575", "Origin: http://evil.example", "Content-Type: text/plain",
                  "X-Agentbed-Secret: guess"):
        sent = (f"Host: {host}\r\nOrigin: {client.base}\r\nContent-Type: application/json\r\n"
                f"X-Agentbed-Secret: {client.server.secret}\r\n{extra}\r\nContent-Length: {len(DECISION)}\r\n"
                "Connection: close\r\n\r\n")
        answer = raw(client, f"POST /api/decide HTTP/1.1\r\n{sent}".encode() + DECISION)
        assert status(answer) == 400 and not decision_path(folder, KEY).exists(), (extra, answer[:200])


def test_no_other_page_may_frame_the_viewer(approving):
    """Session 16's probe: the page carried no frame-ancestors, so any site could frame the viewer
    and steer a click onto "approve" (a decision the viewer's own page makes, with its secret)."""
    client, _ = approving
    page = raw(client, f"GET / HTTP/1.1\r\nHost: {client.base[7:]}\r\nConnection: close\r\n\r\n".encode())
    head = page.split(b"\r\n\r\n", 1)[0].lower()
    assert b"frame-ancestors 'none'" in head and b"x-frame-options: deny" in head


OTHER_USER = 65534  # nobody


def test_another_local_user_can_neither_read_nor_decide(approving, monkeypatch):
    """Session 17's probe: on loopback without --token, user ``nobody`` read the page of root's
    viewer, took its secret and approved a pending tool call of root's run (200, decision recorded),
    though the approvals folder is 0700. A connection whose client end another uid owns is refused,
    the page and every read too; with --token the token is the check."""
    from agentbed.view.peer import peer_uid

    client, folder = approving
    host, port = client.base.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port))) as sock:  # the kernel's table names this process's user
        assert peer_uid(sock.getsockname(), (host, int(port))) == os.geteuid()
    if os.geteuid() == 0:  # a real other user (CI runs as root): the probe's own steps
        script = ("import sys, urllib.request, urllib.error\n"
                  "try:\n    urllib.request.urlopen(sys.argv[1])\nexcept urllib.error.HTTPError as e:\n"
                  "    print(e.code)\nelse:\n    print(200)\n")
        answer = subprocess.run(["setpriv", f"--reuid={OTHER_USER}", f"--regid={OTHER_USER}", "--clear-groups",
                                 sys.executable, "-c", script, client.base], capture_output=True, text=True,
                                timeout=60, cwd="/")
        assert answer.stdout.strip() == "403", answer
    monkeypatch.setattr(view_server, "peer_uid", lambda client_end, server_end: os.geteuid() + 1)
    for path in ("/", "/api/approvals"):
        answer = raw(client, f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode())
        assert status(answer) == 403 and client.server.secret.encode() not in answer, path
    assert status(post(client, DECISION)) == 403 and not decision_path(folder, KEY).exists()
    for tokened in serve(client.server.catalog.root, token="tok-0123456789-secret"):
        answer = raw(tokened, f"GET /?token=tok-0123456789-secret HTTP/1.1\r\nHost: {tokened.base[7:]}\r\n"
                              "Connection: close\r\n\r\n".encode())
        assert status(answer) == 200


def test_a_read_from_another_pages_origin_or_websocket_is_refused(approving):
    """Session 17's probe: a websocket handshake to /api/approvals from another origin got the
    pending calls as a plain 200 (no browser script could read it: no 101, no CORS header); a read
    that names another Origin is now refused outright, while the viewer's own reads (no Origin, or
    its own) are answered."""
    client, _ = approving
    host = client.base.removeprefix("http://")
    upgrade = ("Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
               "Sec-WebSocket-Version: 13\r\n")
    for path in ("/", "/api/approvals", "/api/runs"):
        for extra in ("Origin: http://evil.example\r\nConnection: close\r\n", "Origin: null\r\nConnection: close\r\n",
                      "Origin: http://evil.example\r\n" + upgrade):
            answer = raw(client, f"GET {path} HTTP/1.1\r\nHost: {host}\r\n{extra}\r\n".encode())
            assert status(answer) == 403 and KEY.encode() not in answer, (path, extra)
        for own in ("", f"Origin: {client.base}\r\n"):
            answer = raw(client, f"GET {path} HTTP/1.1\r\nHost: {host}\r\n{own}Connection: close\r\n\r\n".encode())
            assert status(answer) == 200, (path, own)


def test_on_ipv6_loopback_the_viewer_answers_its_user_only(runs_root, tmp_path, monkeypatch):
    """Session 18's probe: ``agentbed view --host ::1`` could not listen (the server was IPv4 only)
    and the uid check over ``/proc/net/tcp6`` was never tried. On ``::1`` the kernel's table names
    this process's user and the viewer answers it (page, reads, a decision); user ``nobody`` is
    refused (403, no secret), and so is a connection that no table lists."""
    from agentbed.view.peer import NOT_LISTED, peer_uid

    folder = tmp_path / "approvals"
    pending(folder, KEY)
    for client in serve(runs_root, host="::1", approvals=folder):
        port = client.server.server_address[1]
        assert client.base == f"http://[::1]:{port}"
        with socket.create_connection(("::1", port)) as sock:
            assert peer_uid(sock.getsockname(), ("::1", port)) == os.geteuid()
        assert peer_uid(("::1", 1), ("::1", port)) == NOT_LISTED  # read, and no such connection
        assert client.get("/api/approvals")[0] == 200
        if os.geteuid() == 0:
            script = ("import sys, urllib.request, urllib.error\n"
                      "try:\n    body = urllib.request.urlopen(sys.argv[1]).read()\nexcept urllib.error.HTTPError as e:\n"
                      "    body = e.read()\n    print(e.code, sys.argv[2].encode() in body)\nelse:\n    print(200)\n")
            answer = subprocess.run(["setpriv", f"--reuid={OTHER_USER}", f"--regid={OTHER_USER}", "--clear-groups",
                                     sys.executable, "-c", script, client.base + "/", client.server.secret],
                                    capture_output=True, text=True, timeout=60, cwd="/")
            assert answer.stdout.strip() == "403 False", answer
        with monkeypatch.context() as m:
            m.setattr(view_server, "peer_uid", lambda client_end, server_end: NOT_LISTED)
            assert client.get("/")[0] == 403
            assert client.post("/api/decide", json.loads(DECISION))[0] == 403
        assert not decision_path(folder, KEY).exists()
        assert client.post("/api/decide", json.loads(DECISION))[0] == 200


def test_a_replay_needs_the_pages_secret(approving, monkeypatch):
    """Session 18's probe: GET /api/replay re-executes an episode's world in the viewer's process
    (for the shell suite, its commands in a sandbox); a read, so an <img> or a no-cors fetch on any
    page the user opened could start it (no Origin is sent, the Host is the viewer's). It now needs
    the per-server secret as a decision does; the viewer's own page sends it."""
    from agentbed import replay

    client, _ = approving
    ran: list[object] = []
    real = replay.rerun
    monkeypatch.setattr(replay, "rerun", lambda *a, **kw: ran.append(a) or real(*a, **kw))
    path = "/api/replay?run=vault-a&episode=vault.open-fast.oracle.s0"
    host = client.base.removeprefix("http://")
    for extra in ("", f"{view_server.SECRET_HEADER}: guess\r\n"):
        answer = raw(client, f"GET {path} HTTP/1.1\r\nHost: {host}\r\n{extra}Connection: close\r\n\r\n".encode())
        assert status(answer) == 403 and not ran
    assert client.get(path) == (200, {"identical": True, "records": 4})  # with the secret, as the page sends it
    assert len(ran) == 1
    assert b"X-Agentbed-Secret" in raw(client, f"GET /app.js HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
                                                .encode())  # the page's reads send it
