"""The summary a workload hands to the report and the gate: tables, figures, headline metrics.

A summary is plain JSON so it can be written next to the run and rendered later::

    {"suite": "contracts",
     "title": "Observation contracts",
     "episodes": 240, "seeds": 5,
     "headline": [{"metric": "pass_rate", "agent": "oracle", "estimate": 1.0, "low": 1.0, "high": 1.0,
                   "n": 240, "higher_is_better": true}],
     "tables": [{"title": "...", "columns": ["task", "pass"], "rows": [["s3-get", "0.80 [0.6, 1.0]"]],
                 "note": "..."}],
     "figures": [{"title": "...", "svg": "<svg ...>"}],
     "findings": [{"label": "oracle pass rate", "value": "1.000 [1.000, 1.000]", "paper": "1.00",
                   "note": "scripted agent"}],
     "command": "agentbed run contracts --agent naive --seeds 5"}

``findings`` (a few per workload, made with :func:`finding`) are what ``agentbed demo`` prints
on one screen and what the report opens with; every full table stays in ``tables``.
Every table and figure should say, in ``note`` or the summary's ``command``, which command
regenerates it.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from agentbed.stats import Interval


def headline(metric: str, interval: Interval, *, higher_is_better: bool = True, **labels: Any) -> dict[str, Any]:
    return {"metric": metric, **labels, "estimate": interval.estimate, "low": interval.low, "high": interval.high,
            "n": interval.n, "higher_is_better": higher_is_better}


def finding(label: str, value: Interval | str, *, paper: str | None = None, note: str | None = None
            ) -> dict[str, Any]:
    """One line of the demo's one-screen summary: what was found, with its interval, beside the
    paper's figure where the paper has one; ``note`` says what the number is (e.g. "cost model",
    "scripted agent") when it is not a measurement of a real agent."""
    text = fmt(value) if isinstance(value, Interval) else str(value)
    return {"label": label, "value": text, "paper": paper, "note": note}


def table(title: str, columns: list[str], rows: list[list[Any]], note: str = "") -> dict[str, Any]:
    return {"title": title, "columns": columns, "rows": rows, "note": note}


def figure_from_matplotlib(title: str, fig: Any) -> dict[str, Any]:
    """Embed a matplotlib figure as inline SVG (the report must work without a network)."""
    import matplotlib

    buf = io.StringIO()
    # text as SVG text, not as glyph outlines (a <use> per character): a fifth of the bytes, and
    # the report's labels can be searched and copied
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        fig.savefig(buf, format="svg", bbox_inches="tight")
    svg = buf.getvalue()
    start = svg.find("<svg")
    return {"title": title, "svg": svg[start:]}


def interval_bars(title: str, intervals: list[tuple[str, Interval]], ylabel: str) -> dict[str, Any]:
    """A horizontal bar per name at its estimate, with its interval as the error bar, on a 0-1 axis
    (rates). Names sit on the vertical axis, one row each, so however many there are and however
    long, no two labels overprint (rotated x-labels did, with many agents)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [name for name, _ in intervals]
    est = [i.estimate for _, i in intervals]
    below = [i.estimate - i.low for _, i in intervals]
    above = [i.high - i.estimate for _, i in intervals]
    fig, ax = plt.subplots(figsize=(7, 0.9 + 0.32 * len(names)))
    rows = list(range(len(names)))[::-1]  # the first name on top
    ax.barh(rows, est, xerr=[below, above], capsize=3, color="#4a7ab5", height=0.6)
    ax.set_yticks(rows, names)
    ax.set_xlabel(ylabel)
    ax.set_xlim(0, 1.05)
    fig.tight_layout()
    out = figure_from_matplotlib(title, fig)
    plt.close(fig)
    return out


def fmt(interval: Interval, digits: int = 3) -> str:
    return f"{interval.estimate:.{digits}f} [{interval.low:.{digits}f}, {interval.high:.{digits}f}]"


def write_summary(summary: dict[str, Any], path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(summary, indent=1, default=str), encoding="utf-8")
    tmp.replace(path)
    return path


MAX_FINDINGS = 5  # per workload: four workloads then fit one screen (about 25 lines)


def findings_of(summary: dict[str, Any], limit: int | None = 3) -> list[dict[str, Any]]:
    """A workload's findings; a summary without any offers its headline metrics instead (the first
    ``limit``: a screen's worth; None, every one: each agent and each paired difference)."""
    given = summary.get("findings")
    if isinstance(given, list) and given:
        return [f for f in given if isinstance(f, dict) and "label" in f and "value" in f]
    out = []
    for h in summary.get("headline", [])[:limit]:
        try:
            who = ", ".join(str(v) for k, v in h.items() if isinstance(v, str) and k != "metric")
            value = f"{float(h['estimate']):.3f} [{float(h['low']):.3f}, {float(h['high']):.3f}]"
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
        out.append({"label": f"{h.get('metric', '?')} {who}".strip(), "value": value, "paper": None, "note": None})
    return out


def findings_lines(summaries: list[dict[str, Any]]) -> list[str]:
    """The one-screen summary of ``agentbed demo``: a block per workload, its findings with their
    intervals, the paper's figure beside them and what each number is."""
    lines = ["headline findings (95% bootstrap intervals; the paper's figure where it has one)"]
    for summary in summaries:
        suite = str(summary.get("suite", "?"))
        facts = [f"{summary[k]} {k}" for k in ("episodes", "seeds") if isinstance(summary.get(k), int)]
        if isinstance(summary.get("wall_seconds"), int | float):
            facts.append(f"{summary['wall_seconds']:.0f} s")
        lines.append(f"{suite}" + (f"  ({', '.join(facts)})" if facts else ""))
        if summary.get("error"):
            last = str(summary["error"]).strip().splitlines() or ["?"]
            lines.append(f"  FAILED: {last[-1][:100]}")
            continue
        found = findings_of(summary)
        shown = found if len(found) <= MAX_FINDINGS else found[:MAX_FINDINGS - 1]
        for f in shown:
            paper = f" | paper {f['paper']}" if f.get("paper") else ""
            note = f" ({f['note']})" if f.get("note") else ""
            lines.append(f"  {str(f['label']):<44} {f['value']}{paper}{note}")  # a long label is never cut
        if len(shown) < len(found):
            lines.append(f"  (+{len(found) - len(shown)} more in the report)")
        if not found:
            lines.append("  (no findings; see the report)")
    return lines
