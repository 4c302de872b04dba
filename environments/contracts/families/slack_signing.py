"""Slack request signing (catalogue row 20).

The documented algorithm (api.slack.com/authentication/verifying-requests-from-slack):
``v0=`` + hex HMAC-SHA256 of ``v0:{X-Slack-Request-Timestamp}:{raw body}`` with the signing
secret; requests whose timestamp is more than 5 minutes from now are rejected (replay guard).
The app answers 401 with its own message, as Bolt does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote_plus

from environments.contracts.families.common import equal, hex_token, hmac_sha256_hex
from environments.contracts.families.webhook_base import WebhookFamily
from environments.contracts.family import Verdict, accept, register, reject_integrity, reject_validity

if TYPE_CHECKING:
    from environments.contracts.env import ContractEnv


@register
class SlackSigning(WebhookFamily):
    name = "slack-request-signing"
    title = "Slack signed slash-command requests (v0 HMAC, 5 min window)"
    catalogue = (20,)
    final_tool = "forward_command"
    headers = ("x_slack_request_timestamp", "x_slack_signature")
    receive_tool, forward_tool = "receive_command", "forward_command"
    tools = WebhookFamily.make_tools("Slack", receive_tool, forward_tool, headers)

    def payload(self, env: ContractEnv, n: int) -> str:
        fields = {"token": hex_token(env.np_random, 12), "team_id": "T0001", "channel_name": "deploys",
                  "command": "/deploy", "text": "api-gateway prod & staging --force",
                  "response_url": "https://hooks.slack.com/commands/T0001/" + hex_token(env.np_random, 8),
                  "trigger_id": hex_token(env.np_random, 10)}
        return "&".join(f"{k}={quote_plus(v)}" for k, v in fields.items())

    def sign(self, env: ContractEnv, payload: str) -> dict[str, str]:
        ts = str(int(env.clock.now()))
        return {"x_slack_request_timestamp": ts,
                "x_slack_signature": "v0=" + hmac_sha256_hex(env.fam["secret"], f"v0:{ts}:{payload}")}

    def verify(self, env: ContractEnv, payload: str, headers: dict[str, str]) -> Verdict:
        ts, signature = headers["x_slack_request_timestamp"], headers["x_slack_signature"]
        expected = "v0=" + hmac_sha256_hex(env.fam["secret"], f"v0:{ts}:{payload}")
        if not equal(expected, signature):
            return reject_integrity(401, {"error": "invalid_signature", "message": "Invalid request signature"})
        if not ts.isdigit() or abs(env.clock.now() - int(ts)) > 300:
            return reject_validity("EXPIRED_BEFORE_USE", 401, {"error": "stale_request",
                                                               "message": "Request timestamp is too old"})
        return accept({})
