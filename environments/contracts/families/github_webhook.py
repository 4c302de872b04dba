"""GitHub webhook deliveries: X-Hub-Signature-256 and X-GitHub-Delivery (catalogue row 18).

``sha256=`` + hex HMAC-SHA256 of the raw body (docs.github.com, "Validating webhook
deliveries"), verified by gidgethub's ``validate_event``; no timestamp, so receivers dedupe by the delivery GUID: forwarding the same
delivery twice is a replay.
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING

from environments.contracts.families.common import hmac_sha256_hex, random_bytes
from environments.contracts.families.webhook_base import WebhookFamily
from environments.contracts.family import Verdict, accept, register, reject_integrity

if TYPE_CHECKING:
    from environments.contracts.env import ContractEnv


@register
class GithubWebhook(WebhookFamily):
    name = "github-webhook"
    title = "GitHub webhook HMAC and delivery dedupe"
    catalogue = (18,)
    labels = {"REPLAYED": "deliveries>1"}
    final_tool = "forward_delivery"
    alternatives = {"mixed:forward_delivery(*x_github_delivery*)": "GitHub signs only the body "
                    "(X-Hub-Signature-256); X-GitHub-Delivery is unsigned, so no receiver can tell one delivery's "
                    "id from another's; the signed payload and signature must match, and do"}
    headers = ("x_hub_signature_256", "x_github_delivery")
    receive_tool, forward_tool = "receive_delivery", "forward_delivery"
    tools = WebhookFamily.make_tools("GitHub", receive_tool, forward_tool, headers)

    def payload(self, env: ContractEnv, n: int) -> str:
        event = {"action": "completed", "check_run": {"id": 4000 + n, "name": "ci / test (3.11)", "conclusion":
                                                      "success", "output": {"title": "All 812 tests passed ✓ (\ufb01x: \ufb02aky retry)"}},
                 "repository": {"full_name": "octo-org/agentbed"}, "sender": {"login": "octocat"}}
        return json.dumps(event, ensure_ascii=False, indent=2)

    def sign(self, env: ContractEnv, payload: str) -> dict[str, str]:
        return {"x_hub_signature_256": "sha256=" + hmac_sha256_hex(env.fam["secret"], payload),
                "x_github_delivery": str(uuid.UUID(bytes=random_bytes(env.np_random, 16), version=4))}

    def delivery_id(self, headers: dict[str, str], payload: str) -> str:
        return headers["x_github_delivery"]

    def verify(self, env: ContractEnv, payload: str, headers: dict[str, str]) -> Verdict:
        """gidgethub's ``validate_event`` over the raw body's UTF-8 bytes (a maintained GitHub SDK)."""
        from gidgethub import ValidationFailure
        from gidgethub.sansio import validate_event

        try:
            validate_event(payload.encode("utf-8"), signature=headers["x_hub_signature_256"],
                           secret=env.fam["secret"])
        except ValidationFailure as failure:
            return reject_integrity(401, {"error": "Signatures didn't match!", "detail": str(failure)})
        return accept({})
