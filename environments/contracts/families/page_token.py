"""Page tokens with a lifetime, bound to the request (catalogue rows 23-25).

Google AIP-158: a page token is opaque and only valid with the same request parameters; AWS
Resource Groups Tagging tokens live 15 min and then raise PaginationTokenExpiredException. The
token here is base64 (with '=' padding) of the server's cursor plus an HMAC, as many services do.
The task's page size is the service's maximum (GetResources validates ResourcesPerPage against a
range), smaller than the 9 resources, so the listing cannot avoid its tokens.
"""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Any

from agentbed.tools import tool
from environments.contracts.families.common import equal, hex_token, hmac_sha256_hex
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

ITEMS = [f"arn:aws:ec2:us-east-1:123456789012:instance/i-{i:017x}" for i in range(9)]
MAX_PER_PAGE = 100  # AWS Resource Groups Tagging API GetResources: ResourcesPerPage 1-100


@register
class PageToken(Family["ContractEnv"]):
    name = "page-token"
    title = "Pagination tokens with a lifetime (AWS Tagging / AIP-158)"
    catalogue = (23, 24, 25)
    labels = {"EXPIRED_BEFORE_USE": None, "PARAMETER_MISMATCH": None, "RATE_LIMITED": "throttle"}
    final_tool = "get_resources"
    tools = (tool("get_resources", "Tagging GetResources: one page of resources; pass PaginationToken for the next "
                  "page and keep ResourcesPerPage unchanged.", cost=2.0, resources_per_page={"type": "integer"},
                  pagination_token={"type": "string"}),)

    def setup(self, env: ContractEnv, rng: Any) -> dict[str, Any]:
        return {"secret": hex_token(rng, 16), "issued": {}}

    def accepted(self, p: Any) -> dict[str, str]:
        return {f"argument:get_resources.resources_per_page={n}": "a page size below the service's maximum; the "
                "token binds it and the listing still follows every token" for n in range(1, p["per_page"])}

    def instruction(self, p: Any) -> str:
        return (f"List all resources with get_resources(resources_per_page={p['per_page']}, pagination_token='') "
                f"({p['per_page']} is this service's maximum page size) and follow PaginationToken until it is "
                f"empty, keeping resources_per_page unchanged. Tokens expire {p['ttl']} s after issue."
                + (" On a 429, retry only after retry_after seconds." if p.get("throttle") else ""))

    def plan(self, p: Any) -> list[Step]:
        pages = -(-len(ITEMS) // p["per_page"])
        steps = [Step("get_resources", {"resources_per_page": p["per_page"], "pagination_token": ""},
                      produces=("PaginationToken",), ttl="ttl")]
        steps += [Step("get_resources", {"resources_per_page": p["per_page"], "pagination_token":
                                         Ref("PaginationToken")}, produces=("PaginationToken",), ttl="ttl", renew=0,
                       poll="ThrottlingException")
                  for _ in range(pages - 1)]
        return steps

    def _token(self, env: ContractEnv, offset: int, per_page: int) -> str:
        cursor = json.dumps({"o": offset, "n": per_page, "t": int(env.clock.now())}, separators=(",", ":"))
        mac = hmac_sha256_hex(env.fam["secret"], cursor)[:16]
        return base64.b64encode(f"{cursor}|{mac}".encode()).decode()

    def _throttled(self, env: ContractEnv) -> Any:
        """Task param ``throttle``: the first follow-up page answers 429 with Retry-After; a retry
        before it elapses is throttled again and graded RATE_LIMITED."""
        if not env.p.get("throttle"):
            return None
        until = env.fam.get("throttled_until")
        body = {"__type": "ThrottlingException", "Message": "Rate exceeded", "retry_after": env.p["throttle"]}
        if until is None:
            env.fam["throttled_until"] = env.clock.now() + env.p["throttle"]
            return env.respond(429, body)
        if env.clock.now() < until:
            return env.present({}, reject_validity("RATE_LIMITED", 429, {**body, "retry_after": until - env.clock.now()}))
        return None

    def tool_get_resources(self, env: ContractEnv, resources_per_page: int, pagination_token: str) -> Any:
        # GetResources validates ResourcesPerPage against the service's maximum (100 on AWS; the
        # task's per_page here, below the listing's size, so one page cannot hold it and the
        # tokens must be followed). On a follow-up page the token binds the size it was issued
        # for, so another size is PARAMETER_MISMATCH below (AIP-158: INVALID_ARGUMENT).
        most = min(MAX_PER_PAGE, env.p["per_page"])
        if pagination_token == "" and not 1 <= resources_per_page <= most:
            return env.respond(400, {"__type": "InvalidParameterException",
                                     "Message": f"ResourcesPerPage must be between 1 and {most}."})
        throttled = self._throttled(env) if pagination_token != "" else None
        if throttled is not None:
            return throttled
        if pagination_token == "":
            offset, verdict = 0, None
        else:
            try:
                cursor, mac = base64.b64decode(pagination_token, validate=True).decode().rsplit("|", 1)
                state = json.loads(cursor)
                good = isinstance(state, dict) and equal(hmac_sha256_hex(env.fam["secret"], cursor)[:16], mac)
            except (ValueError, UnicodeDecodeError):
                good, state = False, {}
            offset = state.get("o", 0) if good else 0
            if not good:
                verdict = reject_integrity(400, {"__type": "InvalidParameterException",
                                                 "Message": "The pagination token is invalid."})
            elif env.clock.now() - state["t"] > env.p["ttl"]:
                verdict = reject_validity("EXPIRED_BEFORE_USE", 400, {
                    "__type": "PaginationTokenExpiredException",
                    "Message": "The specified PaginationToken has expired."})
            elif state["n"] != resources_per_page:
                verdict = reject_validity("PARAMETER_MISMATCH", 400, {
                    "__type": "InvalidParameterException",
                    "Message": "The request parameters must match the request that produced the PaginationToken."})
            else:
                verdict = None
        if verdict is not None:
            return env.present({"PaginationToken": "pagination_token"}, verdict)
        page = ITEMS[offset:offset + resources_per_page]
        more = offset + resources_per_page < len(ITEMS)
        nxt = env.issue("PaginationToken", self._token(env, offset + resources_per_page, resources_per_page)) \
            if more else ""
        body = {"ResourceTagMappingList": [{"ResourceARN": a} for a in page], "PaginationToken": nxt}
        if pagination_token == "":
            return env.ok(body) if more else env.present({}, accept(body), final=True)
        return env.present({"PaginationToken": "pagination_token"}, accept(body), final=not more)
