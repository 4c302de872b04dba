"""Per targeted question, what ``tdp-disputed`` sees under a white-box attack aimed at it, and why
the answer goes where it goes (issue #51 item 1, session 26): the contested step's candidates,
their claim pages (the page's subject, attacker's or clean), the ranker's two weighted counts and
scores, the statistic behind the single-valued checks (``functional``), the dispute check's
accounts, split pages, the entity's own account, the winners, the reader's answer.

    .venv/bin/python bench/graphrag_trace_disputed.py --dataset kinships --attacks bridged,diluted --out k.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import controllers.graphrag.accounts as accounts  # noqa: E402
import controllers.graphrag.tdp as tdp  # noqa: E402
from agentbed.runner import EpisodeSpec, run_episode  # noqa: E402
from controllers.graphrag.candidates import document_subject, objects_at  # noqa: E402
from controllers.graphrag.features import FEATURES  # noqa: E402
from environments.graphrag.agents import ReaderAgent  # noqa: E402
from suites.graphrag.defenses import DEFENSES, make_defense  # noqa: E402
from suites.graphrag.report import SUITE  # noqa: E402
from suites.graphrag.scenarios import adaptive_target, make_env, poisoned, task_ids  # noqa: E402

WEIGHED = ("anchored_corroborated_ends", "independent_support_paths")


def recording(log: list[dict[str, Any]]) -> Callable[[], None]:
    """Wrap the defense's own functions so every conflict it settles is logged as it sees it."""
    saved = (tdp.candidate_features, tdp.tied_winners, tdp.disputed_entity)

    def features(ctx: Any, cand: Any, needed: Any = None) -> Any:
        phi = saved[0](ctx, cand, needed)
        log.append({"kind": "features", "entity": ctx.conflict.entity, "relation": ctx.conflict.relation,
                    "answer": cand.answer, "unanchoring": sorted(ctx.unanchoring),
                    **{f: round(math.expm1(float(phi[FEATURES.index(f)])), 3) for f in WEIGHED}})
        return phi

    def winners(kg: Any, conflict: Any, scores: Any, tol: float = 1e-9, unanchoring: Any = (), account: Any = ()) -> Any:
        top, best = saved[1](kg, conflict, scores, tol, unanchoring, account)
        log.append({"kind": "winners", "entity": conflict.entity, "relation": conflict.relation,
                    "scores": {c.answer: round(float(s), 4) for c, s in zip(conflict.candidates, scores, strict=True)},
                    "account": sorted(account), "top": [c.answer for c in top]})
        return top, best

    def disputed(kg: Any, conflict: Any) -> bool:
        out = saved[2](kg, conflict)
        subjects, single = accounts.single_object_subjects(kg).get(conflict.relation, (frozenset(), frozenset()))
        log.append({"kind": "dispute", "entity": conflict.entity, "relation": conflict.relation, "disputed": out,
                    "subjects": len(subjects), "single": len(single)})
        return out

    tdp.candidate_features, tdp.tied_winners, tdp.disputed_entity = features, winners, disputed

    def restore() -> None:
        tdp.candidate_features, tdp.tied_winners, tdp.disputed_entity = saved

    return restore


def step_view(kg: Any, retrieved: set[int], s: str, r: str, attacker: set[str]) -> dict[str, Any]:
    """Every object read at the contested step, with its claim pages: (doc, subject, attacker's?)."""
    out: dict[str, Any] = {}
    for o, ids in sorted(objects_at(kg, retrieved, s, r).items()):
        docs = sorted({kg.statements[i].doc for i in ids})
        out[o] = [(d, document_subject(kg, d), d in attacker, len(kg.by_doc.get(d, []))) for d in docs]
    return out


def trace(dataset: str, attack: str, defense: str) -> list[dict[str, Any]]:
    opts = SUITE.resolve_options({"dataset": dataset, "attack": attack, "defense": defense, "worlds": 1})
    built = poisoned(dataset, 0, attack, 5, 20, "louvain", adaptive_target(defense))
    clean_ids = set(poisoned(dataset, 0, "none", 5, 20, "louvain").index.documents)  # published ids are content hashes
    kg = built.index.kg
    attacker = {d for d in built.index.documents if d not in clean_ids}
    by_q = built.plan.by_question()
    functional = accounts.functional
    rows = []
    for task in task_ids(opts):
        qid = task.split("-", 2)[2]  # dataset-world-question
        env = make_env(task, opts)
        log: list[dict[str, Any]] = []
        restore = recording(log)
        try:
            record = run_episode(env, ReaderAgent(), EpisodeSpec("graphrag", task, "reader", 0, opts), budget=SUITE.budget)
        finally:
            restore()
        t = by_q.get(qid)
        s, r = (t.fact.head, t.fact.relation) if t else ("", "")
        retrieved = set().union(*(set(v[0]) for v in env._verdicts.values())) if env._verdicts else set()
        removed = env._removed()
        rows.append({
            "question": qid, "text": env.query.text, "answer": env.state["answer"],
            "gold": t.fact.tail if t else None, "fake": t.fake if t else None,
            "success": record.metrics.get("attack_success"), "correct": record.metrics.get("correct"),
            "step": [s, r], "functional": functional(kg, r) if r else None,
            "objects_before": step_view(kg, retrieved, s, r, attacker),
            "objects_after": step_view(kg, retrieved - removed, s, r, attacker),
            "page_accounts": {d: sorted(v) for d, v in accounts.page_accounts(kg, (s, r)).items()},
            "log": [e for e in log if (e["entity"], e["relation"]) == (s, r)] or log[-6:],
        })
    return rows


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--dataset", required=True)
    p.add_argument("--attacks", default="bridged,diluted,fabricated,adaptive,copy")
    p.add_argument("--defense", default="tdp-disputed", choices=DEFENSES)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    make_defense(a.defense)
    out = {attack: trace(a.dataset, attack, a.defense) for attack in a.attacks.split(",")}
    Path(a.out).write_text(json.dumps(out, indent=1, default=str))
    for attack, rows in out.items():
        print(attack, sum(bool(r["success"]) for r in rows), "/", len(rows))


if __name__ == "__main__":
    main()
