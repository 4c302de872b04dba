"""OAuth device authorization grant with polling interval and slow_down (catalogue row 17).

RFC 8628 3.4-3.5 as GitHub implements it: device_code lives ``expires_in`` (900 s), the client
polls no faster than ``interval`` (5 s); polling too fast answers ``slow_down`` and adds 5 s to
the interval; ``authorization_pending`` until the user approves; ``expired_token`` after expiry;
``incorrect_device_code`` for an unknown code (docs.github.com, authorizing OAuth apps).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentbed.tools import tool
from environments.contracts.families.common import hex_token, token
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

URI = "https://github.com/login/device"


@register
class DeviceFlow(Family["ContractEnv"]):
    name = "device-flow"
    title = "OAuth device flow polling with slow_down (RFC 8628, GitHub)"
    catalogue = (17,)
    labels = {"SLOW_DOWN": None, "EXPIRED_BEFORE_USE": None}
    final_tool = "get_user"
    tools = (
        tool("request_device_code", "POST /login/device/code: device_code, user_code, interval.", cost=1.0),
        tool("poll_token", "POST /login/oauth/access_token with the device_code.", cost=1.0,
             device_code={"type": "string"}),
        tool("get_user", "GET /user with the access token.", cost=1.0, access_token={"type": "string"}),
    )

    def setup(self, env: ContractEnv, rng: Any) -> dict[str, Any]:
        return {"device": None, "tokens": []}

    def instruction(self, p: Any) -> str:
        return ("Authorize with the device flow: request_device_code, then poll_token(device_code) no faster than "
                "the returned interval until it returns an access_token (the user approves within a minute), then "
                f"get_user(access_token). The device code expires after {p['ttl']} s.")

    def plan(self, p: Any) -> list[Step]:
        return [Step("request_device_code", produces=("device_code", "interval"), ttl="ttl"),
                Step("poll_token", {"device_code": Ref("device_code")}, produces=("access_token",),
                     poll="authorization_pending"),
                Step("get_user", {"access_token": Ref("access_token")})]

    def tool_request_device_code(self, env: ContractEnv) -> Any:
        code, user = hex_token(env.np_random, 20), token(env.np_random, 6).upper()[:8]
        now = env.clock.now()
        env.fam["device"] = {"code": code, "expires": now + env.p["ttl"], "interval": 5, "last_poll": None,
                             "approved_at": now + env.p.get("approve_after", 12)}
        return env.ok({"device_code": env.issue("device_code", code), "user_code": user, "verification_uri": URI,
                       "expires_in": env.p["ttl"], "interval": 5})

    def tool_poll_token(self, env: ContractEnv, device_code: str) -> Any:
        device, now = env.fam["device"], env.clock.now()
        if device is None or device_code != device["code"]:
            verdict = reject_integrity(200, {"error": "incorrect_device_code",
                                             "error_description": "The device_code provided is not valid."})
        elif now >= device["expires"]:
            verdict = reject_validity("EXPIRED_BEFORE_USE", 200, {
                "error": "expired_token", "error_description": "The device_code has expired."})
        elif device["last_poll"] is not None and now - device["last_poll"] < device["interval"]:
            device["interval"] += 5
            device["last_poll"] = now
            verdict = reject_validity("SLOW_DOWN", 200, {
                "error": "slow_down", "error_description": "Too many requests have been made in the same timeframe.",
                "interval": device["interval"]})
        elif now < device["approved_at"]:
            device["last_poll"] = now
            verdict = accept({"error": "authorization_pending", "error_description": "The authorization request "
                              "is still pending.", "interval": device["interval"]})
        else:
            access = token(env.np_random, 30, "gho_")
            env.fam["tokens"].append(access)
            verdict = accept({"access_token": env.issue("access_token", access), "token_type": "bearer",
                              "scope": "repo"})
        return env.present({"device_code": "device_code"}, verdict)

    def tool_get_user(self, env: ContractEnv, access_token: str) -> Any:
        if access_token in env.fam["tokens"]:
            verdict = accept({"login": "octocat", "id": 583231})
        else:
            verdict = reject_integrity(401, {"message": "Bad credentials",
                                             "documentation_url": "https://docs.github.com/rest"})
        return env.present({"access_token": "access_token"}, verdict, final=True)
