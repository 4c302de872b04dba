"""TOTP second factor (catalogue row 31).

pyotp implements RFC 6238 (X = 30 s, T0 = 0); the verifier (``valid_window=1``, RFC 6238 5.2)
accepts the code of the current step and of one step on either side, one back and one ahead,
at virtual now. Codes are strings of 6 digits, leading
zeros included (RFC 4226). Services answer a late or wrong code alike: "Invalid two-factor code".
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from agentbed.tools import tool
from environments.contracts.families.common import random_bytes
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

INVALID = {"error": "invalid_otp", "message": "Invalid two-factor code."}


@register
class Totp(Family["ContractEnv"]):
    name = "totp"
    title = "TOTP codes in a 30 s window (pyotp)"
    catalogue = (31,)
    labels = {"EXPIRED_BEFORE_USE": None}
    final_tool = "verify_otp"
    alternatives = {"expired:code": "pyotp's verify(valid_window=1) accepts the previous 30 s step's code, as "
                    "RFC 6238 5.2 recommends for transmission delay"}
    tools = (tool("read_authenticator", "Read the current 6-digit code from the authenticator app.", cost=2.0),
             tool("verify_otp", "Submit the two-factor code to finish signing in.", cost=1.0, code={"type": "string"}))

    def setup(self, env: ContractEnv, rng: Any) -> dict[str, Any]:
        return {"secret": base64.b32encode(random_bytes(rng, 20)).decode()}

    def instruction(self, p: Any) -> str:
        return "read_authenticator, then verify_otp(code) with the code exactly as shown (codes change every 30 s)."

    def plan(self, p: Any) -> list[Step]:
        return [Step("read_authenticator", produces=("code",), ttl="ttl"), Step("verify_otp", {"code": Ref("code")})]

    def tool_read_authenticator(self, env: ContractEnv) -> Any:
        import pyotp  # loads with the first code, not with the catalog

        totp = pyotp.TOTP(env.fam["secret"])
        with env.clock.frozen():
            code = totp.now()
        remaining = 30 - int(env.clock.now()) % 30
        return env.ok({"code": env.issue("code", code), "seconds_remaining": remaining})

    def tool_verify_otp(self, env: ContractEnv, code: str) -> Any:
        import pyotp

        totp = pyotp.TOTP(env.fam["secret"])
        with env.clock.frozen():
            valid = totp.verify(code, valid_window=1)
        old = any(totp.at(env.clock.now() - 30 * k) == code for k in range(2, 120))
        if valid:
            verdict = accept({"signed_in": True})
        elif old:
            verdict = reject_validity("EXPIRED_BEFORE_USE", 401, INVALID)
        else:
            verdict = reject_integrity(401, INVALID)
        return env.present({"code": "code"}, verdict, final=True)
