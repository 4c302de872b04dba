"""JWT bearer tokens with exp / nbf (catalogue rows 13, 36).

Issuer and verifier: PyJWT (HS256 with a per-episode secret, or RS256 with the test RSA key),
both run under the virtual clock so ``exp``/``nbf``/``iat`` are virtual. Errors are PyJWT's
exception messages inside RFC 6750 WWW-Authenticate invalid_token answers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentbed.tools import tool
from environments.contracts.families.common import token
from environments.contracts.families.keys import private_key, public_key
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

AUDIENCE = "https://api.example.com"


def _invalid(description: str) -> dict[str, Any]:
    return {"WWW-Authenticate": f'Bearer error="invalid_token", error_description="{description}"'}


@register
class JwtBearer(Family["ContractEnv"]):
    name = "jwt-bearer"
    title = "JWT access tokens, exp/nbf (PyJWT)"
    catalogue = (13, 36)
    labels = {"EXPIRED_BEFORE_USE": None, "NOT_YET_VALID": "nbf_delay"}
    final_tool = "call_api"
    tools = (tool("get_access_token", "Client credentials grant: a signed JWT access token.", cost=1.0),
             tool("call_api", "GET /v1/orders with Authorization: Bearer <token>.", cost=1.0, token={"type": "string"}))

    def setup(self, env: ContractEnv, rng: Any) -> dict[str, Any]:
        return {"secret": token(rng, 32)}

    def _keys(self, env: ContractEnv) -> tuple[Any, Any, str]:
        if env.p.get("alg", "HS256") == "RS256":
            return private_key("jwt-issuer"), public_key("jwt-issuer"), "RS256"
        return env.fam["secret"], env.fam["secret"], "HS256"

    def instruction(self, p: Any) -> str:
        nbf = f" Tokens are not valid before {p['nbf_delay']} s after issue (nbf)." if p.get("nbf_delay") else ""
        return f"Call get_access_token, then call_api(token). Tokens expire {p['ttl']} s after issue (exp).{nbf}"

    def plan(self, p: Any) -> list[Step]:
        return [Step("get_access_token", produces=("access_token", "not_before"), ttl="ttl"),
                Step("call_api", {"token": Ref("access_token")}, wait_for="not_before")]

    def tool_get_access_token(self, env: ContractEnv) -> Any:
        import jwt  # PyJWT loads with the first token, not with the catalog

        signing, _, alg = self._keys(env)
        now = int(env.clock.now())
        nbf = now + int(env.p.get("nbf_delay", 0))
        claims = {"iss": "https://auth.example.com/", "sub": "svc-reporting", "aud": AUDIENCE, "iat": now,
                  "nbf": nbf, "exp": now + int(env.p["ttl"]), "jti": token(env.np_random, 12)}
        with env.clock.frozen():
            encoded = jwt.encode(claims, signing, algorithm=alg)
        return env.ok({"access_token": env.issue("access_token", encoded), "token_type": "Bearer",
                       "expires_in": env.p["ttl"], "not_before": nbf})

    def tool_call_api(self, env: ContractEnv, token: str) -> Any:
        import jwt

        _, verifying, alg = self._keys(env)
        try:
            with env.clock.frozen():
                jwt.decode(token, verifying, algorithms=[alg], audience=AUDIENCE)
            verdict = accept({"orders": [{"id": "ord_1001", "total": 4200}]})
        except jwt.ExpiredSignatureError as exc:
            verdict = reject_validity("EXPIRED_BEFORE_USE", 401, _invalid(str(exc)))
        except jwt.ImmatureSignatureError as exc:
            verdict = reject_validity("NOT_YET_VALID", 401, _invalid(str(exc)))
        except jwt.PyJWTError as exc:
            verdict = reject_integrity(401, _invalid(str(exc)))
        return env.present({"access_token": "token"}, verdict, final=True)
