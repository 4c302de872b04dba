"""The viewer's episode page lists every oversight decision (what happened to the proposed
action, who decided, why) from the API's ``decisions``, in a real browser with the page's CSP in
force. The reason is an overseer's own text: markup in it stays text."""

from __future__ import annotations

import pytest

from agentbed.cli import main
from agentbed.testing import chromium_browser
from tests.engine.test_oversight_visible import editor_source

from .conftest import serve

pytestmark = pytest.mark.chromium
WAIT_MS = 10_000
HOSTILE = "<img src=x onerror=\"document.title='pwned'\"><script>document.title='pwned'</script>"
EDITOR = editor_source(HOSTILE)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("decisions")
    (root / "editor.py").write_text(EDITOR)
    common = ["run", "vault", "--agent", "naive", "--task", "long-chores", "--seeds", "1", "--quiet",
              "--executor", "serial"]
    assert main([*common, "--controller", f"{root / 'editor.py'}:Editor", "--out", str(root / "runs/edited")]) == 0
    assert main([*common, "--controller", "examples/controller/stale_token.py:hand_to_oracle",
                 "--out", str(root / "runs/handed")]) == 0
    return root / "runs"


def test_the_episode_page_lists_who_decided_what_and_why(runs):
    with chromium_browser() as browser:
        context = browser.new_context(viewport={"width": 1280, "height": 900})  # the viewer's CSP in force
        page = context.new_page()
        dialogs: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        for client in serve(runs):
            page.goto(client.base + "/#/run/edited/episode/vault.long-chores.naive.s0")
            page.wait_for_selector("#decisions tr.decision", timeout=WAIT_MS)
            rows = [[cell.strip() for cell in row.locator("td").all_inner_texts()]
                    for row in page.locator("#decisions tr.decision").all()]
            assert [r[:4] for r in rows] == [["1", "replaced", "editor", HOSTILE], ["3", "blocked", "editor",
                                                                                   "seen enough"]]
            assert '"get_token"' in rows[0][4] and '"page": 9' in rows[0][5].replace('"page":9', '"page": 9')
            assert rows[1][5] == "nothing ran"
            assert page.locator("#decisions img, #decisions script").count() == 0
            assert page.title() != "pwned" and not dialogs

            page.goto(client.base + "/#/run/handed/episode/vault.long-chores.naive.s0")
            page.wait_for_selector("#decisions tr.decision", timeout=WAIT_MS)
            handed = [c.strip() for c in page.locator("#decisions tr.decision").first.locator("td").all_inner_texts()]
            assert handed[1:3] == ["handed over", "hand-to-oracle"] and handed[5].startswith("to oracle")
        context.close()
