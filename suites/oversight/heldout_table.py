"""One held-out table over every benchmark (issue 54 item 5), read from the records that
``agentbed oversight evaluate HELD --train DEV --record FILE`` writes (suites/oversight/record.py).

A column per benchmark; rows: the split, the same baselines' regret (the scalar-only policy chosen
on the development set, two-action score routing, the best fixed action), the action-conditioned
controller's ratio and paired difference against the chosen baseline with the verdict, and the
regime descriptors (evaluate.regime_descriptors): spread and mean of the primary intervention's
advantage, the share of checkpoints where deferring to it is not best, and the share of the room
for control the scalar score explains. Every number was fitted on development games only and
measured on held-out ones.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentbed.errors import UsageError
from agentbed.summary import table
from controllers.oversight.report import fmt_interval

NEEDED = ("seeds", "command", "datasets", "result")


def read_records(paths: Sequence[str | Path]) -> list[tuple[str, dict[str, Any]]]:
    """(benchmark, record) per file, in the order given; a record without a held-out protocol or
    without the descriptors is refused (one line: re-run its evaluate command with --record)."""
    out = []
    for path in paths:
        try:
            record = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UsageError(f"{path}: not a readable record ({exc})") from None
        missing = [k for k in NEEDED if k not in record] or (["descriptors"] if "descriptors" not in record["result"]
                                                             else [])
        if missing:
            raise UsageError(f"{path}: record lacks {missing[0]!r}; write it again with evaluate ... --record")
        if "dev" not in record["datasets"]:
            raise UsageError(f"{path}: not a held-out record (evaluate HELD --train DEV --record)")
        out.append((str(record["result"].get("benchmark", path)), record))
    return out


def _regret(result: dict[str, Any], name: str) -> str:
    value = result["regret"].get(name)
    return fmt_interval(value) if value else "-"


def column(record: dict[str, Any]) -> list[str]:
    r, d = record["result"], record["result"]["descriptors"]
    selected = r["ratios"]["selected_scalar_only"]
    picked = sorted(set(selected.get("picked_per_fold") or []))
    diff = r["differences"]["action-conditioned - scalar-selected"]
    dev, held = (part.strip() for part in record["seeds"].removeprefix("fitted on ").split("; evaluated on "))
    return [dev, held, f"{r['checkpoints']} ({r['games']} games)",
            _regret(r, "action-conditioned"), f"{_regret(r, 'scalar-selected')} ({', '.join(picked)})",
            _regret(r, "scalar"), _regret(r, "best-fixed"),
            fmt_interval(selected), fmt_interval(diff), r["regime"], fmt_interval(r["ratios"]["scalar"]),
            d["intervention"], fmt_interval(d["advantage_spread"]), fmt_interval(d["share_defer_not_best"]),
            fmt_interval(d["strength"]), fmt_interval(d["scalar_explains"])]


ROWS = ("fitted on (development)", "evaluated on (held out)", "held-out checkpoints",
        "action-conditioned regret", "scalar-only chosen on development (picked)", "two-action score routing regret",
        "best fixed action regret", "ratio action-conditioned / chosen scalar-only",
        "difference action-conditioned - chosen scalar-only", "verdict",
        "ratio action-conditioned / two-action routing", "primary intervention (defer)",
        "advantage spread: sd of tau", "share where defer is not best", "intervention strength: mean tau",
        "share of the room for control the scalar score explains")


def heldout_table(records: list[tuple[str, dict[str, Any]]], command: str) -> dict[str, Any]:
    columns = [column(rec) for _, rec in records]
    rows = [[name, *(c[i] for c in columns)] for i, name in enumerate(ROWS)]
    builds = "; ".join(f"{name}: {rec['command']}" for name, rec in records)
    return table("Held-out regret per benchmark, with regime descriptors", ["", *(n for n, _ in records)], rows,
                 "Every controller fitted on development games only (suites/oversight/seeds.py) and scored on "
                 "held-out games; 95% cluster-bootstrap intervals over games. Verdict: gain or loss only when "
                 "the interval of the paired difference excludes 0. tau(h) = U(defer) - U(continue) per "
                 "checkpoint; the scalar score's share = 1 - regret(scalar oracle) / regret(best fixed action), "
                 "the scalar oracle fitted with hindsight on the held-out checkpoints (an upper bound of what "
                 f"the score can do). Evaluations: {builds}. Regenerate: {command}")
