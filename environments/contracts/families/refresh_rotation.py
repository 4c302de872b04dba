"""Rotating refresh tokens with reuse detection (catalogue rows 11-12).

RFC 6749 6 and RFC 9700 4.14.2 (OAuth 2.1): each refresh returns a new refresh token and
invalidates the old one; presenting an already rotated token revokes the whole token family
(auth0 "Refresh Token Rotation", reuse detection). Errors are authlib's invalid_grant bodies;
access tokens answer RFC 6750 invalid_token.
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


@register
class RefreshRotation(Family["ContractEnv"]):
    name = "refresh-token-rotation"
    title = "Rotating refresh tokens, reuse revokes the family (RFC 9700)"
    catalogue = (11, 12)
    labels = {"EXPIRED_BEFORE_USE": None, "REVOKED_TOKEN": None, "SHORTCUT_TAKEN": None}
    final_tool = "get_report"
    tools = (
        tool("login", "Password grant for the service account: access + refresh token.", cost=1.0),
        tool("refresh", "POST grant_type=refresh_token; returns a new access and refresh token.", cost=1.0,
             refresh_token={"type": "string"}),
        tool("get_report", "GET /reports/latest with a bearer access token.", cost=1.0,
             access_token={"type": "string"}),
    )

    def setup(self, env: ContractEnv, rng: Any) -> dict[str, Any]:
        return {"refresh": {}, "access": {}, "revoked": False, "rotations": 0}

    def instruction(self, p: Any) -> str:
        return (f"login, then refresh the tokens {p['rotations']} time(s) as the rotation policy requires (each "
                f"refresh token works once), then get_report(access_token). Access tokens live {p['ttl']} s.")

    def plan(self, p: Any) -> list[Step]:
        steps = [Step("login", produces=("access_token", "refresh_token"), ttl="ttl")]
        steps += [Step("refresh", {"refresh_token": Ref("refresh_token")}, produces=("access_token", "refresh_token"),
                       ttl="ttl") for _ in range(p["rotations"])]
        return steps + [Step("get_report", {"access_token": Ref("access_token")}, renew=len(steps) - 1)]

    def _pair(self, env: ContractEnv) -> dict[str, Any]:
        access, refresh = token(env.np_random, 32, "at_"), token(env.np_random, 32, "rt_")
        env.fam["access"][access] = env.clock.now() + env.p["ttl"]
        env.fam["refresh"][refresh] = "active"
        return {"access_token": env.issue("access_token", access), "refresh_token": env.issue("refresh_token", refresh),
                "token_type": "Bearer", "expires_in": env.p["ttl"]}

    def tool_login(self, env: ContractEnv) -> Any:
        return env.ok(self._pair(env))

    def tool_refresh(self, env: ContractEnv, refresh_token: str) -> Any:
        from authlib.oauth2.rfc6749.errors import InvalidGrantError  # authlib loads with the first refresh

        status = env.fam["refresh"].get(refresh_token)
        if status is None:
            verdict = reject_integrity(400, dict(InvalidGrantError("Invalid refresh token").get_body()))
        elif status == "rotated" or env.fam["revoked"]:
            env.fam["revoked"] = True  # reuse detection: the whole family is revoked
            env.fam["access"].clear()
            verdict = reject_validity("REVOKED_TOKEN", 400, dict(InvalidGrantError(
                "Unknown or invalid refresh token.").get_body()))
        else:
            env.fam["refresh"][refresh_token] = "rotated"
            env.fam["rotations"] += 1
            verdict = accept(self._pair(env))
        return env.present({"refresh_token": "refresh_token"}, verdict)

    def missing_steps(self, env: ContractEnv) -> list[str]:
        done, required = env.fam["rotations"], env.p["rotations"]
        return [f"refresh ({required} rotation(s) required, {done} done)"] if done < required else []

    def tool_get_report(self, env: ContractEnv, access_token: str) -> Any:
        expires = env.fam["access"].get(access_token)
        if expires is None and access_token in {v["value"] for v in env.state["issued"].get("access_token", [])}:
            verdict = reject_validity("REVOKED_TOKEN", 401, {
                "WWW-Authenticate": 'Bearer error="invalid_token", error_description="The access token was revoked"'})
        elif expires is None:
            verdict = reject_integrity(401, {"WWW-Authenticate": 'Bearer error="invalid_token"'})
        elif env.clock.now() >= expires:
            verdict = reject_validity("EXPIRED_BEFORE_USE", 401, {
                "WWW-Authenticate": 'Bearer error="invalid_token", error_description="The access token expired"'})
        else:
            verdict = accept({"report": "q3-revenue", "rows": 1204})
        return env.present({"access_token": "access_token"}, verdict, final=True)
