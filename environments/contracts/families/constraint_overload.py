"""One form submission bound by eight artifacts at once (the published constraint-overload-protocol
pattern).

A payment-approval form hands out eight values that the submit must carry unchanged: an
itsdangerous-signed session cookie (max_age is the session expiry), a CSRF token, a single-use
nonce, an idempotency key, the approval's ETag for If-Match, the form id, the amount exactly as
formatted, and the server's HMAC-SHA256 over the form. Each constraint is checked the way its
real counterpart is and answered with that counterpart's error.
Task params: ``ttl`` (session max_age).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from itsdangerous import BadSignature, SignatureExpired, TimestampSigner

from agentbed.tools import tool
from environments.contracts.families.common import equal, hex_token, hmac_sha256_hex, token
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

FIELDS = ("session", "csrf_token", "nonce", "idempotency_key", "if_match", "form_id", "amount", "signature")
ERRORS = {  # the answer each real counterpart gives for a wrong value
    "csrf_token": (400, {"error": "csrf", "message": "The CSRF tokens do not match."}),
    "nonce": (400, {"error": "bad_nonce", "message": "JWS has invalid anti-replay nonce"}),
    "idempotency_key": (400, {"error": {"type": "idempotency_error", "message": "Unknown idempotency key."}}),
    "if_match": (412, {"Error": {"Code": "PreconditionFailed",
                                 "Message": "At least one of the pre-conditions you specified did not hold"}}),
    "form_id": (404, {"error": "not_found", "message": "No such form."}),
    "amount": (400, {"error": "invalid_request", "message": "amount does not match the approved amount."}),
    "signature": (401, {"error": "invalid_signature", "message": "Request signature mismatch."}),
}


@register
class ConstraintOverload(Family["ContractEnv"]):
    name = "constraint-overload"
    title = "Eight simultaneous constraints on one submit (signed session, CSRF, nonce, key, ETag, HMAC)"
    catalogue = (50, 30, 41, 22, 28)
    labels = {"EXPIRED_BEFORE_USE": None}
    final_tool = "submit_approval"
    tools = (
        tool("open_approval", "Open the payment-approval form: every value the submit must carry.", cost=1.0),
        tool("submit_approval", "Submit the approval with all eight values exactly as issued.", cost=2.0, required=None,
             **{name: {"type": "string"} for name in FIELDS}),
    )

    def setup(self, env: ContractEnv, rng: Any) -> dict[str, Any]:
        return {"secret": hex_token(rng, 24), "user": "u" + hex_token(rng, 4), "forms": {}, "spent": [],
                "etag": '"' + hex_token(rng, 16) + '"', "amount": f"{int(rng.integers(1000, 99999)) / 100:.2f}"}

    def instruction(self, p: Any) -> str:
        return ("open_approval, then submit_approval with all eight values (" + ", ".join(FIELDS) + ") exactly as "
                f"open_approval returned them. The session expires {p['ttl']} s after it is issued; each nonce is "
                "single use.")

    def plan(self, p: Any) -> list[Step]:
        return [Step("open_approval", produces=FIELDS, ttl="ttl"),
                Step("submit_approval", {name: Ref(name) for name in FIELDS})]

    def tool_open_approval(self, env: ContractEnv) -> Any:
        rng, fam = env.np_random, env.fam
        with env.clock.frozen():
            session = TimestampSigner(fam["secret"]).sign(fam["user"]).decode()
        values = {"session": session, "csrf_token": token(rng, 32), "nonce": token(rng, 16),
                  "idempotency_key": token(rng, 24, "idem_"), "if_match": fam["etag"],
                  "form_id": "frm_" + hex_token(rng, 10), "amount": fam["amount"]}
        values["signature"] = "v1=" + hmac_sha256_hex(fam["secret"], "|".join(values[k] for k in FIELDS[:7]))
        fam["forms"][values["form_id"]] = values
        return env.ok({name: env.issue(name, values[name]) for name in FIELDS})

    def _verdict(self, env: ContractEnv, sent: dict[str, str]) -> Verdict:
        try:
            with env.clock.frozen():
                TimestampSigner(env.fam["secret"]).unsign(sent["session"], max_age=env.p["ttl"])
        except SignatureExpired as exc:
            return reject_validity("EXPIRED_BEFORE_USE", 401, {"error": "session_expired", "message": str(exc)})
        except BadSignature as exc:
            return reject_integrity(401, {"error": "bad_session", "message": str(exc)[:200]})
        form = env.fam["forms"].get(sent["form_id"])
        if form is None:
            return reject_integrity(*ERRORS["form_id"])
        if not equal(sent["session"], form["session"]):  # the form's CSRF token belongs to the session
            return reject_integrity(*ERRORS["csrf_token"])  # that loaded it (Flask-WTF, Django)
        if sent["nonce"] in env.fam["spent"]:
            return reject_validity("REPLAYED", *ERRORS["nonce"])
        for name in FIELDS[1:]:
            if not equal(sent[name], form[name]):
                return reject_integrity(*ERRORS[name])
        env.fam["spent"].append(sent["nonce"])
        return accept({"approved": True, "form_id": form["form_id"], "amount": form["amount"]})

    def tool_submit_approval(self, env: ContractEnv, **sent: str) -> Any:
        verdict = self._verdict(env, {name: str(sent.get(name, "")) for name in FIELDS})
        return env.present({name: name for name in FIELDS}, verdict, final=True)
