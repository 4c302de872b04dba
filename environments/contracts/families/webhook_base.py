"""Shared shape of the webhook families: the provider delivers a raw body plus signature headers
to the agent, which must forward them byte-for-byte to the application's verifier.

A subclass names its header fields, signs a delivery (``sign``) and verifies one (``verify``)
with the provider's real algorithm. ``deliveries`` > 1 means several deliveries arrive one after
the other and each must be forwarded once; the receiver dedupes by delivery id.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from agentbed.tools import Tool, tool
from environments.contracts.families.common import hex_token
from environments.contracts.family import Family, Ref, Step, Verdict, accept, reject_validity

if TYPE_CHECKING:
    from environments.contracts.env import ContractEnv


class WebhookFamily(Family["ContractEnv"]):
    headers: ClassVar[tuple[str, ...]]  # argument / body field names besides "payload"
    receive_tool: ClassVar[str]
    forward_tool: ClassVar[str]

    @staticmethod
    def make_tools(provider: str, receive: str, forward: str, headers: tuple[str, ...]) -> tuple[Tool, ...]:
        fields = {h: {"type": "string"} for h in ("payload", *headers)}
        return (tool(receive, f"Take the next {provider} webhook delivery (raw body and headers).", cost=1.0),
                tool(forward, "Forward a delivery to the application's webhook endpoint, which verifies "
                     "its signature.", cost=1.0, required=None, **fields))

    def setup(self, env: ContractEnv, rng: Any) -> dict[str, Any]:
        return {"secret": "whsec_" + hex_token(rng, 24), "received": 0, "forwarded": [], "deliveries": {}}

    def payload(self, env: ContractEnv, n: int) -> str:
        raise NotImplementedError

    def sign(self, env: ContractEnv, payload: str) -> dict[str, str]:
        raise NotImplementedError

    def verify(self, env: ContractEnv, payload: str, headers: dict[str, str]) -> Verdict:
        raise NotImplementedError

    def delivery_id(self, headers: dict[str, str], payload: str) -> str:
        return payload

    def instruction(self, p: Any) -> str:
        n = p.get("deliveries", 1)
        return (f"Receive {n} webhook deliver{'y' if n == 1 else 'ies'} with {self.receive_tool} and forward each one "
                f"to {self.forward_tool} with the raw payload and headers exactly as received, as soon as you can.")

    def plan(self, p: Any) -> list[Step]:
        args = {h: Ref(h) for h in ("payload", *self.headers)}
        one = [Step(self.receive_tool, produces=("payload", *self.headers), ttl="ttl"), Step(self.forward_tool, args)]
        return one * p.get("deliveries", 1)

    def receive(self, env: ContractEnv) -> Any:
        env.fam["received"] += 1
        payload = self.payload(env, env.fam["received"])
        headers = self.sign(env, payload)
        body = {"payload": env.issue("payload", payload)}
        body.update({k: env.issue(k, v) for k, v in headers.items()})
        return env.ok(body)

    def forward(self, env: ContractEnv, payload: str, **headers: str) -> Any:
        verdict = self.verify(env, payload, headers)
        final = False
        if verdict.accepted:
            key = self.delivery_id(headers, payload)
            if key in env.fam["forwarded"]:
                verdict = reject_validity("REPLAYED", 409, {"error": "duplicate_delivery",
                                                            "message": "This delivery was already processed."})
            else:
                env.fam["forwarded"].append(key)
                final = len(env.fam["forwarded"]) >= env.p.get("deliveries", 1)
                verdict = accept({"received": True})
        slots = {h: h for h in ("payload", *self.headers)}
        return env.present(slots, verdict, final=final)

    def handle(self, env: ContractEnv, name: str, arguments: dict[str, Any]) -> Any:
        return self.receive(env) if name == self.receive_tool else self.forward(env, **arguments)
