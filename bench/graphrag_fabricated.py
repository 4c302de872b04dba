"""A fabricating attacker against ``tdp-disputed``'s own account (issue #51, session 17): not a shipped
attack, a measurement. Per target it writes ``--pages`` documents about the contested entity, each
the fake claim among three invented facts naming the entity (other relations, objects drawn from the
dataset's entities), so each is a full page about the entity (``document_subject``) that gives the
step one object. Where the entity's real pages are all short (GeoNames' cities), those pages are its
only full account, and ``own_account`` lets only the fake compete. The shipped attacks copy only true
facts, which a city has one or two of, so they cannot write such a page. Within the budget: 5 pages
of 4 statements per target. The cells run through the grid's ``run_cell`` with the attack in the
place of ``restate``, for this process only.

    .venv/bin/python bench/graphrag_fabricated.py --dataset geonames            # session 17: tdp-disputed 0.55
    .venv/bin/python bench/graphrag_fabricated.py --dataset world --first-world 4
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable
from pathlib import Path
from unittest.mock import patch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from attacks.graphrag import ATTACKS  # noqa: E402
from attacks.graphrag.targets import AttackBudget, AttackPlan, Poisoning  # noqa: E402
from environments.graphrag.corpus import Document, Fact  # noqa: E402
from environments.graphrag.dataset import Dataset  # noqa: E402
from suites.graphrag.report import run_cell  # noqa: E402

INVENTED = 3  # invented facts per page beside the fake claim (4 statements a page, 20 for 5 pages)


def fabricated(pages: int) -> Callable[[Dataset, AttackPlan, random.Random, AttackBudget], Poisoning]:
    def attack(dataset: Dataset, plan: AttackPlan, rng: random.Random, budget: AttackBudget) -> Poisoning:
        table = dataset.table
        out = Poisoning()
        relations = sorted({f.relation for f in dataset.facts})
        entities = sorted({f.head for f in dataset.facts} | {f.tail for f in dataset.facts})
        for t, target in enumerate(plan.targets):
            s, r = target.fact.head, target.fact.relation
            others = [e for e in entities if e not in (s, target.fact.tail, target.fake)]
            for j in range(min(pages, budget.documents)):
                facts = [Fact(s, r, target.fake)]
                facts += [Fact(s, rng.choice([x for x in relations if x != r]), rng.choice(others)) for _ in range(INVENTED)]
                body: list[str] = [table.sentence(f, variant=k + j) for k, f in enumerate(facts)]
                out.add(t, Document(f"fabr{t:03d}-{j}", s, body, origin="poison"), table)
        return out

    return attack


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--dataset", default="geonames")
    parser.add_argument("--first-world", type=int, default=1000)
    parser.add_argument("--pages", type=int, default=5)
    parser.add_argument("--defenses", default="none,tdp,tdp-disputed")
    args = parser.parse_args(argv)
    with patch.dict(ATTACKS, {"restate": fabricated(args.pages)}):
        for defense in args.defenses.split(","):
            cell = run_cell(args.dataset, "restate", defense, first_world=args.first_world)
            s, a = cell.interval("attack_success"), cell.interval("accuracy")
            print(f"fabricated x{args.pages} {args.dataset} {defense}: success {s.estimate:.2f} [{s.low:.2f}, {s.high:.2f}]"
                  f" accuracy {a.estimate:.2f} n={len(cell.records)} spent {cell.spent[0]:.1f}/{cell.spent[1]:.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
