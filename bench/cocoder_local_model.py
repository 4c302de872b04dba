"""The LangChain coder with a local model on a real repository, per strategy, one server for all.

    python bench/cocoder_local_model.py --task hl7@modules=hl7.datatypes,hl7.accessor --out /tmp/cocoder-lm

Every strategy's team runs at once against one llama.cpp server (``--slots`` requests decoded
together): on a small shared machine one server at a time is the budget, and the strategies
one after the other would take hours. So a strategy's wall-clock includes waiting for the
others' requests; the provider tokens are the server's own counts, the pass rate the
repository's real tests on what the model wrote, the makespan the cost model's (docs/cocoder.md,
"A real coder"). Prints a table per strategy: mean pass rate, share of runs passing every test,
provider tokens, wall-clock, makespan; writes ``OUT/results.json``. Beside it, what the skeleton
alone passes (a coder that writes nothing): with ``TASK@modules=...`` (only those modules blanked)
most tests pass on the given modules, so the model's share is the difference.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentbed.agents.local.server import ServerSettings, serving  # noqa: E402
from controllers.cocoder.strategies import STRATEGIES  # noqa: E402
from environments.cocoder.agents import langchain_coder  # noqa: E402
from environments.cocoder.sandboxed import TestCache  # noqa: E402
from environments.cocoder.tasks import assemble, load_task  # noqa: E402
from suites.cocoder.team import TeamConfig, run_team  # noqa: E402


def run_strategy(task: str, model: str, strategy: str, seed: int, out: Path, timeout: float,
                 repair_rounds: int) -> dict:
    """One team run, its agents built as ``agentbed run cocoder --model`` builds them (a longer
    per-call timeout: a request may wait behind the other strategies')."""
    config = TeamConfig(strategy=strategy, coder=f"model:{model}", repair_rounds=repair_rounds)
    factory = lambda worker: langchain_coder(model, seed, timeout=timeout)  # noqa: E731
    result = run_team(task, config, seed, out / f"{strategy}-s{seed}", agent_factory=factory)
    m = result.record.metrics
    row = {"strategy": strategy, "seed": seed, "status": result.record.status, "pass_rate": m["pass_rate"],
            "pass_rate_before_repair": m["pass_rate_before_repair"], "passed": m["passed"],
            "reference_tests": m["reference_tests"], "provider_tokens": m["provider_tokens"],
            "wall_seconds": round(m["wall_seconds"], 1), "makespan": round(m["makespan"], 1),
            "plan": m["plan"], "pieces": m["pieces"], "repairs": m["repairs"],
            "agents": [{k: a[k] for k in ("worker", "round", "status", "steps")} for a in result.manifest["agents"]]}
    (out / f"{strategy}-s{seed}.json").write_text(json.dumps(row, indent=1), encoding="utf-8")  # as it ends
    return row


def table(rows: list[dict]) -> str:
    lines = ["| strategy | runs | mean pass rate | runs passing every test | provider tokens (mean) | wall-clock (mean) "
             "| makespan (cost model) | statuses |", "|---|---|---|---|---|---|---|---|"]
    for strategy in dict.fromkeys(r["strategy"] for r in rows):
        rs = [r for r in rows if r["strategy"] == strategy]
        full = sum(r["pass_rate"] >= 1.0 for r in rs)
        counts = ", ".join(f"{r['passed']} of {r['reference_tests']}" for r in rs)
        lines.append(f"| {strategy} | {len(rs)} | {statistics.mean(r['pass_rate'] for r in rs):.3f} "
                     f"({counts} tests) "
                     f"| {full} of {len(rs)} | {statistics.mean(r['provider_tokens'] for r in rs):,.0f} "
                     f"| {statistics.mean(r['wall_seconds'] for r in rs):,.0f} s "
                     f"| {statistics.mean(r['makespan'] for r in rs):,.1f} s | {', '.join(r['status'] for r in rs)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--task", default="hl7@modules=hl7.datatypes,hl7.accessor")
    p.add_argument("--model", default="local:gemma-3-270m")
    p.add_argument("--strategy", action="append", choices=STRATEGIES, help="default: every strategy")
    p.add_argument("--seeds", type=int, default=1)
    p.add_argument("--repair-rounds", type=int, default=1)
    p.add_argument("--slots", type=int, default=8, help="requests the server decodes together")
    p.add_argument("--ctx", type=int, default=4096, help="context tokens per slot")
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds per model call")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    task = load_task(args.task)  # prepared once, before the threads
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        nothing = TestCache().run(assemble(task, {}, Path(tmp) / "tree"), task.tests).passed
    jobs = [(s, seed) for seed in range(args.seeds) for s in (args.strategy or STRATEGIES)]
    with serving([args.model], args.out, ServerSettings(ctx=args.ctx, slots=args.slots)):
        with ThreadPoolExecutor(len(jobs)) as pool:
            rows = list(pool.map(lambda job: run_strategy(args.task, args.model, job[0], job[1], args.out,
                                                          args.timeout, args.repair_rounds), jobs))
    (args.out / "results.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    print(f"{args.task}, {args.model}, {args.seeds} seed(s), all strategies at once on one server; the skeleton "
          f"alone passes {nothing} of {task.reference_tests} tests ({nothing / task.reference_tests:.3f})")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
