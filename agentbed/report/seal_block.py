"""The block at the top of a report: the run's seal as ``agentbed verify`` judges it."""

from __future__ import annotations

from agentbed.report.html import Markup, el
from agentbed.seal_verdict import SealStatus

MAX_SHOWN = 20  # problems listed in the block; `agentbed verify` prints all


def seal_section(status: SealStatus) -> Markup:
    shown = status.problems[:MAX_SHOWN]
    more = len(status.problems) - len(shown)
    return el("section",
              el("p", el("strong", status.headline), class_="facts" if status.trusted and status.signature != "not checked" else "problem"),
              el("ul", *(el("li", el("code", p)) for p in shown), el("li", f"... and {more} more") if more else None)
              if shown else None,
              id="seal", class_=f"seal seal-{status.state}")
