"""The communication-to-computation cost model of CoCoder (arXiv 2606.00953, sec. 2).

For a partition pi and a dependency u -> v (v needs u):

* transfer delay  delta_uv = [pi(u) != pi(v)] * (latency + c_uv / read_rate)
* task time       t_v = t0 + w_v / write_rate + ctx_v / read_rate_in
* dollar cost     p_in * sum(ctx_v) + p_out * sum(w_v) + p_in * message_tokens * messages
* failure         p_fail(v) = p0 + p_miss * missing_v + p_x * cross_v + p_len * min(1, ctx_v / L_max)

Every constant is a parameter: the ranking of strategies depends on them, so results are
reported as Pareto fronts over sweeps, never as one number.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any


@dataclass(frozen=True)
class CostModel:
    latency: float = 20.0  # lambda: seconds per cross-agent message (about one model turn)
    read_rate: float = 2000.0  # beta: tokens per second an agent reads a transferred API
    t0: float = 5.0  # fixed seconds per turn
    write_rate: float = 50.0  # rho_out: output tokens per second
    context_rate: float = 5000.0  # rho_in: context tokens per second (prefill)
    price_in: float = 0.25e-6  # dollars per input token (gpt-5-mini-like)
    price_out: float = 2.0e-6  # dollars per output token
    message_tokens: int = 200  # overhead of one cross-agent message
    prompt_tokens: int = 400  # system prompt and task statement of every turn
    test_seconds: float = 30.0  # the leader's test run before a repair round

    def task_time(self, out_tokens: float, context_tokens: float) -> float:
        return self.t0 + out_tokens / self.write_rate + context_tokens / self.context_rate

    def transfer_delay(self, api_tokens: float) -> float:
        return self.latency + api_tokens / self.read_rate

    def dollars(self, context_tokens: float, out_tokens: float, messages: int) -> float:
        return (self.price_in * (context_tokens + self.message_tokens * messages)
                + self.price_out * out_tokens)

    def with_(self, **changes: Any) -> CostModel:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


@dataclass(frozen=True)
class FailureModel:
    """The simulated coder's per-file failure probability (spec: prototype on cookiecutter)."""

    p0: float = 0.01
    p_miss: float = 0.25  # scaled by the fraction of dependencies missing from the context
    p_cross: float = 0.03  # per cross-group dependency (lossy context transfer)
    p_len: float = 0.15  # scaled by min(1, ctx / max_context)
    max_context: float = 60_000.0

    def p_fail(self, missing_fraction: float, cross_deps: int, context_tokens: float) -> float:
        p = (self.p0 + self.p_miss * missing_fraction + self.p_cross * cross_deps
             + self.p_len * min(1.0, context_tokens / self.max_context))
        return min(1.0, max(0.0, p))

    def with_(self, **changes: Any) -> FailureModel:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, float]:
        return asdict(self)
