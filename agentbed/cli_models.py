"""``agentbed run`` options for model-bound runs: connections, the model-call cache, cost and budgets."""

from __future__ import annotations

import argparse
import contextlib
import math
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from agentbed.agents.cache import DEFAULT_EXPIRY_SECONDS, ModelCallCache, default_cache_dir, parse_duration
from agentbed.agents.connections import DEFAULT_MAX_CONNECTIONS, LOCAL_MAX_CONNECTIONS, append_event
from agentbed.cost import PriceTable, RunBudget, cost_summary, cost_table, fmt_usd, load_prices
from agentbed.errors import UsageError
from agentbed.inflight import EVENTS, ModelRuntime, is_model_bound
from agentbed.runner import EpisodeSpec

MAX_TIMEOUT = 86_400.0  # a day: beyond it a hung call is never noticed


def add_model_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("model-bound runs (--model)")
    g.add_argument("--max-connections", type=int, metavar="N",
                   help=f"calls in flight per model, across all workers (default {DEFAULT_MAX_CONNECTIONS}, "
                        f"{LOCAL_MAX_CONNECTIONS} for a local: model); lowered for a while on a 429, Retry-After or"
                        " timeout")
    g.add_argument("--cache", action=argparse.BooleanOptionalAction, default=None,
                   help="reuse the provider's reply to a request seen before (default: on; --no-cache is recorded "
                        "in run.json and kept by --resume)")
    g.add_argument("--cache-dir", help=f"model-call cache directory (default {default_cache_dir()})")
    g.add_argument("--cache-expiry", default=f"{int(DEFAULT_EXPIRY_SECONDS // 86400)}d", metavar="DURATION",
                   help="entries older than this are misses: 30m, 12h, 7d, never (default 7d)")
    g.add_argument("--temperature", type=float, metavar="T",
                   help="sampling temperature for every --model (recorded in run.json and the cache key)")
    g.add_argument("--max-tokens-per-call", type=int, metavar="N", help="completion-token cap of each model call")
    g.add_argument("-M", "--model-setting", action="append", metavar="KEY=VALUE",
                   help="any other argument of the provider's LangChain chat model, e.g. -M top_p=0.9 (repeatable;"
                        " a key the model does not declare is an error)")
    g.add_argument("--timeout", type=float, metavar="SECONDS",
                   help="each model call's timeout (default 60, 300 for a local: model); a call that takes longer"
                        " is retried like a 5xx")
    g.add_argument("--prices", metavar="FILE", help="a YAML price table over the shipped one (agentbed/prices.yaml)")
    g.add_argument("--max-cost", type=float, metavar="USD",
                   help="hand out no more episodes once this invocation has paid this much (--resume goes on)")
    g.add_argument("--max-tokens", type=int, metavar="N",
                   help="hand out no more episodes once this invocation has paid for N tokens (--resume goes on)")


def check_model_options(args: argparse.Namespace, specs: Sequence[EpisodeSpec]) -> tuple[PriceTable, RunBudget]:
    """Every model option checked before anything is recorded; the price table and the run's budget."""
    if args.max_connections is not None and args.max_connections < 1:
        raise UsageError(f"--max-connections must be at least 1, not {args.max_connections}")
    if args.timeout is not None and not (math.isfinite(args.timeout) and 0 < args.timeout <= MAX_TIMEOUT):
        raise UsageError(f"--timeout must be a number of seconds above 0 and at most {MAX_TIMEOUT:g}, not {args.timeout}")
    parse_duration(args.cache_expiry)
    prices = load_prices(args.prices)
    budget = RunBudget(prices, max_cost=args.max_cost, max_tokens=args.max_tokens)
    budget.check_models({s.agent.removeprefix("model:") for s in specs if is_model_bound(s.agent)})
    return prices, budget


@contextlib.contextmanager
def model_timeout(args: argparse.Namespace, meta: dict[str, Any]) -> Iterator[None]:
    """``--timeout`` (or, on --resume, the one run.json recorded, which ``meta`` then holds) for
    every model built here and in workers started from here, for the duration of the block
    (:data:`agentbed.agents.generation.TIMEOUT_VAR`)."""
    from agentbed.agents.generation import TIMEOUT_VAR

    timeout = args.timeout if args.timeout is not None else meta.get("timeout")
    previous = os.environ.get(TIMEOUT_VAR)
    if timeout is not None:
        os.environ[TIMEOUT_VAR] = repr(float(timeout))
        meta["timeout"] = float(timeout)
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(TIMEOUT_VAR, None)
        else:
            os.environ[TIMEOUT_VAR] = previous


def record_stop(run_dir: Path, budget: RunBudget, left: int, cut: int = 0) -> dict[str, Any] | None:
    """When the budget stopped the run (``left`` episodes not run, ``cut`` cut short by a refused
    call): the event (also appended to events.jsonl), else None."""
    reason = budget.reason()
    crossed = (budget.max_cost is not None and budget.spent_usd >= budget.max_cost) or \
        (budget.max_tokens is not None and budget.spent_tokens >= budget.max_tokens)
    if reason is None or (left == 0 and not cut and not crossed):  # a run that finished within its cap
        return None
    event = {"event": "budget_stop", "reason": reason, "spent_usd": round(budget.spent_usd, 6),
             "spent_tokens": budget.spent_tokens, "max_cost": budget.max_cost, "max_tokens": budget.max_tokens,
             "episodes_left": left, "episodes_cut": cut}
    append_event(run_dir / EVENTS, event)
    return event


def add_cost(summary: dict[str, Any], records: list[dict[str, Any]], prices: PriceTable) -> dict[str, Any] | None:
    """Put the run's cost into its summary (a ``cost`` block and a table); returns the block."""
    cost = cost_summary(records, prices)
    if cost is not None:
        summary["cost"] = cost
        summary.setdefault("tables", []).append(cost_table(cost))
    return cost


def cost_line(cost: dict[str, Any] | None, stop: dict[str, Any] | None) -> str:
    line = ""
    if cost is not None:
        line = f"cost: {fmt_usd(cost['total_usd'])}"
        if cost["unknown_price"]:
            line += f" (no price for {', '.join(cost['unknown_price'])}: add it with --prices FILE)"
    if stop is not None:
        cut = stop.get("episodes_cut") or 0
        line += (f"\nstopped: {stop['reason']} reached ({fmt_usd(stop['spent_usd'])}, {stop['spent_tokens']} tokens"
                 f" paid); {stop['episodes_left']} episodes not run: --resume --out DIR runs them"
                 + (f"; {cut} cut short at a refused call (errored, kind budget): --resume runs them too"
                    if cut else ""))
    return line.strip()


def model_runtime(args: argparse.Namespace, specs: Sequence[EpisodeSpec], run_dir: Path,
                  budget: RunBudget | None = None) -> ModelRuntime | None:
    """The connection caps and cache for the model-bound episodes in ``specs`` (None if there are none)."""
    agents = {s.agent for s in specs if is_model_bound(s.agent)}
    expiry = parse_duration(args.cache_expiry)
    if not agents:
        return None
    # on Ray, one actor on this node holds the same cap for every node and serves this cache (agentbed.ray_models)
    cache = ModelCallCache(args.cache_dir, expiry=expiry) if args.cache is not False else None
    runtime = ModelRuntime.for_run(agents, run_dir, max_connections=args.max_connections, cache=cache)
    runtime.spend = budget.cap if budget is not None else None
    start: dict[str, Any] = {"event": "start", "models": sorted(runtime.limiters), "episodes": len(specs),
                             "max_connections": {m: lim.ceiling for m, lim in runtime.limiters.items()},
                             "executor": args.executor,
                             "jobs": args.jobs,
                             "cache": str(cache.directory) if cache is not None else None}
    append_event(run_dir / EVENTS, start)
    return runtime
