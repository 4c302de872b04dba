"""Reports built from hostile summaries and logs are inert: the SVG sanitiser is an allow-list
compared case-insensitively (checked as a property over generated trees, and read back through
an HTML parser, which folds case as a browser does), and the report's Content-Security-Policy
forbids script. Debian's headless Chromium, driven by Playwright, opens the reports and counts
what ran: dialogs, a global the payloads set, and requests to a loopback server they fetch.
Each defence is also tested alone (the sanitiser without the CSP, the CSP against script the
sanitiser never saw), and the detector is shown to fire on the same payloads left unsanitised."""

from __future__ import annotations

import json
import re
import threading
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentbed.log import TrajectoryWriter
from agentbed.report import render_report
from agentbed.report.render import CSP
from agentbed.report.svg import _ATTRIBUTES, _ELEMENTS, InvalidSvg, sanitize_svg
from agentbed.runner import EpisodeSpec, write_header
from agentbed.testing import chromium_browser

SVG_OPEN = '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="40" height="40">'


def hostile_figures(port: int) -> list[str]:
    """SVG figures that each try to run script: mixed-case tags and attributes, SVG script,
    javascript: URLs, foreignObject with HTML script, event handlers, SMIL that sets an href."""
    run = f"window.__pwned=(window.__pwned||0)+1;fetch('http://127.0.0.1:{port}/ran');alert(1)"
    return [f"{SVG_OPEN}{body}</svg>" for body in (
        f"<Script>{run}</Script>",
        f"<SCRIPT>{run}</SCRIPT>",
        f'<script type="text/javascript"><![CDATA[{run}]]></script>',
        f'<ForeignObject width="40" height="40"><SCRIPT xmlns="http://www.w3.org/1999/xhtml">{run}</SCRIPT>'
        "</ForeignObject>",
        f'<foreignObject><body xmlns="http://www.w3.org/1999/xhtml"><img src="x" onerror="{run}"/></body>'
        "</foreignObject>",
        f'<a HREF="javascript:{run}"><rect width="40" height="40"/></a>',
        f'<A xlink:href="javascript:{run}"><rect width="40" height="40"/></A>',
        f'<rect width="40" height="40" ONLOAD="{run}" OnClick="{run}"/>',
        f'<image href="x" OnError="{run}"/><image HREF="javascript:{run}"/>',
        f'<animate attributeName="href" to="javascript:{run}"/><SET attributeName="href" to="javascript:{run}"/>',
        f'<use HREF="data:image/svg+xml,&lt;svg onload=&quot;{run}&quot;/&gt;"/>',
        f'<iframe src="javascript:{run}"/><Iframe SRCDOC="&lt;script&gt;{run}&lt;/script&gt;"/>',
        f'<style>@import url("http://127.0.0.1:{port}/css");</style>'
        f'<g style="fill: url(http://127.0.0.1:{port}/fill)"><rect width="4" height="4"/></g>',
    )]


def hostile_run(root: Path, port: int) -> Path:
    """A run directory whose summary and log are written by a hostile model."""
    text = f"<script>window.__pwned=1;fetch('http://127.0.0.1:{port}/text')</script><img src=x onerror=alert(1)>"
    root.mkdir(parents=True)
    (root / "run.json").write_text(json.dumps({"suite": "x", "command": text}), encoding="utf-8")
    summary = {"suite": "x", "title": text, "episodes": 1, "seeds": 1, "command": text,
               "headline": [{"metric": text, "estimate": 0.5, "low": 0.1, "high": 0.9, "n": 1, "agent": text}],
               "tables": [{"title": text, "columns": [text], "rows": [[text]]}],
               "figures": [{"title": text, "svg": svg} for svg in hostile_figures(port)]}
    (root / "x").mkdir()
    (root / "x" / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    writer = TrajectoryWriter(root / "episodes" / "x.t.a.s0.jsonl")
    write_header(writer, EpisodeSpec("x", "t", "a", 0), clock=0.0)
    writer.write("footer", status="error", stop_reason=text, success=False, total_reward=0.0, steps=0,
                 virtual_seconds=0.0, tokens=0, metrics={"m": text}, labels=[text], error=text)
    writer.close()
    return render_report(root)


# -- the sanitiser alone, as a property --------------------------------------------------------
class _Names(HTMLParser):
    """Every element and attribute of a page as a browser's HTML parser names them (lower-cased)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attrs: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attrs += [(k, v or "") for k, v in attrs]

    handle_startendtag = handle_starttag


_HOSTILE_TAGS = ["script", "foreignObject", "a", "iframe", "object", "embed", "set", "animate", "handler",
                 "listener", "discard", "animateTransform", "body", "img", "html"]
_HOSTILE_ATTRS = ["onload", "onclick", "onerror", "onbegin", "href", "src", "srcdoc", "attributeName", "to",
                  "values", "formaction", "action", "xlink:href"]
_VALUES = ["javascript:alert(1)", "JaVaScRiPt:alert(1)", "data:text/html,<script>alert(1)</script>", "#p1",
           "http://127.0.0.1/x", "url(http://127.0.0.1/x)", "alert(1)", "data:image/png;base64,iVBORw0KGgo="]


def _case(name: str):
    return st.lists(st.booleans(), min_size=len(name), max_size=len(name)).map(
        lambda ups: "".join(c.upper() if u else c.lower() for c, u in zip(name, ups, strict=True)))


_NAME = st.sampled_from([*_HOSTILE_TAGS, "g", "rect", "text", "style", "use", "image"]).flatmap(_case)
_ATTR = st.tuples(st.sampled_from([*_HOSTILE_ATTRS, "id", "fill", "style", "clip-path"]).flatmap(  # a prefix keeps its case
                      lambda n: _case(n.removeprefix("xlink:")).map(lambda c, n=n: n[:6] * n.startswith("xlink:") + c)),
                  st.sampled_from(_VALUES))
_TREE = st.recursive(
    st.tuples(_NAME, st.lists(_ATTR, max_size=3, unique_by=lambda a: a[0].lower()), st.just([])),
    lambda kids: st.tuples(_NAME, st.lists(_ATTR, max_size=3, unique_by=lambda a: a[0].lower()),
                           st.lists(kids, max_size=3)),
    max_leaves=12)


def _xml(node) -> str:  # noqa: ANN001 - a generated (tag, attrs, children) triple
    tag, attrs, kids = node
    text = " ".join(f'{k}="{v.replace("&", "&amp;").replace(chr(34), "&quot;").replace("<", "&lt;")}"'
                    for k, v in attrs)
    inner = "".join(_xml(k) for k in kids) or "alert(1)"
    return f"<{tag} {text}>{inner}</{tag}>"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_TREE, min_size=1, max_size=4))
def test_sanitised_svg_holds_only_allowed_names_in_any_case(trees):
    try:
        out = sanitize_svg(SVG_OPEN + "".join(_xml(t) for t in trees) + "</svg>", "f")
    except InvalidSvg:  # not XML (an unbound prefix such as XLINK:href): the figure is left out
        return
    names = _Names()
    names.feed(out)
    assert names.tags <= set(_ELEMENTS), names.tags - set(_ELEMENTS)
    for name, value in names.attrs:
        assert name in _ATTRIBUTES or name in ("xmlns", "xmlns:xlink", "xlink:href"), name
        assert not name.startswith("on") and "javascript:" not in value.lower(), (name, value)
        if name in ("href", "xlink:href"):
            assert value.startswith("#") or value.startswith("data:image/png;base64,"), value


def test_the_issue_cases_are_removed():
    out = sanitize_svg(SVG_OPEN + '<Script>alert(1)</Script><ForeignObject><SCRIPT>alert(2)</SCRIPT>'
                       '</ForeignObject><a HREF="javascript:alert(3)"><rect/></a><rect HREF="javascript:x"/></svg>',
                       "f")
    assert "alert" not in out and "javascript" not in out.lower() and "script" not in out.lower()
    assert "<rect" in out  # drawing survives


# -- the report in a browser -------------------------------------------------------------------
class _Hits(BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the base class's name
        _Hits.hits.append(self.path)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args) -> None:  # noqa: ANN002
        pass


@pytest.fixture(scope="module")
def listener():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hits)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    with chromium_browser() as launched:
        yield launched


def what_ran(browser, page_file: Path) -> dict:
    """Open a file, click every link and drawn element, and count what script did."""
    _Hits.hits.clear()
    context = browser.new_context()
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(page_file.as_uri())
    page.wait_for_load_state("load")
    for link in page.locator("a, svg rect").all()[:60]:
        try:
            link.click(timeout=500, no_wait_after=True)
        except Exception:  # noqa: BLE001 - hidden or covered elements cannot be clicked; others were
            pass
    page.wait_for_timeout(300)
    pwned = page.evaluate("window.__pwned || 0") if page.url.startswith("file:") else 0
    context.close()
    return {"dialogs": len(dialogs), "pwned": pwned, "fetches": list(_Hits.hits)}


@pytest.mark.chromium
def test_hostile_reports_run_no_script_in_chromium(browser, listener, tmp_path):
    report = hostile_run(tmp_path / "run", listener)
    text = report.read_text(encoding="utf-8")
    assert f'content="{CSP}"' in text and "script-src 'none'" in CSP
    assert what_ran(browser, report) == {"dialogs": 0, "pwned": 0, "fetches": []}
    # the sanitiser alone: the same report without its CSP
    bare = report.with_name("no-csp.html")
    bare.write_text(re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", text), encoding="utf-8")
    assert "Content-Security-Policy" not in bare.read_text(encoding="utf-8")
    assert what_ran(browser, bare) == {"dialogs": 0, "pwned": 0, "fetches": []}


@pytest.mark.chromium
def test_the_csp_alone_stops_script_the_sanitiser_never_saw(browser, listener, tmp_path):
    report = hostile_run(tmp_path / "run", listener)
    raw = "".join(svg for svg in hostile_figures(listener))  # unsanitised, as if escaping had failed
    injected = report.with_name("injected.html")
    injected.write_text(report.read_text(encoding="utf-8").replace("</body>", raw + "</body>"), encoding="utf-8")
    assert what_ran(browser, injected) == {"dialogs": 0, "pwned": 0, "fetches": []}


@pytest.mark.chromium
def test_the_detector_sees_the_payloads_run_without_both_defences(browser, listener, tmp_path):
    page = tmp_path / "open.html"
    page.write_text("<!DOCTYPE html><html><body>" + "".join(hostile_figures(listener)) + "</body></html>",
                    encoding="utf-8")
    ran = what_ran(browser, page)
    assert ran["dialogs"] >= 3 and ran["pwned"] >= 3 and "/ran" in ran["fetches"], ran
