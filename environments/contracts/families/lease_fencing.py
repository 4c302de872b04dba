"""Leases with fencing tokens (catalogue rows 43-44).

An etcd-style lease (TTL; "etcdserver: requested lease not found" once it lapsed) guards a lock
whose holder gets a monotonically increasing fencing token; the storage layer accepts a write
only with the current token, as a DynamoDB conditional write does (ConditionalCheckFailedException
"The conditional request failed"). When the lease lapses during a long job, another worker takes
the lock and the old token is stale.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentbed.tools import tool
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

CONDITIONAL = {"__type": "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException",
               "message": "The conditional request failed"}


@register
class LeaseFencing(Family["ContractEnv"]):
    name = "lease-fencing-token"
    title = "Lock leases with fencing tokens (etcd lease, DynamoDB conditional write)"
    catalogue = (43, 44)
    labels = {"EXPIRED_BEFORE_USE": None}
    final_tool = "write_record"
    tools = (tool("acquire_lock", "Grant a lease and take the lock: lease_id and fencing_token.", cost=1.0),
             tool("write_record", "Conditional write guarded by the lease and fencing token.", cost=1.0,
                  lease_id={"type": "string"}, fencing_token={"type": "string"}))

    def setup(self, env: ContractEnv, rng: Any) -> dict[str, Any]:
        return {"token": int(rng.integers(30, 90)), "lease": None, "expires": 0.0}

    def instruction(self, p: Any) -> str:
        return (f"acquire_lock, then write_record(lease_id, fencing_token). The lease TTL is {p['ttl']} s; another "
                "worker takes the lock when it lapses.")

    def plan(self, p: Any) -> list[Step]:
        return [Step("acquire_lock", produces=("lease_id", "fencing_token"), ttl="ttl"),
                Step("write_record", {"lease_id": Ref("lease_id"), "fencing_token": Ref("fencing_token")})]

    def _lapse(self, env: ContractEnv) -> None:
        if env.fam["lease"] is not None and env.clock.now() >= env.fam["expires"]:
            env.fam["lease"] = None
            env.fam["token"] += 1  # another worker took the lock in between

    def tool_acquire_lock(self, env: ContractEnv) -> Any:
        self._lapse(env)
        env.fam["token"] += 1
        lease = f"{int(env.np_random.integers(1 << 62)):x}"
        env.fam["lease"], env.fam["expires"] = lease, env.clock.now() + env.p["ttl"]
        return env.ok({"lease_id": env.issue("lease_id", lease), "TTL": env.p["ttl"],
                       "fencing_token": env.issue("fencing_token", str(env.fam["token"]))})

    def tool_write_record(self, env: ContractEnv, lease_id: str, fencing_token: str) -> Any:
        self._lapse(env)
        issued = {v["value"] for v in env.state["issued"].get("lease_id", [])}
        old_tokens = {v["value"] for v in env.state["issued"].get("fencing_token", [])}
        if lease_id != env.fam["lease"]:
            if lease_id in issued:
                verdict = reject_validity("EXPIRED_BEFORE_USE", 404, {"error": "etcdserver: requested lease not found"})
            else:
                verdict = reject_integrity(404, {"error": "etcdserver: requested lease not found"})
        elif fencing_token != str(env.fam["token"]):
            label = "STALE_PRECONDITION" if fencing_token in old_tokens else None
            verdict = reject_validity(label, 400, CONDITIONAL) if label else reject_integrity(400, CONDITIONAL)
        else:
            verdict = accept({"written": True, "fencing_token": env.fam["token"]})
        return env.present({"lease_id": "lease_id", "fencing_token": "fencing_token"}, verdict, final=True)
