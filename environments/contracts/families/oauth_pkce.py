"""OAuth 2.0 authorization code with state and PKCE S256 (catalogue rows 8-10).

authlib supplies the real pieces: its authorization server's ``CodeChallenge`` checks the
authorization request (challenge syntax, ``code_challenge_method`` one of plain/S256, no
duplicates: ``S256.`` or ``S256 `` is invalid_request) and compares the verifier (RFC 7636), the verifier syntax (``CODE_VERIFIER_PATTERN``), ``InvalidGrantError`` /
``InvalidRequestError`` bodies (RFC 6749 5.2) and the client's ``MismatchingStateError``. Code
lifetime and single use are the server's job (RFC 6749 4.1.2), enforced on the virtual clock.
Several flows may be in flight: as authlib's client (base_client ``get_state_data``), one record
per state holds that flow's verifier, and the token request carries it, so a code exchanged with
another flow's state or verifier fails PKCE (issue 53).
Task param ``rotations``: the token response also carries a refresh token that rotates on every
refresh; reusing a rotated one revokes the grant (RFC 9700 4.14.2), PKCE and rotation together.
"""

from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlencode, urlsplit

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
    from authlib.oauth2.rfc6749.errors import OAuth2Error
    from authlib.oauth2.rfc6749.requests import OAuth2Request
    from authlib.oauth2.rfc7636.challenge import CodeChallenge

    from environments.contracts.env import ContractEnv

AUTHORIZE = "https://auth.example.com/oauth2/authorize"
REDIRECT = "https://app.example.com/callback"


# authlib is imported by the first episode's call, not with the families: listing the catalog
# needs none of the SDKs.
@functools.cache
def _pkce() -> CodeChallenge:
    """authlib's authorization-server PKCE check (one for the process, as a server keeps it)."""
    from authlib.oauth2.rfc7636.challenge import CodeChallenge

    return CodeChallenge(required=True)


def _body(error: OAuth2Error) -> dict[str, Any]:
    return dict(error.get_body())


def _invalid_grant(description: str) -> dict[str, Any]:
    from authlib.oauth2.rfc6749.errors import InvalidGrantError

    return _body(InvalidGrantError(description))


def _invalid_request(description: str) -> dict[str, Any]:
    from authlib.oauth2.rfc6749.errors import InvalidRequestError

    return _body(InvalidRequestError(description))


@functools.cache
def _query_payload() -> type:
    from authlib.oauth2.rfc6749.requests import OAuth2Payload

    class QueryPayload(OAuth2Payload):
        """An authorization request's query as authlib's framework integrations hand it over."""

        def __init__(self, datalist: dict[str, list[str]]) -> None:
            self._datalist = datalist

        @property
        def data(self) -> dict[str, str]:
            return {k: v[0] for k, v in self._datalist.items()}

        @property
        def datalist(self) -> dict[str, list[str]]:
            return self._datalist

    return QueryPayload


def _authorize_request(datalist: dict[str, list[str]]) -> OAuth2Request:
    from authlib.oauth2.rfc6749.requests import OAuth2Request

    request = OAuth2Request("GET", AUTHORIZE)
    request.payload = _query_payload()(datalist)
    return request


@register
class OAuthCodePkce(Family["ContractEnv"]):
    name = "oauth-code-pkce"
    title = "OAuth 2.0 authorization code + state + PKCE S256 (authlib)"
    catalogue = (8, 9, 10, 11)
    labels = {"EXPIRED_BEFORE_USE": None, "REPLAYED": None, "REVOKED_TOKEN": "rotations", "SHORTCUT_TAKEN": "rotations"}
    defaults = {"token_ttl": 3600}
    final_tool = "get_userinfo"
    tools = (
        tool("start_authorization", "Client: create state and PKCE code_verifier and the authorization URL.", cost=1.0),
        tool("approve_in_browser", "The user opens the authorization URL and approves; returns the redirect "
             "parameters (code, state).", cost=5.0, authorization_url={"type": "string"}),
        tool("exchange_code", "Client: check state, then POST the code and code_verifier to the token endpoint.",
             cost=2.0, code={"type": "string"}, state={"type": "string"}, code_verifier={"type": "string"}),
        tool("refresh", "POST grant_type=refresh_token: a new access token and a new (rotated) refresh token.",
             cost=1.0, refresh_token={"type": "string"}),
        tool("get_userinfo", "GET /userinfo with a bearer access token.", cost=1.0, access_token={"type": "string"}),
    )

    def setup(self, env: ContractEnv, rng: Any) -> dict[str, Any]:
        return {"pending": {}, "codes": {}, "tokens": {}, "refresh": {}, "revoked": False}

    def instruction(self, p: Any) -> str:
        return ("Log in with OAuth: start_authorization, approve_in_browser(authorization_url), exchange_code(code, "
                "state, code_verifier) with the state and verifier from start_authorization, then "
                f"get_userinfo(access_token). Codes live {p['ttl']} s and are single use; access tokens "
                f"live {p.get('token_ttl', 3600)} s."
                + (f" Before get_userinfo, refresh {p['rotations']} time(s) with the latest refresh token: refresh "
                   "tokens rotate and work once; reusing one revokes the session." if p.get("rotations") else ""))

    def plan(self, p: Any) -> list[Step]:
        return [Step("start_authorization", produces=("authorization_url", "state", "code_verifier")),
                Step("approve_in_browser", {"authorization_url": Ref("authorization_url")}, produces=("code",),
                     ttl="ttl", renew=0),
                Step("exchange_code", {"code": Ref("code"), "state": Ref("state"),
                                       "code_verifier": Ref("code_verifier")}, produces=("access_token", "refresh_token"),
                     ttl="token_ttl", renew=0)] + [
                Step("refresh", {"refresh_token": Ref("refresh_token")}, produces=("access_token", "refresh_token"),
                     ttl="token_ttl") for _ in range(p.get("rotations", 0))] + [
                Step("get_userinfo", {"access_token": Ref("access_token")})]

    def tool_start_authorization(self, env: ContractEnv) -> Any:
        from authlib.oauth2.rfc7636.challenge import create_s256_code_challenge

        state, verifier = token(env.np_random, 24), token(env.np_random, 48)
        # one record per state, as authlib's client keeps one per flow (``_state_<name>_<state>``
        # in the session, holding that flow's code_verifier); several flows may be in flight
        env.fam["pending"][state] = {"verifier": verifier}
        query = urlencode({"response_type": "code", "client_id": "agentbed-cli", "redirect_uri": REDIRECT,
                           "scope": "openid profile", "state": state,
                           "code_challenge": create_s256_code_challenge(verifier), "code_challenge_method": "S256"})
        return env.ok({"authorization_url": env.link("authorization_url", f"{AUTHORIZE}?{query}"),
                       "state": env.issue("state", state), "code_verifier": env.issue("code_verifier", verifier)})

    def tool_approve_in_browser(self, env: ContractEnv, authorization_url: str) -> Any:
        from authlib.oauth2.rfc6749.errors import OAuth2Error

        try:
            parts = urlsplit(authorization_url)
        except ValueError:  # e.g. "Invalid IPv6 URL": the browser cannot open it
            parts = urlsplit("")
        datalist = parse_qs(parts.query)
        q = {k: v[0] for k, v in datalist.items()}
        if parts._replace(query="").geturl() != AUTHORIZE or "code_challenge" not in q:
            verdict = reject_integrity(400, _invalid_request("Missing 'code_challenge' or bad endpoint"))
            return env.present({"authorization_url": "authorization_url"}, verdict)
        try:  # authlib's own authorization-request check (challenge syntax, supported method, duplicates)
            _pkce().validate_code_challenge(SimpleNamespace(request=_authorize_request(datalist)), REDIRECT)
        except OAuth2Error as error:
            return env.present({"authorization_url": "authorization_url"}, reject_integrity(400, _body(error)))
        code = token(env.np_random, 20)
        env.fam["codes"][code] = {"challenge": q["code_challenge"], "expires": env.clock.now() + env.p["ttl"],
                                  "used": False, "method": q.get("code_challenge_method",
                                                                 _pkce().DEFAULT_CODE_CHALLENGE_METHOD)}
        verdict = accept({"redirect": f"{REDIRECT}?code={code}&state={q.get('state', '')}",
                          "code": env.issue("code", code), "state": q.get("state", "")})
        return env.present({"authorization_url": "authorization_url"}, verdict)

    def tool_exchange_code(self, env: ContractEnv, code: str, state: str, code_verifier: str) -> Any:
        from authlib.integrations.base_client import MismatchingStateError
        from authlib.oauth2.rfc7636.challenge import CODE_VERIFIER_PATTERN

        slots = {"code": "code", "state": "state", "code_verifier": "code_verifier"}
        flow = env.fam["pending"].get(state)
        if flow is None:  # authlib: no record for this state in the session
            return env.present(slots, reject_integrity(400, {"error": "mismatching_state",
                                                             "error_description": MismatchingStateError().description}))
        record = env.fam["codes"].get(code)
        if record is None:
            return env.present(slots, reject_integrity(400, _invalid_grant("Invalid 'code' in request.")))
        if record["used"]:
            for t in record.get("tokens", []):
                env.fam["tokens"].pop(t, None)  # RFC 6749 4.1.2: reuse SHOULD revoke tokens issued for it
            return env.present(slots, reject_validity("REPLAYED", 400, _invalid_grant(
                "The authorization code has already been redeemed.")))
        if env.clock.now() >= record["expires"]:
            return env.present(slots, reject_validity("EXPIRED_BEFORE_USE", 400, _invalid_grant(
                "The authorization code has expired.")))
        if not CODE_VERIFIER_PATTERN.match(code_verifier):
            return env.present(slots, reject_integrity(400, _invalid_request("Invalid 'code_verifier'")))
        check = _pkce().CODE_CHALLENGE_METHODS[record["method"]]
        # the token request carries the verifier authlib's client stored with this state: a code of
        # another flow fails the server's PKCE check, whatever verifier the caller names
        if not (check(code_verifier, record["challenge"]) and check(flow["verifier"], record["challenge"])):
            return env.present(slots, reject_integrity(400, _invalid_grant("Code challenge failed.")))
        record["used"] = True  # the state's record stays, so a replayed code reaches the server's check
        grant = self._grant(env)
        record["tokens"] = [grant["access_token"]]
        return env.present(slots, accept(grant))

    def _grant(self, env: ContractEnv) -> dict[str, Any]:
        """A token response; with task param ``rotations`` it carries a rotating refresh token."""
        access = token(env.np_random, 32, "ya29.")
        ttl = env.p.get("token_ttl", 3600)
        env.fam["tokens"][access] = env.clock.now() + ttl
        grant = {"access_token": env.issue("access_token", access), "token_type": "Bearer", "expires_in": ttl}
        if env.p.get("rotations"):
            refresh = token(env.np_random, 32, "1//")
            env.fam["refresh"][refresh] = "active"
            grant["refresh_token"] = env.issue("refresh_token", refresh)
        return grant

    def missing_steps(self, env: ContractEnv) -> list[str]:
        done, required = env.fam.get("rotations", 0), env.p.get("rotations", 0)
        return [f"refresh ({required} rotation(s) required, {done} done)"] if done < required else []

    def tool_refresh(self, env: ContractEnv, refresh_token: str) -> Any:
        """RFC 9700 4.14.2: a rotated refresh token presented again revokes the whole grant."""
        status = env.fam["refresh"].get(refresh_token)
        if status is None:
            verdict = reject_integrity(400, _invalid_grant("Invalid refresh token"))
        elif status == "rotated" or env.fam["revoked"]:
            env.fam["revoked"] = True
            env.fam["tokens"].clear()
            verdict = reject_validity("REVOKED_TOKEN", 400, _invalid_grant("Unknown or invalid refresh token."))
        else:
            env.fam["refresh"][refresh_token] = "rotated"
            env.fam["rotations"] = env.fam.get("rotations", 0) + 1
            verdict = accept(self._grant(env))
        return env.present({"refresh_token": "refresh_token"}, verdict)

    def tool_get_userinfo(self, env: ContractEnv, access_token: str) -> Any:
        expires = env.fam["tokens"].get(access_token)
        if expires is None and env.fam["revoked"]:
            verdict = reject_validity("REVOKED_TOKEN", 401, {
                "WWW-Authenticate": 'Bearer error="invalid_token", error_description="The access token was revoked"'})
        elif expires is None:
            verdict = reject_integrity(401, {"WWW-Authenticate": 'Bearer error="invalid_token", '
                                             'error_description="The access token is invalid"'})
        elif env.clock.now() >= expires:
            verdict = reject_validity("EXPIRED_BEFORE_USE", 401, {
                "WWW-Authenticate": 'Bearer error="invalid_token", error_description="The access token expired"'})
        else:
            verdict = accept({"sub": "248289761001", "name": "Jane Doe", "email": "jane@example.com"})
        return env.present({"access_token": "access_token"}, verdict, final=True)
