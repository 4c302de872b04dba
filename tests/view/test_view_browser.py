"""The viewer in a real browser: Debian's headless Chromium driven by Playwright (its own
browser builds are never fetched: ``executable_path`` points at the system one)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from agentbed.cli import main
from agentbed.testing import chromium_browser

from .conftest import serve

pytestmark = pytest.mark.chromium
WAIT_MS = 10_000  # generous on a loaded machine; how fast things appear is measured in bench/view_live.py


@pytest.fixture(scope="module")
def browser():
    with chromium_browser() as launched:
        yield launched


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)  # its waits eval
    yield context.new_page()
    context.close()


def test_lists_render_and_filters_work(page, runs_root):
    for client in serve(runs_root):
        page.goto(client.base + "/#/")
        page.wait_for_selector("#runs-table tr[data-run='vault-a']", timeout=WAIT_MS)
        assert "sealed" in page.inner_text("#runs-table")
        page.click("#runs-table a")
        page.wait_for_selector("#episodes-table tbody tr", timeout=WAIT_MS)
        assert page.locator("#episodes-table tbody tr").count() == 12
        forest = client.get("/api/run?run=vault-a")[1]["forest"]  # one dot per finding the summary offers
        assert page.locator("#findings svg.forest circle").count() == forest.count("<circle") >= 2
        assert page.locator("#heatmap svg rect.cell").count() == 6
        page.select_option("#filter-agent", "naive")
        page.select_option("#filter-success", "false")
        page.wait_for_function("document.querySelectorAll('#episodes-table tbody tr').length === 4", timeout=WAIT_MS)
        agents = page.locator("#episodes-table tbody tr td:nth-child(2)").all_inner_texts()
        assert agents == ["naive"] * 4
        page.fill("#filter-q", "long-chores.naive.s1")
        page.wait_for_function("document.querySelectorAll('#episodes-table tbody tr').length === 1", timeout=WAIT_MS)


def test_a_transcript_shows_its_tool_calls(page, runs_root):
    for client in serve(runs_root):
        page.goto(client.base + "/#/run/vault-a/episode/vault.open-after-chores.oracle.s0")
        page.wait_for_selector(".step .tool-name", timeout=WAIT_MS)
        tools = page.locator(".step .tool-name").all_inner_texts()
        assert tools == ["read_logs", "read_logs", "get_token", "open_vault"]
        assert '"page":1' in page.locator(".step .args").first.inner_text()
        assert "verdict: ok" in page.inner_text(".footer-record")
        page.click("#replay-button")
        page.wait_for_selector("#replay-result .ok", timeout=WAIT_MS)


def test_a_run_started_after_the_viewer_appears_without_reload(page, runs_root):
    for client in serve(runs_root):
        page.goto(client.base + "/#/")
        page.wait_for_selector("#runs-table tr[data-run='vault-a']", timeout=WAIT_MS)
        late = runs_root / "vault-late"  # a real run, started after the page opened
        assert main(["run", "vault", "--agent", "oracle", "--seeds", "1", "--quiet", "--executor", "serial",
                     "--out", str(late)]) == 0
        page.wait_for_selector("#runs-table tr[data-run='vault-late']", timeout=WAIT_MS)
        assert page.locator("#runs-table tbody tr").count() == 2
        assert "3/3" in page.inner_text("#runs-table tr[data-run='vault-late']")


def test_an_approval_in_the_page_changes_the_episode(page, tmp_path):
    runs, approvals = tmp_path / "runs", tmp_path / "approvals"
    runs.mkdir()
    for client in serve(runs, approvals=approvals):
        status: list[int] = []
        args = ["run", "vault", "--agent", "oracle", "--task", "open-fast", "--seeds", "1", "--quiet",
                "--out", str(runs / "asked"), "--approver", "human", "--approvals", str(approvals),
                "--approval-timeout", "60"]
        thread = threading.Thread(target=lambda: status.append(main(args)), daemon=True)  # noqa: B023 - joined below
        thread.start()
        page.goto(client.base + "/#/approvals")
        page.wait_for_selector(".approval button.approve", timeout=WAIT_MS)
        assert "get_token" in page.inner_text(".approval")
        page.click(".approval button.approve")  # step 1 runs as proposed
        page.wait_for_selector(".approval[data-key$='step2'] button.reject", timeout=WAIT_MS)
        page.click(".approval button.reject")  # step 2 does not: the episode stops
        thread.join(30)
        assert status == [0]
        page.goto(client.base + "/#/run/asked/episode/vault.open-fast.oracle.s0")
        page.wait_for_selector(".footer-record", timeout=WAIT_MS)
        assert "verdict: stopped" in page.inner_text(".footer-record")
        decisions = page.locator(".control").all_inner_texts()
        assert "controller: continue" in decisions[0] and "via file" in decisions[0]
        assert "controller: stop" in decisions[1] and "human: reject" in decisions[1]
    assert Path(runs / "asked" / "index.jsonl").read_text().count("stopped") == 1
