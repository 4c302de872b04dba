"""A hash-chained audit log with a sealing deadline (the published cumulative-hash-chain pattern).

Modelled on CloudTrail digest files: each digest carries the hash of the previous one, so every
append must name the current head (SHA-256 over the previous head and the new record) and the
chain is sealed with the head after the last record. An append naming an older head is a stale
precondition, as a conditional write would answer (DynamoDB ConditionalCheckFailedException); a
chain not sealed before its deadline is closed (a validity failure).
Task params: ``ttl`` (seconds from open to seal), ``records`` (appends, default 5).
"""

from __future__ import annotations

import hashlib
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

CONFLICT = {"__type": "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException",
            "message": "The conditional request failed"}


def chain_hash(previous: str, record: str) -> str:
    return hashlib.sha256((previous + record).encode()).hexdigest()


@register
class HashChain(Family["ContractEnv"]):
    name = "hash-chain"
    title = "Hash-chained audit log: every append names the current head (CloudTrail digest chaining)"
    catalogue = ()
    labels = {"EXPIRED_BEFORE_USE": None, "STALE_PRECONDITION": None}
    final_tool = "seal_chain"
    tools = (
        tool("open_chain", "Open an audit chain: its id, the genesis head and the sealing deadline.", cost=1.0),
        tool("append_record", "Append the next record; prev_hash must be the current head.", cost=1.0,
             chain_id={"type": "string"}, prev_hash={"type": "string"}),
        tool("seal_chain", "Seal the chain with its final head.", cost=1.0,
             chain_id={"type": "string"}, head={"type": "string"}),
    )

    def setup(self, env: ContractEnv, rng: Any) -> dict[str, Any]:
        return {"chains": {}}

    def instruction(self, p: Any) -> str:
        return (f"open_chain, then append_record {p.get('records', 5)} times, each with prev_hash = the head the "
                f"previous call returned, then seal_chain with the final head. The chain must be sealed within "
                f"{p['ttl']} s of opening.")

    def plan(self, p: Any) -> list[Step]:
        append = Step("append_record", {"chain_id": Ref("chain_id"), "prev_hash": Ref("head")}, produces=("head",))
        return ([Step("open_chain", produces=("chain_id", "head"), ttl="ttl")] + [append] * p.get("records", 5)
                + [Step("seal_chain", {"chain_id": Ref("chain_id"), "head": Ref("head")})])

    def tool_open_chain(self, env: ContractEnv) -> Any:
        chain_id = env.issue("chain_id", token(env.np_random, 18, "chain-"))
        genesis = env.issue("head", hashlib.sha256(chain_id.encode()).hexdigest())
        env.fam["chains"][chain_id] = {"heads": [genesis], "deadline": env.clock.now() + env.p["ttl"]}
        return env.ok({"chain_id": chain_id, "head": genesis, "seal_within_s": env.p["ttl"]})

    def _check(self, env: ContractEnv, chain_id: str, head: str, arg: str) -> tuple[Any, Any]:
        """(chain, None) when ``head`` is the chain's current head in time, else (None, verdict)."""
        chain = env.fam["chains"].get(chain_id)
        if chain is None:
            return None, reject_integrity(404, {"error": "chain_not_found", "message": "No such chain."})
        if env.clock.now() > chain["deadline"]:
            return None, reject_validity("EXPIRED_BEFORE_USE", 410, {
                "error": "chain_closed", "message": "The chain was not sealed before its deadline."})
        if head != chain["heads"][-1]:
            if head in chain["heads"]:
                return None, reject_validity("STALE_PRECONDITION", 400, CONFLICT)
            return None, reject_integrity(400, {"error": "hash_mismatch", "message": f"{arg} is not a head of "
                                                "this chain."})
        return chain, None

    def tool_append_record(self, env: ContractEnv, chain_id: str, prev_hash: str) -> Any:
        chain, verdict = self._check(env, chain_id, prev_hash, "prev_hash")
        if chain is not None:
            record = f"{len(chain['heads'])}:{token(env.np_random, 12)}"
            head = env.issue("head", chain_hash(prev_hash, record))
            chain["heads"].append(head)
            verdict = accept({"record": record, "head": head, "length": len(chain["heads"]) - 1})
        return env.present({"chain_id": "chain_id", "head": "prev_hash"}, verdict)

    def tool_seal_chain(self, env: ContractEnv, chain_id: str, head: str) -> Any:
        chain, verdict = self._check(env, chain_id, head, "head")
        if chain is not None:
            records = len(chain["heads"]) - 1
            if records < env.p.get("records", 5):
                verdict = reject_integrity(409, {"error": "chain_incomplete", "message":
                                                 f"{records} of {env.p.get('records', 5)} records appended."})
            else:
                verdict = accept({"sealed": True, "head": head, "length": records})
        return env.present({"chain_id": "chain_id", "head": "head"}, verdict, final=True)
