"""Stripe webhook signatures with a 300 s tolerance (catalogue row 19).

Signing and verification are stripe-python's own: ``WebhookSignature.generate_signature_header``
and ``Webhook.construct_event`` (tolerance 300 s, run under the virtual clock). Its
``SignatureVerificationError`` messages are the error bodies.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from environments.contracts.families.common import hex_token
from environments.contracts.families.webhook_base import WebhookFamily
from environments.contracts.family import Verdict, accept, register, reject_integrity, reject_validity

if TYPE_CHECKING:
    from environments.contracts.env import ContractEnv


@register
class StripeWebhook(WebhookFamily):
    name = "stripe-webhook"
    title = "Stripe-Signature webhook verification (stripe construct_event)"
    catalogue = (19,)
    labels = {"EXPIRED_BEFORE_USE": None}
    final_tool = "forward_event"
    headers = ("stripe_signature",)
    receive_tool, forward_tool = "receive_event", "forward_event"
    tools = WebhookFamily.make_tools("Stripe", receive_tool, forward_tool, headers)

    def payload(self, env: ContractEnv, n: int) -> str:
        # Raw UTF-8 with an Angstrom sign (U+212B, changed by NFC) and an ampersand: real customer data.
        event = {"id": "evt_" + hex_token(env.np_random, 12), "object": "event", "api_version": "2024-06-20",
                 "created": int(env.clock.now()), "type": "invoice.paid",
                 "data": {"object": {"id": "in_" + hex_token(env.np_random, 12), "customer_name": "\u212bngstr\u00f6m "
                                     "R&D AB", "amount_paid": 129900, "currency": "sek"}}}
        return json.dumps(event, ensure_ascii=False, separators=(",", ":"))

    def sign(self, env: ContractEnv, payload: str) -> dict[str, str]:
        import stripe  # stripe-python loads with the first signature, not with the catalog

        header = stripe.WebhookSignature.generate_signature_header(payload, env.fam["secret"],
                                                                   timestamp=int(env.clock.now()))
        return {"stripe_signature": header}

    def delivery_id(self, headers: dict[str, str], payload: str) -> str:
        return json.loads(payload)["id"]

    def verify(self, env: ContractEnv, payload: str, headers: dict[str, str]) -> Verdict:
        import stripe

        try:
            with env.clock.frozen():
                stripe.Webhook.construct_event(payload, headers["stripe_signature"], env.fam["secret"], tolerance=300)
        except stripe.SignatureVerificationError as exc:
            body = {"error": {"type": "signature_verification_error", "message": str(exc)}}
            if "tolerance zone" in str(exc):
                return reject_validity("EXPIRED_BEFORE_USE", 400, body)
            return reject_integrity(400, body)
        except ValueError as exc:  # construct_event parses the JSON after verifying
            return reject_integrity(400, {"error": {"type": "invalid_payload", "message": str(exc)[:200]}})
        return accept({})
