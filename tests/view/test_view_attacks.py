"""The approver answers only its human: web pages the user happens to open attack the viewer's
approval endpoint in Debian's headless Chromium (driven by Playwright) and record 0 decisions:
a page on another local origin posting with ``fetch(mode: "no-cors")``, an HTML form that
submits itself, and a DNS-rebinding page (its name resolved to the viewer's address by a host
rule, so its requests reach the viewer as same-origin ones: it reads the page for the secret,
the pending question, and answers it). The same three attacks against the same server with its
request checks switched off do record decisions, so the test sees an attack that lands."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from agentbed.approval import FORMAT, decision_path, request_path
from agentbed.rendezvous import private_folder, write_once
from agentbed.testing import chromium_browser
from agentbed.view import server as view_server

from .conftest import serve

pytestmark = pytest.mark.chromium
REBIND = "rebind.test"  # the attacker's name, mapped to 127.0.0.1 as a rebinding DNS server would
WAIT_MS = 10_000


def pending(folder: Path, *keys: str) -> None:
    private_folder(folder)
    now = time.time()
    for key in keys:
        write_once(request_path(folder, key), {
            "format": FORMAT, "key": key, "episode_id": "vault.t.naive.s0", "step": 1, "proposed": '{"tool":"x"}',
            "asked_at": now, "deadline": now + 600, "agents": ["oracle"]})


def nocors_page(viewer: str, key: str) -> str:
    body = json.dumps({"key": key, "decision": "edit", "action": '{"tool": "wire_money"}', "author": "attacker"})
    return f"""<!DOCTYPE html><html><body><script>
(async () => {{
  for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
                      "application/json"]) {{
    for (let i = 0; i < 3; i++) {{
      try {{ await fetch({json.dumps(viewer + "/api/decide")}, {{method: "POST", mode: "no-cors",
               headers: {{"Content-Type": type}}, body: {json.dumps(body)}}}); }} catch (e) {{}}
    }}
  }}
  document.title = "done";
}})();
</script></body></html>"""


def form_page(viewer: str, key: str) -> str:
    # text/plain forms send name=value: the name opens the JSON, the value closes it
    name = json.dumps({"key": key, "decision": "approve", "author": "attacker", "pad": ""})[:-2]
    return f"""<!DOCTYPE html><html><body>
<form id="f" method="POST" enctype="text/plain" action="{viewer}/api/decide">
<input type="hidden" name='{name}' value='"}}'></form>
<script>document.getElementById("f").submit();</script></body></html>"""


REBIND_PAGE = """<!DOCTYPE html><html><body><pre id="out"></pre><script>
(async () => {
  const out = {};
  try {
    const page = await (await fetch("/")).text();
    const found = page.match(/name="agentbed-secret" content="([^"]+)"/);
    out.secret = found ? found[1] : "";
    const list = await fetch("/api/approvals");
    out.list_status = list.status;
    const keys = list.ok ? (await list.json()).pending.map((p) => p.key) : ["%KEY%"];
    for (const key of keys) {
      const r = await fetch("/api/decide", {method: "POST", headers: {"Content-Type": "application/json",
        "X-Agentbed-Secret": out.secret}, body: JSON.stringify({key, decision: "approve", author: "attacker"})});
      out.decide_status = r.status;
    }
  } catch (e) { out.error = String(e); }
  document.getElementById("out").textContent = JSON.stringify(out);
  document.title = "done";
})();
</script></body></html>"""


class _Attacker(BaseHTTPRequestHandler):
    pages: dict[str, str] = {}

    def do_GET(self) -> None:  # noqa: N802 - the base class's name
        body = self.pages.get(self.path, "").encode()
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:  # noqa: ANN002
        pass


@pytest.fixture(scope="module")
def attacker():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Attacker)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    with chromium_browser(f"--host-resolver-rules=MAP {REBIND} 127.0.0.1",
                          # as an older browser, or a user who allowed local-network access: the server must hold alone
                          "--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests,"
                          "PrivateNetworkAccessSendPreflights,PrivateNetworkAccessRespectPreflightResults") as launched:
        yield launched


def attack(browser, attacker: str, runs_root: Path, folder: Path) -> dict[str, bool]:
    """Run the three attacks against a viewer answering ``folder``; which questions got a decision."""
    keys = {"nocors": "vault.t.naive.s0.step1", "form": "vault.t.naive.s0.step2", "rebind": "vault.t.naive.s0.step3"}
    pending(folder, *keys.values())
    for client in serve(runs_root, approvals=folder):
        viewer = client.base
        port = viewer.rsplit(":", 1)[1]
        _Attacker.pages = {"/nocors.html": nocors_page(viewer, keys["nocors"]),
                           "/form.html": form_page(viewer, keys["form"])}
        context = browser.new_context()
        page = context.new_page()
        page.goto(attacker + "/nocors.html")
        page.wait_for_function("document.title === 'done'", timeout=WAIT_MS)
        page.goto(attacker + "/form.html")
        page.wait_for_load_state("load")
        page.wait_for_timeout(300)
        evil = f"http://{REBIND}:{port}/evil.html"  # served by the attacker before the name rebinds
        page.route(evil, lambda route: route.fulfill(status=200, content_type="text/html",
                                                     body=REBIND_PAGE.replace("%KEY%", keys["rebind"])))
        page.goto(evil)
        page.wait_for_function("document.title === 'done'", timeout=WAIT_MS)
        attack.rebind = json.loads(page.inner_text("#out"))  # type: ignore[attr-defined]
        context.close()
    return {name: decision_path(folder, key).exists() for name, key in keys.items()}


def test_web_pages_record_no_decision(browser, attacker, runs_root, tmp_path):
    decided = attack(browser, attacker, runs_root, tmp_path / "approvals")
    assert decided == {"nocors": False, "form": False, "rebind": False}
    seen = attack.rebind  # type: ignore[attr-defined]
    assert seen.get("secret") == "" and seen.get("list_status") == 421, seen  # it could read nothing
    assert list((tmp_path / "approvals").glob("*.decision.json")) == []


def test_the_same_attacks_land_when_the_checks_are_off(browser, attacker, runs_root, tmp_path, monkeypatch):
    monkeypatch.setattr(view_server._Handler, "_admit", lambda self, *request: None)
    decided = attack(browser, attacker, runs_root, tmp_path / "approvals")
    assert decided == {"nocors": True, "form": True, "rebind": True}
