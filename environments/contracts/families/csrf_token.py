"""Flask-WTF CSRF tokens (catalogue row 30).

Flask-WTF's scheme: the raw token is signed with itsdangerous ``URLSafeTimedSerializer`` (salt
"wtf-csrf-token") and checked with ``loads(max_age=WTF_CSRF_TIME_LIMIT)``; itsdangerous reads
the time, so it runs under the virtual clock. Messages are flask_wtf/csrf.py's: "The CSRF token
has expired.", "The CSRF token is invalid.", "The CSRF token is missing.".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from itsdangerous import BadData, SignatureExpired, URLSafeTimedSerializer

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


def _serializer(env: ContractEnv) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(env.fam["secret_key"], salt="wtf-csrf-token")


@register
class FlaskCsrf(Family):
    name = "flask-wtf-csrf"
    title = "Flask-WTF CSRF token with a time limit (itsdangerous)"
    catalogue = (29, 30)
    final_tool = "submit_form"
    tools = (tool("load_form", "GET the settings form; it embeds a csrf_token.", cost=1.0),
             tool("submit_form", "POST the settings form with its csrf_token.", cost=1.0, csrf_token={"type": "string"},
                  display_name={"type": "string"}))

    def setup(self, env: ContractEnv, rng: Any) -> dict[str, Any]:
        return {"secret_key": hex_token(rng, 24), "raw": hex_token(rng, 20)}

    def instruction(self, p: Any) -> str:
        return (f"load_form, then submit_form(csrf_token, display_name='Ada'). WTF_CSRF_TIME_LIMIT is {p['ttl']} s.")

    def plan(self, p: Any) -> list[Step]:
        return [Step("load_form", produces=("csrf_token",), ttl="ttl"),
                Step("submit_form", {"csrf_token": Ref("csrf_token"), "display_name": "Ada"})]

    def tool_load_form(self, env: ContractEnv) -> Any:
        with env.clock.frozen():
            signed = _serializer(env).dumps(env.fam["raw"])
        html = f'<form method="post"><input type="hidden" name="csrf_token" value="{signed}"></form>'
        return env.ok({"html": html, "csrf_token": env.issue("csrf_token", signed)})

    def tool_submit_form(self, env: ContractEnv, csrf_token: str, display_name: str) -> Any:
        try:
            with env.clock.frozen():
                raw = _serializer(env).loads(csrf_token, max_age=env.p["ttl"])
            verdict = accept({"saved": True}) if raw == env.fam["raw"] else reject_integrity(
                400, {"error": "Bad Request", "message": "The CSRF tokens do not match."})
        except SignatureExpired:
            verdict = reject_validity("EXPIRED_BEFORE_USE", 400, {"error": "Bad Request",
                                                                  "message": "The CSRF token has expired."})
        except BadData:
            verdict = reject_integrity(400, {"error": "Bad Request", "message": "The CSRF token is invalid."})
        return env.present({"csrf_token": "csrf_token"}, verdict, final=True)
