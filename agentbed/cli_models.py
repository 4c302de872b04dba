"""``agentbed run`` options for model-bound runs: connections, the model-call cache, and cost budgets."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agentbed.agents.cache import DEFAULT_EXPIRY_SECONDS, ModelCallCache, default_cache_dir, parse_duration
from agentbed.agents.connections import DEFAULT_MAX_CONNECTIONS, append_event
from agentbed.errors import UsageError
from agentbed.inflight import EVENTS, ModelRuntime, is_model_bound
from agentbed.runner import EpisodeSpec


def add_model_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("model-bound runs (--model)")
    g.add_argument("--max-connections", type=int, default=DEFAULT_MAX_CONNECTIONS, metavar="N",
                   help=f"calls in flight per model, across all workers (default {DEFAULT_MAX_CONNECTIONS});"
                        " lowered for a while on a 429, Retry-After or timeout")
    g.add_argument("--cache", action=argparse.BooleanOptionalAction, default=True,
                   help="reuse the provider's reply to a request seen before (default: on)")
    g.add_argument("--cache-dir", help=f"model-call cache directory (default {default_cache_dir()})")
    g.add_argument("--cache-expiry", default=f"{int(DEFAULT_EXPIRY_SECONDS // 86400)}d", metavar="DURATION",
                   help="entries older than this are misses: 30m, 12h, 7d, never (default 7d)")


def model_runtime(args: argparse.Namespace, specs: list[EpisodeSpec], run_dir: Path) -> ModelRuntime | None:
    """The connection caps and cache for the model-bound episodes in ``specs`` (None if there are none)."""
    agents = {s.agent for s in specs if is_model_bound(s.agent)}
    if args.max_connections < 1:
        raise UsageError(f"--max-connections must be at least 1, not {args.max_connections}")
    expiry = parse_duration(args.cache_expiry)
    if not agents:
        return None
    cache = ModelCallCache(args.cache_dir, expiry=expiry) if args.cache else None
    runtime = ModelRuntime.for_run(agents, run_dir, max_connections=args.max_connections, cache=cache)
    start: dict[str, Any] = {"event": "start", "models": sorted(runtime.limiters), "episodes": len(specs),
                             "max_connections": args.max_connections, "jobs": args.jobs,
                             "cache": str(cache.directory) if cache is not None else None}
    append_event(run_dir / EVENTS, start)
    return runtime
