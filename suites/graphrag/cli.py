"""``agentbed graphrag``: run an attack x defense grid on one dataset and print or save it.

    agentbed graphrag grid --dataset world --attacks gragpoison,kepo --defenses none,tdp --worlds 4
    agentbed graphrag grid --dataset nations --out nations.json
    agentbed graphrag ranker                      # the trained TDP weights
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from agentbed.errors import UsageError


def _names(value: str, allowed: tuple[str, ...], flag: str) -> list[str]:
    names = [v for v in value.split(",") if v]
    bad = [n for n in names if n not in allowed]
    if bad or not names:
        raise UsageError(f"{flag}: {bad[0] if bad else value!r} is not one of {', '.join(allowed)}")
    return names


def cmd_grid(args: argparse.Namespace) -> int:
    from environments.graphrag.real import REAL_DATASETS, available
    from suites.graphrag.defenses import DEFENSES
    from suites.graphrag.report import ALL_ATTACKS, grid_table, run_grid

    if args.dataset not in ("world", *REAL_DATASETS):
        raise UsageError(f"--dataset: {args.dataset!r} is not one of world, {', '.join(REAL_DATASETS)}")
    if args.dataset != "world" and not available(args.dataset):
        raise UsageError(f"--dataset {args.dataset}: the pykeen files are missing; run scripts/fetch-pykeen")
    if args.worlds < 1:
        raise UsageError(f"--worlds: must be at least 1, got {args.worlds}")
    attacks = _names(args.attacks, ALL_ATTACKS, "--attacks")
    defenses = _names(args.defenses, DEFENSES, "--defenses")
    cells = run_grid(args.dataset, attacks, defenses, worlds=args.worlds, budget=args.budget,
                     communities=args.communities)
    command = (f"agentbed graphrag grid --dataset {args.dataset} --attacks {args.attacks} --defenses {args.defenses}"
               f" --worlds {args.worlds} --budget {args.budget}")
    tab = grid_table(cells, args.dataset, command)
    widths = [max(len(str(x)) for x in col) for col in zip(tab["columns"], *tab["rows"], strict=True)]
    for row in [tab["columns"], *tab["rows"]]:
        print("  ".join(str(x).ljust(w) for x, w in zip(row, widths, strict=True)))
    print(tab["note"])
    if args.out:
        doc: dict[str, Any] = {"command": command, "cells": [c.to_dict() for c in cells]}
        Path(args.out).write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return 0


def cmd_ranker(args: argparse.Namespace) -> int:
    from suites.graphrag.training import trained_ranker

    for variant in ("tdp", "tdp-raw"):
        print(variant, json.dumps(trained_ranker(variant).to_dict(), indent=1))
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("graphrag", help="GraphRAG poisoning: attack x defense grids, TDP ranker")
    sub = p.add_subparsers(dest="graphrag_command", required=True)
    g = sub.add_parser("grid", help="run attacks x defenses on one dataset with the reader agent")
    g.add_argument("--dataset", default="world", help="world, nations, kinships or umls")
    g.add_argument("--attacks", default="none,poisonedrag,gragpoison,community,kepo,tkpa")
    g.add_argument("--defenses", default="none,ngram,cluster,paraphrase,provenance,tdp,tdp-raw")
    g.add_argument("--worlds", type=int, default=4, help="generated evaluation worlds")
    g.add_argument("--budget", type=int, default=5, help="poison documents per contested fact (and 4 statements each)")
    g.add_argument("--communities", default="louvain", choices=("louvain", "leiden"))
    g.add_argument("--out", help="write the cells (intervals per metric) to this JSON file")
    g.set_defaults(func=cmd_grid)
    r = sub.add_parser("ranker", help="print the TDP ranker's weights (trained with a fixed seed)")
    r.set_defaults(func=cmd_ranker)
