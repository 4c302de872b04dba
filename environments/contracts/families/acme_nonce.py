"""ACME Replay-Nonce (catalogue row 41).

RFC 8555 6.5: every JWS request carries a fresh nonce from the server; each response returns a
new Replay-Nonce; a reused or unknown nonce is rejected with
urn:ietf:params:acme:error:badNonce "JWS has invalid anti-replay nonce". The resources are posted in
protocol order (RFC 8555 7.3-7.4): newOrder before the account exists is accountDoesNotExist,
finalize before the order is ready is orderNotReady (graded SHORTCUT_TAKEN).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentbed.tools import tool
from environments.contracts.families.common import token
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

BAD_NONCE: dict[str, Any] = {"type": "urn:ietf:params:acme:error:badNonce", "detail": "JWS has invalid anti-replay nonce {n}",
             "status": 400}
RESOURCES = ("newAccount", "newOrder", "finalize")
# RFC 8555 6.7 problem types for a request made before the step it depends on (7.3, 7.4)
OUT_OF_ORDER = {
    "newAccount": (403, {"type": "urn:ietf:params:acme:error:malformed", "detail": "Account already exists"}),
    "newOrder": (400, {"type": "urn:ietf:params:acme:error:accountDoesNotExist",
                       "detail": "No account exists with the provided key"}),
    "finalize": (403, {"type": "urn:ietf:params:acme:error:orderNotReady",
                       "detail": "Order is not ready for finalization"}),
}


@register
class AcmeNonce(Family["ContractEnv"]):
    name = "acme-replay-nonce"
    title = "ACME Replay-Nonce, single use (RFC 8555)"
    catalogue = (41,)
    labels = {"REPLAYED": None, "SHORTCUT_TAKEN": None}
    final_tool = "acme_post"
    tools = (tool("new_nonce", "HEAD /acme/new-nonce: a Replay-Nonce.", cost=1.0),
             tool("acme_post", "POST a JWS to an ACME resource (newAccount, newOrder, finalize) with a nonce.",
                  cost=1.0, resource={"type": "string", "enum": list(RESOURCES)}, nonce={"type": "string"}))

    def setup(self, env: ContractEnv, rng: Any) -> dict[str, Any]:
        return {"live": [], "spent": [], "done": []}

    def instruction(self, p: Any) -> str:
        return ("Get a nonce with new_nonce, then acme_post newAccount, newOrder and finalize in that order. Each nonce "
                "is single use; every response carries the next Replay-Nonce.")

    def plan(self, p: Any) -> list[Step]:
        return [Step("new_nonce", produces=("replay_nonce",))] + [
            Step("acme_post", {"resource": r, "nonce": Ref("replay_nonce")}, produces=("replay_nonce",))
            for r in RESOURCES]

    def _nonce(self, env: ContractEnv) -> str:
        nonce = env.issue("replay_nonce", token(env.np_random, 16))
        env.fam["live"].append(nonce)
        return nonce

    def tool_new_nonce(self, env: ContractEnv) -> Any:
        return env.ok({"replay_nonce": self._nonce(env)})

    def tool_acme_post(self, env: ContractEnv, resource: str, nonce: str) -> Any:
        if nonce in env.fam["live"]:
            env.fam["live"].remove(nonce)
            env.fam["spent"].append(nonce)
            expected = RESOURCES[len(env.fam["done"])] if len(env.fam["done"]) < len(RESOURCES) else None
            if resource != expected:  # RFC 8555 7.3-7.4: an order needs an account, finalize a ready order
                status, problem = OUT_OF_ORDER[resource]
                return env.present({"replay_nonce": "nonce"}, reject_validity(
                    "SHORTCUT_TAKEN", status, {**problem, "status": status, "replay_nonce": self._nonce(env)}))
            env.fam["done"].append(resource)
            final = list(env.fam["done"]) == list(RESOURCES)
            verdict = accept({"resource": resource, "status": "valid" if final else "pending",
                              "replay_nonce": self._nonce(env)})
            return env.present({"replay_nonce": "nonce"}, verdict, final=final)
        body = {**BAD_NONCE, "detail": BAD_NONCE["detail"].format(n=nonce[:40]), "replay_nonce": self._nonce(env)}
        verdict = reject_validity("REPLAYED", 400, body) if nonce in env.fam["spent"] else reject_integrity(400, body)
        return env.present({"replay_nonce": "nonce"}, verdict)
