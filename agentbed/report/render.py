"""Render a run directory as one self-contained HTML file (inline CSS and SVG, no scripts).

The page opens with a Content-Security-Policy that forbids script, any fetch and any form:
even markup that slipped past escaping and the SVG sanitiser stays inert when the report is
opened (a second line of defence; the first is :func:`agentbed.report.html.esc`)."""

from __future__ import annotations

from pathlib import Path

from agentbed.errors import UsageError
from agentbed.report.episodes import episodes_section
from agentbed.report.findings import findings_section
from agentbed.report.html import STYLE, Markup, Splices, el, slug
from agentbed.report.overview import overview_section
from agentbed.report.rundir import SUMMARY_NAME, RunContents, load_run
from agentbed.report.seal_block import seal_section
from agentbed.report.workload import workload_section
from agentbed.seal_verdict import SealStatus

REPORT_NAME = "report.html"
# inline styles and data: images only: no script (inline or not), no fetch, no frame, no form target
CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; "
       "frame-src 'none'; object-src 'none'; script-src 'none'")


def render_report(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """Write ``RUN_DIR/report.html`` (or ``out``) and return its path.

    Every workload with a ``<suite>/summary.json``, and every workload that run.json or the
    index names, gets a section; missing or malformed parts show as notes naming the file.
    """
    return render_run(run_dir, out)[0]


def render_run(run_dir: str | Path, out: str | Path | None = None, seal: SealStatus | None = None,
               key: bytes | None = None) -> tuple[Path, RunContents]:
    """:func:`render_report`, also returning what was read (its problems and log checks);
    ``seal`` (``verify``'s verdict) opens the page, ``key`` checks each log's HMAC."""
    root = Path(run_dir)
    if not root.is_dir():
        raise UsageError(f"{run_dir}: not a run directory (no such directory)")
    run = load_run(root, key)
    suites = list(dict.fromkeys([*run.named_suites, *run.summaries, *run.expected_suites]))
    # Workload sections first: rendering them finds the problems the overview lists.
    workloads = [workload_section(s, run.summaries.get(s), f"{s}/{SUMMARY_NAME}", run.problems) for s in suites]
    findings = findings_section(run, suites)
    nav = el("nav", el("ul", el("li", el("a", "Headline findings", href="#findings")) if findings else None,
                       el("li", el("a", "Run overview", href="#overview")),
                       *(el("li", el("a", s, href=f"#workload-{slug(s)}")) for s in suites),
                       el("li", el("a", "Episodes", href="#episodes"))))
    title = f"agentbed report: {root.resolve().name}"
    splices = Splices()  # text as long as the run (its seeds) goes to the file, not into the page
    page = Markup("<!DOCTYPE html>\n") + el(
        "html",
        el("head", Markup('<meta charset="utf-8">'),
           Markup(f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'),
           Markup('<meta name="viewport" content="width=device-width, initial-scale=1">'),
           el("title", title), el("style", Markup(STYLE))),
        el("body", el("header", el("h1", title), nav), seal_section(seal) if seal else None, findings, overview_section(run, splices), *workloads, episodes_section(run)),
        lang="en")
    path = Path(out) if out is not None else root / REPORT_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part")
    with tmp.open("w", encoding="utf-8") as fh:
        splices.write(page + "\n", fh)
    tmp.replace(path)
    return path, run

