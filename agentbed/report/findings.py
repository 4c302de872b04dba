"""The report's opening block: each workload's headline findings, as ``agentbed demo`` prints them."""

from __future__ import annotations

from typing import Any

from agentbed.report.html import Markup, el, slug
from agentbed.report.plots import ForestRow, forest_plot, paper_number, parse_interval
from agentbed.report.rundir import RunContents
from agentbed.summary import findings_of


def findings_forest(summaries: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """The findings whose value is an interval, as one forest plot (the paper's figure beside
    each); the others (a count, a sentence) as rows for a table. Shared by the report and the viewer."""
    rows: list[ForestRow] = []
    other: list[dict[str, Any]] = []
    for suite, summary in summaries.items():
        if not isinstance(summary, dict) or summary.get("error"):
            continue
        for found in findings_of(summary, limit=None):  # every agent and every paired row
            parsed = parse_interval(str(found.get("value")))
            paper = found.get("paper")
            if parsed is None:
                other.append({"suite": suite, **{k: found.get(k) for k in ("label", "value", "paper", "note")}})
                continue
            label = f"{suite}: {found['label']}" + (f" ({found['note']})" if found.get("note") else "")
            rows.append(ForestRow(label, *parsed, paper=paper_number(str(paper)) if paper else None,
                                  paper_text=str(paper or ""), group=f"{suite}:{found['label']}"))
    return forest_plot(rows), other


def findings_section(run: RunContents, order: list[str] | None = None) -> Markup | None:
    """A forest plot and a table of every workload's findings (value with interval, the paper's
    figure, what the number is), in the report's section order; None when no summary offers any."""
    rows = []
    suites = [s for s in (order or []) if s in run.summaries] + [s for s in run.summaries if s not in (order or [])]
    summaries = {s: run.summaries[s] for s in suites}
    forest, _ = findings_forest(summaries)
    for suite, summary in summaries.items():
        if not isinstance(summary, dict):
            continue
        if summary.get("error"):
            rows.append(el("tr", el("td", el("a", suite, href=f"#workload-{slug(suite)}")),
                           el("td", "failed: see its section", colspan="4", class_="status-error")))
            continue
        for i, finding in enumerate(findings_of(summary, limit=None)):
            rows.append(el("tr", el("td", el("a", suite, href=f"#workload-{slug(suite)}") if i == 0 else ""),
                           el("td", str(finding["label"])), el("td", el("code", str(finding["value"]))),
                           el("td", str(finding.get("paper") or "–")), el("td", str(finding.get("note") or ""))))
    if not rows:
        return None
    head = el("tr", *(el("th", c) for c in ("workload", "finding", "value [95% interval]", "paper", "what it is")))
    plot = el("figure", el("figcaption", "Headline findings: estimate and 95% interval, the paper's figure as a "
                                         "diamond"), Markup(forest), class_="figure", id="findings-forest") \
        if forest else None
    return el("section", el("h2", "Headline findings"),
              el("p", "The same block `agentbed demo` prints; every full table is in the workload's section.",
                 class_="facts"), plot,
              el("table", el("thead", head), el("tbody", *rows), id="findings-table"),
              id="findings", class_="findings")
