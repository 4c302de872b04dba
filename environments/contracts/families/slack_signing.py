"""Slack request signing (catalogue row 20).

Signing and verification are slack_sdk's ``SignatureVerifier`` (docs.slack.dev "Verifying
requests from Slack": ``v0=`` + hex HMAC-SHA256 of ``v0:{X-Slack-Request-Timestamp}:{raw body}``;
a timestamp more than 5 minutes from now is refused), given a clock that reads virtual time. The
SDK answers one bool; the signature (``generate_signature``) and the time window are told apart
only to label the failure. The app answers as Bolt for Python's request-verification middleware
does, for either failure: 401 ``{"error": "invalid request"}`` (slack_bolt
middleware/request_verification/request_verification.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast
from urllib.parse import quote_plus

from environments.contracts.families.common import equal, hex_token
from environments.contracts.families.webhook_base import WebhookFamily
from environments.contracts.family import Verdict, accept, register, reject_integrity, reject_validity

if TYPE_CHECKING:
    from slack_sdk.signature import Clock, SignatureVerifier

    from environments.contracts.env import ContractEnv

BOLT_401 = {"error": "invalid request"}


class VirtualSlackClock:
    """slack_sdk's clock interface (``slack_sdk.signature.Clock``: one method, ``now``) over the
    episode's virtual clock; the SDK only calls ``now``, so it need not be imported to list tasks."""

    def __init__(self, env: ContractEnv) -> None:
        self.env = env

    def now(self) -> float:
        return self.env.clock.now()


def verifier(env: ContractEnv) -> SignatureVerifier:
    from slack_sdk.signature import SignatureVerifier

    return SignatureVerifier(env.fam["secret"], clock=cast("Clock", VirtualSlackClock(env)))  # Clock is structural: only now()


@register
class SlackSigning(WebhookFamily):
    name = "slack-request-signing"
    title = "Slack signed slash-command requests (slack_sdk SignatureVerifier, 5 min window)"
    catalogue = (20,)
    labels = {"EXPIRED_BEFORE_USE": None}
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
                "x_slack_signature": verifier(env).generate_signature(timestamp=ts, body=payload) or ""}

    def verify(self, env: ContractEnv, payload: str, headers: dict[str, str]) -> Verdict:
        ts, signature = headers["x_slack_request_timestamp"], headers["x_slack_signature"]
        sdk = verifier(env)
        try:
            valid = sdk.is_valid(body=payload, timestamp=ts, signature=signature)
        except ValueError:  # a timestamp that is not an integer: the SDK's int() raises
            return reject_integrity(401, BOLT_401)
        if valid:
            return accept({})
        if equal(sdk.generate_signature(timestamp=ts, body=payload) or "", signature):
            return reject_validity("EXPIRED_BEFORE_USE", 401, BOLT_401)  # signed, but outside the 5 min window
        return reject_integrity(401, BOLT_401)
