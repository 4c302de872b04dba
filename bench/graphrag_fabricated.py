"""The fabricating attack (``attacks/graphrag/fabricated.py``, shipped as ``fabricated`` since session 18)
with a chosen number of witness pages, per defense: session 17 measured it without witnesses (each page
invents its own facts), the shipped attack spends one page on a witness. The cells run through the
grid's ``run_cell`` with the variant in the place of ``fabricated``, for this process only.

    .venv/bin/python bench/graphrag_fabricated.py --dataset geonames --witnesses 0   # session 17: tdp-disputed 0.55
    .venv/bin/python bench/graphrag_fabricated.py --dataset world --first-world 4 --witnesses 2
"""

from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path
from unittest.mock import patch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from attacks.graphrag import ATTACKS  # noqa: E402
from attacks.graphrag.fabricated import WITNESSES, fabricate  # noqa: E402
from suites.graphrag.report import run_cell  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--dataset", default="geonames")
    parser.add_argument("--first-world", type=int, default=1000)
    parser.add_argument("--witnesses", type=int, default=WITNESSES)
    parser.add_argument("--defenses", default="none,tdp,tdp-disputed")
    args = parser.parse_args(argv)
    if args.witnesses < 0:
        parser.error(f"--witnesses: {args.witnesses} is negative")
    with patch.dict(ATTACKS, {"fabricated": partial(fabricate, witnesses=args.witnesses)}):
        for defense in args.defenses.split(","):
            cell = run_cell(args.dataset, "fabricated", defense, first_world=args.first_world)
            s, a = cell.interval("attack_success"), cell.interval("accuracy")
            print(f"fabricated, {args.witnesses} witnesses, {args.dataset} {defense}: success {s.estimate:.2f} "
                  f"[{s.low:.2f}, {s.high:.2f}] accuracy {a.estimate:.2f} n={len(cell.records)} "
                  f"spent {cell.spent[0]:.1f}/{cell.spent[1]:.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
