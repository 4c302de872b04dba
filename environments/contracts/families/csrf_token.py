"""Flask-WTF CSRF tokens (catalogue row 30).

Flask-WTF itself issues and checks the token: ``generate_csrf`` signs the session's raw token
(itsdangerous, salt "wtf-csrf-token") and ``validate_csrf`` checks it with
WTF_CSRF_TIME_LIMIT against the raw token in the session, in a Flask request context whose
session holds this user's raw token. itsdangerous reads the time, so both run under the
virtual clock. Its messages are the answers: "The CSRF token has expired.", "The CSRF token is
invalid.", "The CSRF token is missing.", "The CSRF tokens do not match.".
Task param ``unlock_ttl``: the form also needs a sudo-mode grant (as GitHub's sudo mode asks for
the password again before a sensitive change): confirm_password, sent with the CSRF token,
returns an unlock token signed the same way that lives ``unlock_ttl`` seconds.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
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


@functools.cache
def _app() -> Any:
    """The Flask app the request contexts belong to, made (and Flask imported) on first use; called
    before the clock is frozen, so nothing is imported under a frozen clock."""
    from flask import Flask

    app = Flask("agentbed-contracts-csrf")
    app.secret_key = "session-cookie-key"  # Flask's session needs one; the CSRF tokens use the episode's key
    return app


@contextlib.contextmanager
def _session(env: ContractEnv, app: Any) -> Iterator[None]:
    """A request context whose session holds this user's raw CSRF token, as Flask-WTF keeps it."""
    from flask import session

    with app.test_request_context():
        session["csrf_token"] = env.fam["raw"]
        yield


NAME = "Ada"  # the display name the instruction asks for


@register
class FlaskCsrf(Family["ContractEnv"]):
    name = "flask-wtf-csrf"
    title = "Flask-WTF CSRF token with a time limit (itsdangerous)"
    catalogue = (29, 30)
    labels = {"EXPIRED_BEFORE_USE": None}
    final_tool = "submit_form"
    alternatives = {"mixed:submit_form(csrf_token,unlock_token)": "Flask-WTF signs the session's one raw token: "
                    "every token a session was given is valid until its time limit, whichever load_form issued it"}
    tools = (tool("load_form", "GET the settings form; it embeds a csrf_token.", cost=1.0),
             tool("confirm_password", "Sudo mode: re-enter the password (POST with the csrf_token); returns an "
                  "unlock_token.", cost=1.0, csrf_token={"type": "string"}),
             tool("submit_form", "POST the settings form with its csrf_token (and unlock_token where sudo mode is "
                  "required).", cost=1.0, required=("csrf_token", "display_name"), csrf_token={"type": "string"},
                  display_name={"type": "string"}, unlock_token={"type": "string"}))

    def setup(self, env: ContractEnv, rng: Any) -> dict[str, Any]:
        return {"secret_key": hex_token(rng, 24), "raw": hex_token(rng, 20)}

    def instruction(self, p: Any) -> str:
        if p.get("unlock_ttl"):
            return (f"load_form, then confirm_password(csrf_token) for sudo mode, then submit_form(csrf_token, "
                    f"unlock_token, display_name='{NAME}'). WTF_CSRF_TIME_LIMIT is {p['ttl']} s; the unlock token "
                    f"lives {p['unlock_ttl']} s.")
        return (f"load_form, then submit_form(csrf_token, display_name='{NAME}'). WTF_CSRF_TIME_LIMIT is {p['ttl']} s.")

    def plan(self, p: Any) -> list[Step]:
        submit = {"csrf_token": Ref("csrf_token"), "display_name": NAME}
        unlock = []
        if p.get("unlock_ttl"):
            unlock = [Step("confirm_password", {"csrf_token": Ref("csrf_token")}, produces=("unlock_token",),
                           ttl="unlock_ttl")]
            submit["unlock_token"] = Ref("unlock_token")
        return [Step("load_form", produces=("csrf_token",), ttl="ttl"), *unlock, Step("submit_form", submit)]

    def _check_csrf(self, env: ContractEnv, csrf_token: str) -> Any:
        """None if flask_wtf's ``validate_csrf`` accepts the token now (the session holding this
        user's raw token), else its verdict with flask_wtf's message."""
        from flask_wtf.csrf import validate_csrf
        from wtforms import ValidationError

        app = _app()
        try:
            with env.clock.frozen(), _session(env, app):
                validate_csrf(csrf_token, secret_key=env.fam["secret_key"], time_limit=env.p["ttl"])
        except ValidationError as error:
            body = {"error": "Bad Request", "message": str(error)}
            expired = str(error) == "The CSRF token has expired."
            return reject_validity("EXPIRED_BEFORE_USE", 400, body) if expired else reject_integrity(400, body)
        return None

    def _unlocker(self, env: ContractEnv) -> URLSafeTimedSerializer:
        return URLSafeTimedSerializer(env.fam["secret_key"], salt="sudo-mode")

    def tool_confirm_password(self, env: ContractEnv, csrf_token: str) -> Any:
        verdict = self._check_csrf(env, csrf_token)
        if verdict is None:
            with env.clock.frozen():
                unlock = self._unlocker(env).dumps({"sudo": env.fam["raw"][:8]})
            verdict = accept({"unlock_token": env.issue("unlock_token", unlock),
                              "expires_in": env.p.get("unlock_ttl", 300)})
        return env.present({"csrf_token": "csrf_token"}, verdict)

    def _check_unlock(self, env: ContractEnv, unlock_token: str) -> Any:
        if not unlock_token:
            return reject_integrity(403, {"error": "sudo_required", "message": "Confirm your password to continue."})
        try:
            with env.clock.frozen():
                self._unlocker(env).loads(unlock_token, max_age=env.p["unlock_ttl"])
        except SignatureExpired:
            return reject_validity("EXPIRED_BEFORE_USE", 403, {"error": "sudo_expired",
                                                               "message": "Sudo mode expired; confirm your password."})
        except BadData:
            return reject_integrity(403, {"error": "sudo_required", "message": "Confirm your password to continue."})
        return None

    def tool_load_form(self, env: ContractEnv) -> Any:
        from flask_wtf.csrf import generate_csrf

        app = _app()
        with env.clock.frozen(), _session(env, app):
            signed = generate_csrf(secret_key=env.fam["secret_key"])
        html = f'<form method="post"><input type="hidden" name="csrf_token" value="{signed}"></form>'
        return env.ok({"html": html, "csrf_token": env.issue("csrf_token", signed)})

    def tool_submit_form(self, env: ContractEnv, csrf_token: str, display_name: str, unlock_token: str = "") -> Any:
        slots = {"csrf_token": "csrf_token"}
        verdict = self._check_csrf(env, csrf_token)
        if env.p.get("unlock_ttl"):
            slots["unlock_token"] = "unlock_token"
            verdict = verdict or self._check_unlock(env, unlock_token)
        # the goal is the profile saved with the instructed name: another name is saved (the form
        # takes any text) but does not complete the task
        return env.present(slots, verdict or accept({"saved": True}), final=display_name == NAME)
