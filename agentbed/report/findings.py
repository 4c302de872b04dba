"""The report's opening block: each workload's headline findings, as ``agentbed demo`` prints them."""

from __future__ import annotations

from agentbed.report.html import Markup, el, slug
from agentbed.report.rundir import RunContents
from agentbed.summary import findings_of


def findings_section(run: RunContents) -> Markup | None:
    """A table of every workload's findings (value with interval, the paper's figure, what the
    number is); None when no summary offers any."""
    rows = []
    for suite, summary in run.summaries.items():
        if not isinstance(summary, dict):
            continue
        if summary.get("error"):
            rows.append(el("tr", el("td", el("a", suite, href=f"#workload-{slug(suite)}")),
                           el("td", "failed: see its section", colspan="4", class_="status-error")))
            continue
        for i, finding in enumerate(findings_of(summary)):
            rows.append(el("tr", el("td", el("a", suite, href=f"#workload-{slug(suite)}") if i == 0 else ""),
                           el("td", str(finding["label"])), el("td", el("code", str(finding["value"]))),
                           el("td", str(finding.get("paper") or "–")), el("td", str(finding.get("note") or ""))))
    if not rows:
        return None
    head = el("tr", *(el("th", c) for c in ("workload", "finding", "value [95% interval]", "paper", "what it is")))
    return el("section", el("h2", "Headline findings"),
              el("p", "The same block `agentbed demo` prints; every full table is in the workload's section.",
                 class_="facts"),
              el("table", el("thead", head), el("tbody", *rows), id="findings-table"),
              id="findings", class_="findings")
