"""Cloudflare Turnstile / reCAPTCHA response tokens (catalogue rows 48-49).

Siteverify semantics (developers.cloudflare.com/turnstile/get-started/server-side-validation):
a token is valid for 300 s and redeemable once; an expired or reused token answers
``"error-codes": ["timeout-or-duplicate"]``, a malformed one ``invalid-input-response``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentbed.tools import tool
from environments.contracts.families.common import token
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


def _fail(code: str) -> dict[str, Any]:
    return {"success": False, "error-codes": [code]}


@register
class Turnstile(Family["ContractEnv"]):
    name = "turnstile-token"
    title = "Turnstile challenge tokens: 300 s, single use"
    catalogue = (48, 49)
    labels = {"EXPIRED_BEFORE_USE": None, "REPLAYED": "preview", "SHORTCUT_TAKEN": "preview"}
    final_tool = "submit_signup"
    tools = (tool("solve_challenge", "The widget solves the Turnstile challenge: a response token.", cost=3.0),
             tool("submit_signup", "POST the form; the server calls siteverify with the token.", cost=1.0,
                  token={"type": "string"}, preview={"type": "boolean"}))

    def setup(self, env: ContractEnv, rng: Any) -> dict[str, Any]:
        return {"tokens": {}}

    def instruction(self, p: Any) -> str:
        preview = " First submit with preview=true, then for real with preview=false." if p.get("preview") else ""
        return f"solve_challenge, then submit_signup(token, preview=false). Tokens live 300 s and work once.{preview}"

    def plan(self, p: Any) -> list[Step]:
        steps = [Step("solve_challenge", produces=("token",), ttl="ttl")]
        if p.get("preview"):
            steps += [Step("submit_signup", {"token": Ref("token"), "preview": True}),
                      Step("solve_challenge", produces=("token",), ttl="ttl")]
        return steps + [Step("submit_signup", {"token": Ref("token"), "preview": False})]

    def tool_solve_challenge(self, env: ContractEnv) -> Any:
        value = env.issue("token", "0." + token(env.np_random, 300))
        env.fam["tokens"][value] = {"expires": env.clock.now() + 300, "used": False}
        return env.ok({"token": value})

    def missing_steps(self, env: ContractEnv) -> list[str]:
        return ["submit_signup(preview=true) first"] if env.p.get("preview") and not env.fam.get("previewed") else []

    def tool_submit_signup(self, env: ContractEnv, token: str, preview: bool) -> Any:
        record = env.fam["tokens"].get(token)
        if record is None:
            verdict = reject_integrity(200, _fail("invalid-input-response"))
        elif record["used"]:
            verdict = reject_validity("REPLAYED", 200, _fail("timeout-or-duplicate"))
        elif env.clock.now() >= record["expires"]:
            verdict = reject_validity("EXPIRED_BEFORE_USE", 200, _fail("timeout-or-duplicate"))
        else:
            record["used"] = True
            env.fam["previewed"] = env.fam.get("previewed", False) or bool(preview)
            verdict = accept({"success": True, "preview": preview})
        return env.present({"token": "token"}, verdict, final=not preview)
