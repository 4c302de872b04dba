"""Cost: tokens from the provider's usage, priced by a table (``agentbed/prices.yaml``, which a user
file can override), per episode, per agent and per run; and the run budgets that stop handing
out episodes (``--max-cost``, ``--max-tokens``).

A model that no entry matches has an *unknown price*: its cost is ``None`` and is shown as
"unknown price", never as 0. Tokens answered from the model-call cache are counted in an
episode's cost (what the episode costs live) but not in what a run spent (nothing was paid).
"""

from __future__ import annotations

import fnmatch
import multiprocessing
from collections import defaultdict
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from agentbed.errors import BudgetExhausted, UsageError
from agentbed.summary import table
from agentbed.validate import finite, parse_yaml, read_text

UNKNOWN = "unknown price"
MAX_PRICE = 1e6  # USD per million tokens: a thousand times any provider's price, and no sum overflows


@dataclass(frozen=True)
class Price:
    input: float  # USD per million tokens
    output: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input + output_tokens * self.output) / 1e6


@dataclass(frozen=True)
class PriceTable:
    prices: dict[str, Price]
    source: str
    date: str

    def lookup(self, model: str | None) -> Price | None:
        """The exact entry, else the longest pattern that matches, else None (unknown price)."""
        if not model:
            return None
        if model in self.prices:
            return self.prices[model]
        matches = [k for k in self.prices if "*" in k and fnmatch.fnmatchcase(model, k)]
        return self.prices[max(matches, key=len)] if matches else None


def _read_table(text: str, where: str) -> tuple[dict[str, Price], dict[str, Any]]:
    doc = parse_yaml(text, where)
    if not isinstance(doc, dict) or not isinstance(doc.get("models"), dict):
        raise UsageError(f"{where}: needs a 'models' mapping of provider:model -> {{input, output}}")
    prices = {}
    for model, entry in doc["models"].items():
        if (not isinstance(entry, dict) or not all(finite(entry.get(k)) for k in ("input", "output"))
                or entry["input"] < 0 or entry["output"] < 0 or max(entry["input"], entry["output"]) > MAX_PRICE):
            raise UsageError(f"{where}: models.{model}: needs numbers input and output (USD per 1M tokens, "
                         f"finite, 0 to {MAX_PRICE:g})")
        prices[str(model)] = Price(float(entry["input"]), float(entry["output"]))
    return prices, doc


def load_prices(override: str | Path | None = None) -> PriceTable:
    """The shipped table, with the entries of ``override`` (a YAML file of the same layout) on top."""
    shipped = files("agentbed").joinpath("prices.yaml").read_text(encoding="utf-8")
    prices, doc = _read_table(shipped, "agentbed/prices.yaml")
    source, date = str(doc.get("source", "")).strip(), str(doc.get("date", ""))
    if override is not None:
        path = Path(override)
        try:  # bounded, a regular file, strict UTF-8: as every other reader
            text = read_text(path, what="price table")
        except UsageError as exc:
            raise UsageError(f"--prices {exc}") from None
        mine, mine_doc = _read_table(text, f"--prices {path}")
        prices.update(mine)
        source = f"{path} ({mine_doc.get('source', 'user table')}), over the shipped table of {date}"
        date = str(mine_doc.get("date", date))
    return PriceTable(prices, source, date)


def episode_cost(usage: dict[str, Any], prices: PriceTable, *, paid_only: bool = False) -> float | None:
    """USD for one episode's model usage (``EpisodeRecord.usage``); None when the price is unknown."""
    price = prices.lookup(usage.get("model"))
    if price is None:
        return None
    tokens_in, tokens_out = int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))
    if paid_only:
        tokens_in -= int(usage.get("cached_input_tokens", 0))
        tokens_out -= int(usage.get("cached_output_tokens", 0))
    return price.cost(tokens_in, tokens_out)


def fmt_usd(value: float | None) -> str:
    return UNKNOWN if value is None else f"${value:.4f}"


def cost_rows(records: list[dict[str, Any]], prices: PriceTable) -> list[dict[str, Any]]:
    """Per agent: episodes, calls, cached calls, tokens, cost and cost per episode (None: unknown)."""
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        if r.get("usage"):
            grouped[r["agent"]].append(r)
    rows = []
    for agent, recs in sorted(grouped.items()):
        costs = [episode_cost(r["usage"], prices) for r in recs]
        known = None if any(c is None for c in costs) else sum(c for c in costs if c is not None)
        usage = {k: sum(int(r["usage"].get(k, 0)) for r in recs)
                 for k in ("calls", "cached_calls", "input_tokens", "output_tokens")}
        rows.append({"agent": agent, "model": recs[0]["usage"].get("model"), "episodes": len(recs), **usage,
                     "cost_usd": known, "cost_per_episode_usd": None if known is None else known / len(recs)})
    return rows


def cost_summary(records: list[dict[str, Any]], prices: PriceTable) -> dict[str, Any] | None:
    """The run's cost block (``summary.json`` ``cost``, ``--json``), or None without model episodes."""
    rows = cost_rows(records, prices)
    if not rows:
        return None
    total = None if any(r["cost_usd"] is None for r in rows) else sum(r["cost_usd"] for r in rows)
    return {"total_usd": total, "agents": rows, "prices": {"source": prices.source, "date": prices.date},
            "unknown_price": sorted({str(r["model"]) for r in rows if r["cost_usd"] is None})}


def cost_table(summary: dict[str, Any]) -> dict[str, Any]:
    rows = [[r["agent"], r["episodes"], r["calls"], r["cached_calls"], r["input_tokens"], r["output_tokens"],
             fmt_usd(r["cost_usd"]), fmt_usd(r["cost_per_episode_usd"])] for r in summary["agents"]]
    note = (f"Tokens as the provider reported them (cache hits included: what the episodes cost live). "
            f"Prices: {summary['prices']['source']} ({summary['prices']['date']}). Run total: "
            f"{fmt_usd(summary['total_usd'])}.")
    return table("Cost per agent", ["agent", "episodes", "calls", "cached calls", "input tokens", "output tokens",
                                    "cost", "cost per episode"], rows, note=note)


def cost_metrics(records: list[dict[str, Any]], prices: PriceTable) -> list[dict[str, Any]]:
    """``cost_usd`` per (suite, agent), one value per ``task/seed``, for results.json and the gate.
    Episodes of a model with an unknown price give no value (so the gate reports the metric missing)."""
    grouped: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for r in records:
        cost = episode_cost(r["usage"], prices) if r.get("usage") else None
        if cost is not None:
            opts = ",".join(f"{k}={v}" for k, v in sorted((r.get("options") or {}).items()))
            agent = r["agent"] + (f"[{opts}]" if opts else "")
            grouped[(r["suite"], agent)][f"{r['task']}/{r['seed']}"] = cost
    metrics = []
    for (suite, agent), values in sorted(grouped.items()):
        mean = sum(values.values()) / len(values)
        metrics.append({"suite": suite, "agent": agent, "metric": "cost_usd", "higher_is_better": False,
                        "tolerance": round(0.1 * mean, 8), "values": dict(sorted(values.items()))})
    return metrics


class SpendCap:
    """``--max-cost`` / ``--max-tokens`` kept per model call, across every thread of every worker
    process (shared memory made before the workers fork, as the connection limiter's; on Ray, one
    kept by the run's actor, :class:`agentbed.ray_models.RemoteSpend`).

    Before each call :meth:`before_call` refuses it (:class:`BudgetExhausted`) once what the run
    has paid plus the dearest call so far could cross a cap; after it :meth:`paid` adds what it
    cost. Calls already in flight when the cap is reached still finish, so the overshoot is at most
    one call's cost per connection in flight (``--max-connections`` per model)."""

    def __init__(self, prices: PriceTable, *, max_cost: float | None, max_tokens: int | None,
                 context: Any = None) -> None:
        ctx = context or multiprocessing.get_context("fork")
        self.prices, self.max_cost, self.max_tokens = prices, max_cost, max_tokens
        self._lock = ctx.Lock()
        self._state = ctx.RawArray("d", [0.0, 0.0, 0.0, 0.0])  # spent USD, spent tokens, dearest call USD, tokens

    @property
    def spent_usd(self) -> float:
        return self._state[0]

    def reason(self) -> str | None:
        """``max_cost`` or ``max_tokens`` once the next call could cross it, else None."""
        spent_usd, spent_tokens, call_usd, call_tokens = self._state[:]
        if _could_cross(self.max_cost, spent_usd, call_usd):
            return "max_cost"
        if _could_cross(self.max_tokens, spent_tokens, call_tokens):
            return "max_tokens"
        return None

    def before_call(self) -> None:
        with self._lock:
            reason = self.reason()
        if reason is not None:
            spent_usd, spent_tokens, call_usd, call_tokens = self._state[:]
            raise BudgetExhausted(f"--{reason.replace('_', '-')} reached: the run has paid {fmt_usd(spent_usd)} "
                                  f"({int(spent_tokens)} tokens) and its next call could cost {fmt_usd(call_usd)} "
                                  f"({int(call_tokens)} tokens) more; the call was not made")

    def ledger(self) -> list[float]:
        """What the run has paid and its dearest call so far (USD, tokens, call USD, call tokens)."""
        with self._lock:
            return list(self._state[:])

    def load(self, ledger: list[float]) -> None:
        """Take over a ledger kept elsewhere (a Ray run's, in its actor: :mod:`agentbed.ray_models`)."""
        with self._lock:
            self._state[:] = [float(v) for v in ledger]

    def paid(self, model: str | None, input_tokens: int, output_tokens: int) -> None:
        price = self.prices.lookup(model)
        cost = price.cost(input_tokens, output_tokens) if price is not None else 0.0
        with self._lock:
            s = self._state
            s[0] += cost
            s[1] += input_tokens + output_tokens
            s[2] = max(s[2], cost)
            s[3] = max(s[3], float(input_tokens + output_tokens))


def _could_cross(limit: float | None, spent: float, dearest: float) -> bool:
    """Whether one more call could cross ``limit``: nothing paid yet crosses only a limit of 0."""
    if limit is None:
        return False
    return spent + dearest >= limit if spent > 0 else limit <= 0


class RunBudget:
    """What this invocation has spent on providers, and whether it may hand out another episode;
    with a limit, ``cap`` keeps it per call (:class:`SpendCap`, given to the run's chat agents)."""

    def __init__(self, prices: PriceTable, *, max_cost: float | None = None, max_tokens: int | None = None) -> None:
        if max_cost is not None and max_cost < 0:
            raise UsageError(f"--max-cost must be >= 0, not {max_cost}")
        if max_tokens is not None and max_tokens < 0:
            raise UsageError(f"--max-tokens must be >= 0, not {max_tokens}")
        self.prices, self.max_cost, self.max_tokens = prices, max_cost, max_tokens
        self.spent_usd, self.spent_tokens = 0.0, 0
        self.cap = SpendCap(prices, max_cost=max_cost, max_tokens=max_tokens) \
            if max_cost is not None or max_tokens is not None else None

    def check_models(self, models: set[str]) -> None:
        """A cost limit cannot be kept for a model of unknown price: say so before anything runs."""
        if self.max_cost is None:
            return
        for model in sorted(models):
            if self.prices.lookup(model) is None:
                raise UsageError(f"--max-cost: {model!r} has an unknown price; add it to a table given with"
                                 " --prices FILE (models: {MODEL: {input: USD, output: USD}} per 1M tokens)")

    def add(self, record: Any) -> None:
        usage = record.usage if hasattr(record, "usage") else record.get("usage")
        if not usage:
            return
        paid_in = int(usage.get("input_tokens", 0)) - int(usage.get("cached_input_tokens", 0))
        paid_out = int(usage.get("output_tokens", 0)) - int(usage.get("cached_output_tokens", 0))
        self.spent_tokens += paid_in + paid_out
        self.spent_usd += episode_cost(usage, self.prices, paid_only=True) or 0.0

    def reason(self) -> str | None:
        """``max_cost`` or ``max_tokens`` once reached (or, per call, once the next could cross it), else None."""
        if self.cap is not None and self.cap.reason() is not None:
            return self.cap.reason()
        if self.max_cost is not None and self.spent_usd >= self.max_cost:
            return "max_cost"
        if self.max_tokens is not None and self.spent_tokens >= self.max_tokens:
            return "max_tokens"
        return None
