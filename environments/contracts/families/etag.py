"""ETag / If-Match preconditions (catalogue row 28).

RFC 9110 13.1.1: If-Match uses the strong comparison; a stale or altered entity-tag gives 412.
S3's body: PreconditionFailed "At least one of the pre-conditions you specified did not hold".
A background job (a teammate's edit) changes the document, so an ETag read before it is stale.
"""

from __future__ import annotations

import hashlib
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

FAILED = {"Error": {"Code": "PreconditionFailed",
                    "Message": "At least one of the pre-conditions you specified did not hold", "Condition": "If-Match"}}


def _etag(content: str) -> str:
    return '"' + hashlib.md5(content.encode()).hexdigest() + '"'


LINE = "reviewed"  # the line the instruction asks for


@register
class ETagIfMatch(Family["ContractEnv"]):
    name = "etag-if-match"
    title = "Conditional update with If-Match (RFC 9110, S3 PreconditionFailed)"
    catalogue = (28, 44)
    labels = {"STALE_PRECONDITION": "mutating_jobs"}
    final_tool = "put_document"
    tools = (tool("get_document", "GET the runbook document: content and ETag.", cost=1.0),
             tool("put_document", "Append a line to the runbook: PUT with If-Match: <ETag>.", cost=1.0,
                  if_match={"type": "string"}, line={"type": "string", "maxLength": 200}))

    def setup(self, env: ContractEnv, rng: Any) -> dict[str, Any]:
        return {"content": f"# Runbook\nrevision {int(rng.integers(100, 999))}\n", "history": []}

    def instruction(self, p: Any) -> str:
        return (f"get_document, then put_document(if_match=<the ETag, quotes included>, line='{LINE}')."
                + (" Other writers may change the document meanwhile." if p.get("mutating_jobs") else ""))

    def plan(self, p: Any) -> list[Step]:
        return [Step("get_document", produces=("ETag",), ttl="volatile"),
                Step("put_document", {"if_match": Ref("ETag"), "line": LINE})]

    def on_job(self, env: ContractEnv, job: str) -> None:
        if job in env.p.get("mutating_jobs", ()):
            env.fam["history"].append(_etag(env.fam["content"]))
            env.fam["content"] += f"edited by {job}\n"

    def tool_get_document(self, env: ContractEnv) -> Any:
        return env.ok({"ETag": env.issue("ETag", _etag(env.fam["content"])), "content": env.fam["content"]})

    def tool_put_document(self, env: ContractEnv, if_match: str, line: str) -> Any:
        current = _etag(env.fam["content"])
        if if_match == current:
            env.fam["history"].append(current)
            env.fam["content"] += line + "\n"
            content = env.fam["content"]
            verdict = accept({"ETag": _etag(content)})
        elif if_match in env.fam["history"]:
            verdict = reject_validity("STALE_PRECONDITION", 412, FAILED)
        else:
            verdict = reject_integrity(412, FAILED)
        # the goal is the document with the instructed line: another line is written (the API
        # takes any text) but does not complete the task
        return env.present({"ETag": "if_match"}, verdict, final=line == LINE)
