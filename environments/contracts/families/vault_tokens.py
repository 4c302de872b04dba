"""A HashiCorp Vault token tree: children die with their parent (the published
cascading-token-revocation pattern).

Vault tokens form a tree: a token created with another token as parent is revoked when the
parent is revoked or expires, together with all of its own children. The root (a login token
with a short TTL) derives two sibling child tokens with different policies;
once the root expires both children are gone, whatever their own TTL.
Vault answers a dead token with 403 {"errors": ["permission denied"]}.
Task params: ``root_ttl`` (root token TTL), ``child_ttl`` (children's own TTL, default 3600).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentbed.tools import tool
from environments.contracts.families.common import token
from environments.contracts.family import (
    Family,
    Ref,
    Step,
    Verdict,
    accept,
    register,
    reject_integrity,
    reject_validity,
)

if TYPE_CHECKING:
    from environments.contracts.env import ContractEnv

DENIED = {"errors": ["permission denied"]}
POLICIES = ("read-reports", "write-reports")


@register
class VaultTokenTree(Family["ContractEnv"]):
    name = "vault-token-tree"
    title = "Vault token hierarchy: child tokens revoked with their parent (cascading revocation)"
    catalogue = ()
    labels = {"EXPIRED_BEFORE_USE": None, "SHORTCUT_TAKEN": None}
    final_tool = "write_secret"
    alternatives = {
        "order:create_child(policy='write-reports') before create_child(policy='read-reports')":
            "the instruction asks for both children, not for an order between them",
        "order:read_secret before create_child(policy='write-reports')":
            "reading before the write child exists still reads, then writes, with live tokens",
    }
    tools = (
        tool("login", "auth/approle/login: a root token for this task with a short TTL.", cost=1.0),
        tool("create_child", "auth/token/create with X-Vault-Token = parent: a child token with one policy.",
             cost=1.0, parent_token={"type": "string"}, policy={"type": "string", "enum": list(POLICIES)}),
        tool("read_secret", "GET secret/data/reports with a read-reports token.", cost=1.0, token={"type": "string"}),
        tool("write_secret", "POST secret/data/reports with a write-reports token.", cost=1.0, token={"type": "string"}),
    )

    def setup(self, env: ContractEnv, rng: Any) -> dict[str, Any]:
        return {"tokens": {}}

    def instruction(self, p: Any) -> str:
        return (f"login (the root token lives {p['root_ttl']} s), create_child a read-reports and a write-reports "
                "token from it, read_secret with the read token, then write_secret with the write token. Child "
                "tokens are revoked when their parent expires.")

    def plan(self, p: Any) -> list[Step]:
        child = {policy: Step("create_child", {"parent_token": Ref("root_token"), "policy": policy},
                              produces=(f"{policy.split('-')[0]}_token",), ttl="root_ttl", renew=0)
                 for policy in POLICIES}
        return [Step("login", produces=("root_token",), ttl="root_ttl"), child["read-reports"],
                child["write-reports"], Step("read_secret", {"token": Ref("read_token")}),
                Step("write_secret", {"token": Ref("write_token")})]

    def _new(self, env: ContractEnv, slot: str, parent: str | None, policy: str, ttl: float) -> str:
        value = env.issue(slot, token(env.np_random, 24, "hvs."))
        env.fam["tokens"][value] = {"parent": parent, "policy": policy, "expires": env.clock.now() + ttl}
        return value

    def _alive(self, env: ContractEnv, value: str) -> Verdict | None:
        """None if ``value`` and every ancestor are alive, else why not."""
        record = env.fam["tokens"].get(value)
        if record is None:
            return reject_integrity(403, DENIED)
        while record is not None:
            if env.clock.now() >= record["expires"]:
                return reject_validity("EXPIRED_BEFORE_USE", 403, DENIED)
            record = env.fam["tokens"].get(record["parent"]) if record["parent"] else None
        return None

    def tool_login(self, env: ContractEnv) -> Any:
        root = self._new(env, "root_token", None, "root", env.p["root_ttl"])
        return env.ok({"auth": {"client_token": root, "lease_duration": env.p["root_ttl"], "renewable": False},
                       "root_token": root})

    def tool_create_child(self, env: ContractEnv, parent_token: str, policy: str) -> Any:
        verdict = self._alive(env, parent_token)
        if verdict is None:
            slot = f"{policy.split('-')[0]}_token"
            child = self._new(env, slot, parent_token, policy, env.p.get("child_ttl", 3600))
            verdict = accept({"auth": {"client_token": child, "policies": [policy], "orphan": False}, slot: child})
        return env.present({"root_token": "parent_token"}, verdict)

    def _verdict(self, env: ContractEnv, value: str, policy: str) -> Verdict:
        verdict = self._alive(env, value)
        if verdict is None and env.fam["tokens"][value]["policy"] != policy:
            verdict = reject_integrity(403, DENIED)
        return verdict or accept({"data": {"policy": policy, "ok": True}})

    def tool_read_secret(self, env: ContractEnv, token: str) -> Any:
        verdict = self._verdict(env, token, "read-reports")
        if verdict.accepted and env.strict_label("read_token", "token") is None:
            env.fam["read"] = True
        return env.present({"read_token": "token"}, verdict)

    def tool_write_secret(self, env: ContractEnv, token: str) -> Any:
        return env.present({"write_token": "token"}, self._verdict(env, token, "write-reports"), final=True)

    def missing_steps(self, env: ContractEnv) -> list[str]:
        """The instruction's read is a step of the task: writing without it is SHORTCUT_TAKEN."""
        return [] if env.fam.get("read") else ["read_secret with a live read-reports token"]
