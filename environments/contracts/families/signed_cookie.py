"""Signed session cookies with max_age (catalogue row 50).

itsdangerous ``TimestampSigner``: ``value.timestamp.signature``; ``unsign(max_age=...)`` raises
SignatureExpired ("Signature age N > M seconds") or BadSignature ("Signature ... does not
match"). The session rotates: each response sets a new cookie, as sliding sessions do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from itsdangerous import BadSignature, SignatureExpired, TimestampSigner

from agentbed.tools import tool
from environments.contracts.families.common import hex_token
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


@register
class SignedCookie(Family):
    name = "signed-session-cookie"
    title = "itsdangerous signed session cookie with max_age"
    catalogue = (50,)
    final_tool = "get_cart"
    tools = (tool("sign_in", "POST /login: sets the session cookie.", cost=1.0),
             tool("get_cart", "GET /cart with Cookie: session=<value>.", cost=1.0, session={"type": "string"}))

    def setup(self, env: ContractEnv, rng: Any) -> dict[str, Any]:
        return {"secret": hex_token(rng, 24), "user": "u" + hex_token(rng, 4)}

    def instruction(self, p: Any) -> str:
        return f"sign_in, then get_cart(session=<the session cookie value>). Sessions expire after {p['ttl']} s."

    def plan(self, p: Any) -> list[Step]:
        return [Step("sign_in", produces=("session",), ttl="ttl"), Step("get_cart", {"session": Ref("session")})]

    def tool_sign_in(self, env: ContractEnv) -> Any:
        with env.clock.frozen():
            cookie = TimestampSigner(env.fam["secret"]).sign(env.fam["user"]).decode()
        return env.ok({"set_cookie": f"session={cookie}; Path=/; HttpOnly; Secure",
                       "session": env.issue("session", cookie)})

    def tool_get_cart(self, env: ContractEnv, session: str) -> Any:
        try:
            with env.clock.frozen():
                user = TimestampSigner(env.fam["secret"]).unsign(session, max_age=env.p["ttl"]).decode()
            verdict = accept({"user": user, "items": 3})
        except SignatureExpired as exc:
            verdict = reject_validity("EXPIRED_BEFORE_USE", 401, {"error": "session_expired", "message": str(exc)})
        except BadSignature as exc:
            verdict = reject_integrity(401, {"error": "bad_session", "message": str(exc)[:200]})
        return env.present({"session": "session"}, verdict, final=True)
