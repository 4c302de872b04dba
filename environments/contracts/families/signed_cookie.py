"""Signed session cookies with max_age (catalogue row 50).

itsdangerous ``TimestampSigner``: ``value.timestamp.signature``; ``unsign(max_age=...)`` raises
SignatureExpired ("Signature age N > M seconds") or BadSignature ("Signature ... does not
match"). Task params ``pages`` and ``rotate_every``: browsing rotates the cookie every N requests
and revokes the one it replaces (rotation as a session-fixation defence, like Django's
``cycle_key``), so a rotated-out cookie is answered 401 and graded REVOKED_TOKEN.
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
class SignedCookie(Family["ContractEnv"]):
    name = "signed-session-cookie"
    title = "itsdangerous signed session cookie with max_age"
    catalogue = (50,)
    labels = {"EXPIRED_BEFORE_USE": None, "REVOKED_TOKEN": "rotate_every", "SHORTCUT_TAKEN": "pages"}
    final_tool = "get_cart"
    alternatives = {"order:browse(page=*) before browse(page=*)": "the instruction names the pages to browse, not "
                    "their order; every page is required and the rotated cookie is enforced on each"}
    tools = (tool("sign_in", "POST /login: sets the session cookie.", cost=1.0),
             tool("browse", "GET a catalogue page with Cookie: session=<value>; may set a rotated cookie.", cost=1.0,
                  session={"type": "string"}, page={"type": "integer", "minimum": 1, "maximum": 1000}),
             tool("get_cart", "GET /cart with Cookie: session=<value>.", cost=1.0, session={"type": "string"}))

    def setup(self, env: ContractEnv, rng: Any) -> dict[str, Any]:
        return {"secret": hex_token(rng, 24), "user": "u" + hex_token(rng, 4), "calls": 0, "rotated_out": []}

    def instruction(self, p: Any) -> str:
        text = f"sign_in, then get_cart(session=<the session cookie value>). Sessions expire after {p['ttl']} s."
        if p.get("pages"):
            text = (f"sign_in, browse pages 1..{p['pages']}, then get_cart. Every {p['rotate_every']} requests the "
                    f"server rotates the session cookie (a new session value); the old one is revoked. Sessions "
                    f"expire {p['ttl']} s after they are set.")
        return text

    def plan(self, p: Any) -> list[Step]:
        browse = [Step("browse", {"session": Ref("session"), "page": page}, produces=("session",), ttl="ttl", renew=0)
                  for page in range(1, p.get("pages", 0) + 1)]
        return ([Step("sign_in", produces=("session",), ttl="ttl")] + browse
                + [Step("get_cart", {"session": Ref("session")})])

    def _cookie(self, env: ContractEnv) -> str:
        with env.clock.frozen():
            return env.issue("session", TimestampSigner(env.fam["secret"]).sign(env.fam["user"]).decode())

    def tool_sign_in(self, env: ContractEnv) -> Any:
        cookie = self._cookie(env)
        return env.ok({"set_cookie": f"session={cookie}; Path=/; HttpOnly; Secure", "session": cookie})

    def _verify(self, env: ContractEnv, session: str) -> Any:
        if session in env.fam["rotated_out"]:  # rotation revokes the previous cookie
            return reject_validity("REVOKED_TOKEN", 401, {"error": "session_revoked",
                                                          "message": "This session cookie was rotated out."})
        try:
            with env.clock.frozen():
                user = TimestampSigner(env.fam["secret"]).unsign(session, max_age=env.p["ttl"]).decode()
            return accept({"user": user})
        except SignatureExpired as exc:
            return reject_validity("EXPIRED_BEFORE_USE", 401, {"error": "session_expired", "message": str(exc)})
        except BadSignature as exc:
            return reject_integrity(401, {"error": "bad_session", "message": str(exc)[:200]})

    def tool_browse(self, env: ContractEnv, session: str, page: int) -> Any:
        verdict = self._verify(env, session)
        if verdict.accepted:
            env.fam["calls"] += 1
            env.fam.setdefault("browsed", []).append(page)
            body = {"page": page, "items": [f"sku-{page}-{i}" for i in range(3)]}
            if env.fam["calls"] % env.p.get("rotate_every", 10**9) == 0:
                env.fam["rotated_out"].append(session)
                cookie = self._cookie(env)
                body.update(set_cookie=f"session={cookie}; Path=/; HttpOnly; Secure", session=cookie)
            verdict = accept(body)
        return env.present({"session": "session"}, verdict)

    def missing_steps(self, env: ContractEnv) -> list[str]:
        unseen = sorted(set(range(1, env.p.get("pages", 0) + 1)) - set(env.fam.get("browsed", [])))
        return [f"browse page {page}" for page in unseen]

    def tool_get_cart(self, env: ContractEnv, session: str) -> Any:
        verdict = self._verify(env, session)
        if verdict.accepted:
            verdict = accept({**verdict.body, "items": 3})
        return env.present({"session": "session"}, verdict, final=True)
