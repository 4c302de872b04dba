"""``tdp-disputed`` against the white-box attacks that know it (issue #51), in one run: clean
accuracy, ``diluted`` and ``bridged`` aimed at it, ``bridged`` aimed at ``tdp``, ``frame``, and
the corpus ``diluted`` writes against ``tdp-disputed`` read undefended and with ``tdp`` (the
grid's ``--versus none`` would read a corpus aimed at ``tdp`` instead), each with its paired
difference. Scripted reader, seed 0, the grid's ``run_cell``/``paired_cells`` (95% bootstrap,
clustered over worlds; over questions on a real graph).

    .venv/bin/python bench/graphrag_disputed.py --dataset world --base 4 --out dev.json
    .venv/bin/python bench/graphrag_disputed.py --dataset geonames --out geonames.json

Session 15 (tdp7) pre-registration: ``tdp-disputed`` as of 148745e (one support path per witnessing
page, no anchor on a page giving a single-valued step two objects) against ``bridged`` (with its
``spread`` layout) and ``diluted`` (pooled share 0.5, re-checked on development worlds: 0.3 / 0.5 /
0.7 / 1.0 gave 0.35 / 0.48 / 0.38 / 0.31), run once, in this order, on held-out worlds 1024-1027
(never used before) and then the real graphs, each reported whatever it gives; a graph not finished
by 16:15 UTC is stopped and reported as not measured::

    nice -n 10 timeout 2400 .venv/bin/python bench/graphrag_disputed.py --dataset world --base 1024 --out held1024.json
    nice -n 10 timeout 2400 .venv/bin/python bench/graphrag_disputed.py --dataset geonames --out geonames.json
    nice -n 10 timeout 2400 .venv/bin/python bench/graphrag_disputed.py --dataset umls --out umls.json
    nice -n 10 timeout 2400 .venv/bin/python bench/graphrag_disputed.py --dataset nations --out nations.json
    nice -n 10 timeout 2400 .venv/bin/python bench/graphrag_disputed.py --dataset kinships --out kinships.json

Session 16 (tdp8) pre-registration, committed before the run: ``tdp-disputed`` as of 7a5b1fc (session
15's rules, plus: a subject whose own pages disagree counts neither way in the single-valuedness
statistic, a page's retracted objects not counted; and on a single-valued step only the objects the
entity's own pages state compete, ``own_account``), against every shipped white-box attack re-optimised
for it (``diluted`` at pooled share 0.5, the best of 0.3 / 0.5 / 0.75 / 1.0 on development worlds 4-7:
0.23 / 0.17 at 0.75 and 1.0; ``bridged`` with ``paged`` and ``spread``; ``adaptive``). Metric: attack
success on the targeted questions (95% bootstrap clustered over worlds); the reported figure is the
highest success among ``diluted``, ``bridged`` and ``adaptive`` against ``tdp-disputed``, with its
interval, whatever it is; clean accuracy paired with ``tdp`` and undefended. Run once on held-out
worlds 1028-1031 (never used before), seed 0, scripted reader, then (not held out, if time allows, each
stopped at 18:55 UTC if not finished and reported as not measured) GeoNames, UMLS, Nations, Kinships::

    nice -n 10 timeout 1500 .venv/bin/python bench/graphrag_disputed.py --dataset world --base 1028 --out held1028.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest.mock import patch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import suites.graphrag.report as report  # noqa: E402
import suites.graphrag.scenarios as scenarios  # noqa: E402
from suites.graphrag.report import Cell, paired_cells, run_cell  # noqa: E402

# (label, attack, defense, the defense the white-box corpus is aimed at: None for the cell's own)
CELLS = [("clean:tdp-disputed", "none", "tdp-disputed", None), ("clean:tdp", "none", "tdp", None),
         ("clean:none", "none", "none", None), ("diluted:tdp-disputed", "diluted", "tdp-disputed", None),
         ("bridged:tdp-disputed", "bridged", "tdp-disputed", None), ("bridged:tdp", "bridged", "tdp", None),
         ("bridged(tdp):none", "bridged", "none", None), ("frame:tdp-disputed", "frame", "tdp-disputed", None),
         ("frame:none", "frame", "none", None), ("diluted(disp):none", "diluted", "none", "tdp-disputed"),
         ("diluted(disp):tdp", "diluted", "tdp", "tdp-disputed"),
         ("bridged(disp):none", "bridged", "none", "tdp-disputed"),
         ("adaptive:tdp-disputed", "adaptive", "tdp-disputed", None)]
PAIRS = [("clean:tdp-disputed", "clean:tdp"), ("clean:tdp-disputed", "clean:none"),
         ("diluted:tdp-disputed", "bridged:tdp-disputed"), ("diluted:tdp-disputed", "bridged:tdp"),
         ("diluted:tdp-disputed", "diluted(disp):none"), ("diluted(disp):tdp", "diluted(disp):none"),
         ("bridged:tdp-disputed", "bridged(disp):none"), ("bridged:tdp", "bridged(tdp):none"),
         ("frame:tdp-disputed", "frame:none")]


def interval(iv: Any) -> str:
    return f"{iv.estimate:.2f} [{iv.low:.2f}, {iv.high:.2f}]"


def aimed_at(defense: str) -> Callable[[str], str]:
    """The white-box attacks aim at ``defense`` whatever defense reads the corpus."""
    return lambda _defense: defense


def measure(dataset: str, out: Path) -> None:
    cells: dict[str, Cell] = {}
    rows: list[dict[str, Any]] = []

    def save(row: dict[str, Any]) -> None:
        rows.append(row)
        print({k: v for k, v in row.items() if k != "per_task"}, flush=True)
        out.write_text(json.dumps(rows, indent=1))

    for label, attack, defense, aimed in CELLS:
        start = time.time()
        extra: dict[str, Any] = {"questions": "all"} if attack == "none" else {}
        aim = aimed_at(aimed) if aimed else scenarios.adaptive_target
        with patch.object(scenarios, "adaptive_target", aim), patch.object(report, "adaptive_target", aim):
            cell = cells[label] = run_cell(dataset, attack, defense, **extra)  # the spend too, of that corpus
        save({"label": label, "n": len(cell.records), "accuracy": interval(cell.interval("accuracy")),
              "success": interval(cell.interval("attack_success")) if attack != "none" else "-",
              "spent": [round(x, 2) for x in cell.spent], "seconds": round(time.time() - start),
              "per_task": {r.task: [bool(r.metrics.get("correct")), bool(r.metrics.get("attack_success"))]
                           for r in cell.records}})
    for a, b in PAIRS:
        for metric in ("accuracy",) if a.startswith("clean") else ("attack_success", "accuracy"):
            save({"label": f"{a} - {b}", "metric": metric, "paired": interval(paired_cells(cells[a], cells[b], metric))})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--dataset", default="world")
    parser.add_argument("--base", type=int, default=scenarios.EVAL_WORLD_BASE, help="the first of 4 worlds")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    scenarios.EVAL_WORLD_BASE = args.base
    measure(args.dataset, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
