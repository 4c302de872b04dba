"""Stripe Idempotency-Key retries (catalogue row 22).

docs.stripe.com/api/idempotent_requests: the first request with a key is executed and its
result stored; a retry with the same key and parameters replays the stored result; the same key
with different parameters is a 400 idempotency_error. Keys are pruned after 24 h, after which a
retry executes again. Here the first attempt times out at the gateway (the charge went through),
so the agent must retry with the same key and parameters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentbed.tools import tool
from environments.contracts.families.common import hex_token, token
from environments.contracts.family import (
    Family,
    Ref,
    Step,
    accept,
    register,
    reject_integrity,
    reject_validity,
)

if TYPE_CHECKING:
    from environments.contracts.env import ContractEnv

PRUNE_AFTER = 86400
MISMATCH = ("Keys for idempotent requests can only be used with the same parameters they were first used with. "
            "Try using a key other than '{key}' if you meant to execute a different request.")


@register
class IdempotencyKey(Family["ContractEnv"]):
    name = "idempotency-key"
    title = "Stripe idempotency keys across a gateway timeout"
    catalogue = (22,)
    labels = {"PARAMETER_MISMATCH": None}
    final_tool = "create_payment_intent"
    tools = (
        tool("begin_checkout", "Open the checkout: the cart total and a fresh idempotency key.", cost=1.0),
        tool("create_payment_intent", "POST /v1/payment_intents with an Idempotency-Key header.", cost=2.0,
             idempotency_key={"type": "string"}, amount={"type": "integer"}, currency={"type": "string"}),
    )

    def setup(self, env: ContractEnv, rng: Any) -> dict[str, Any]:
        return {"keys": {}, "charges": [], "amount": int(rng.integers(1000, 99999))}

    def instruction(self, p: Any) -> str:
        return ("begin_checkout, then create_payment_intent(idempotency_key, amount, currency). The gateway may time "
                "out after executing the request: retry with the same key and parameters, never create a second "
                "charge.")

    def plan(self, p: Any) -> list[Step]:
        args = {"idempotency_key": Ref("idempotency_key"), "amount": Ref("amount"), "currency": Ref("currency")}
        return [Step("begin_checkout", produces=("idempotency_key", "amount", "currency")),
                Step("create_payment_intent", args, poll="api_connection_error")]

    def tool_begin_checkout(self, env: ContractEnv) -> Any:
        key = env.issue("idempotency_key", token(env.np_random, 24, "idem_"))
        return env.ok({"idempotency_key": key, "amount": env.fam["amount"], "currency": "eur"})

    def tool_create_payment_intent(self, env: ContractEnv, idempotency_key: str, amount: int, currency: str) -> Any:
        params, now = [amount, currency], env.clock.now()
        stored = env.fam["keys"].get(idempotency_key)
        if stored is not None and now - stored["at"] > PRUNE_AFTER:
            stored = None  # pruned: the retry executes again
        if stored is not None and stored["params"] != params:
            verdict = reject_validity("PARAMETER_MISMATCH", 400, {"error": {
                "type": "idempotency_error", "message": MISMATCH.format(key=idempotency_key)}})
            return env.present({"idempotency_key": "idempotency_key"}, verdict)
        if stored is not None:
            return env.present({"idempotency_key": "idempotency_key"},
                               accept({**stored["result"], "idempotent_replayed": True}), final=True)
        charge = {"id": "pi_" + hex_token(env.np_random, 12), "object": "payment_intent", "amount": amount,
                  "currency": currency, "status": "requires_confirmation"}
        env.fam["charges"].append(charge["id"])
        env.fam["keys"][idempotency_key] = {"params": params, "result": charge, "at": now}
        if len(env.fam["charges"]) == 1:
            verdict = accept({"error": "api_connection_error", "message": "Gateway timeout: the request may have "
                              "been executed. Retry with the same Idempotency-Key.", "retry_after": 2})
            return env.present({"idempotency_key": "idempotency_key"}, verdict)
        verdict = reject_integrity(409, {"error": {"type": "duplicate_charge", "message":
                                                    f"{len(env.fam['charges'])} payment intents were created"}})
        return env.present({"idempotency_key": "idempotency_key"}, verdict)
