"""GitHub App authentication: an RS256 app JWT exchanged for an installation token (catalogue
rows 15-16).

The app JWT is made with PyJWT (RS256, iat 60 s in the past, exp at most 10 minutes ahead, iss =
app id) under the virtual clock and verified the same way; the installation token (ghs_...) lives
1 hour (expires_at). Error bodies: 401 "'Expiration time' claim ('exp') must be a numeric value
representing the future time at which the assertion expires" and 401 "Bad credentials"
(github.com/sigmavirus24/github3.py/issues/1050, github.com/hub4j/github-api/issues/941).
"""

from __future__ import annotations

import datetime as dt
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

APP_ID = "123456"
DOCS = "https://docs.github.com/rest"
EXP_MESSAGE = ("'Expiration time' claim ('exp') must be a numeric value representing the future time at which the "
               "assertion expires")


@register
class GithubAppToken(Family["ContractEnv"]):
    name = "github-app-installation"
    title = "GitHub App JWT (RS256) -> installation token (1 h)"
    catalogue = (15, 16)
    labels = {"EXPIRED_BEFORE_USE": None}
    final_tool = "list_repo_issues"
    tools = (
        tool("create_app_jwt", "Sign a GitHub App JWT with the app's private key.", cost=1.0),
        tool("create_installation_token", "POST /app/installations/{id}/access_tokens with Bearer <app JWT>.",
             cost=1.0, app_jwt={"type": "string"}),
        tool("list_repo_issues", "GET /repos/octo-org/agentbed/issues with token <installation token>.", cost=1.0,
             installation_token={"type": "string"}),
    )

    def setup(self, env: ContractEnv, rng: Any) -> dict[str, Any]:
        return {"tokens": {}}

    def instruction(self, p: Any) -> str:
        return ("create_app_jwt, exchange it with create_installation_token(app_jwt), then list_repo_issues("
                "installation_token). App JWTs live 10 minutes; installation tokens 1 hour.")

    def plan(self, p: Any) -> list[Step]:
        return [Step("create_app_jwt", produces=("app_jwt",), ttl="jwt_ttl"),
                Step("create_installation_token", {"app_jwt": Ref("app_jwt")}, produces=("token",), ttl="ttl",
                     renew=0),
                Step("list_repo_issues", {"installation_token": Ref("token")})]

    def tool_create_app_jwt(self, env: ContractEnv) -> Any:
        import jwt  # PyJWT loads with the first token, not with the catalog

        now = int(env.clock.now())
        claims = {"iat": now - 60, "exp": now + int(env.p["jwt_ttl"]), "iss": APP_ID}
        with env.clock.frozen():
            encoded = jwt.encode(claims, private_key("jwt-issuer"), algorithm="RS256")
        return env.ok({"app_jwt": env.issue("app_jwt", encoded)})

    def tool_create_installation_token(self, env: ContractEnv, app_jwt: str) -> Any:
        import jwt

        try:
            with env.clock.frozen():
                jwt.decode(app_jwt, public_key("jwt-issuer"), algorithms=["RS256"], issuer=APP_ID)
        except jwt.ExpiredSignatureError:
            verdict = reject_validity("EXPIRED_BEFORE_USE", 401, {"message": EXP_MESSAGE, "documentation_url": DOCS})
        except jwt.PyJWTError:
            verdict = reject_integrity(401, {"message": "A JSON web token could not be decoded",
                                             "documentation_url": DOCS})
        else:
            value = token(env.np_random, 27, "ghs_")
            expires = env.clock.now() + env.p["ttl"]
            env.fam["tokens"][value] = expires
            verdict = accept({"token": env.issue("token", value), "expires_at": dt.datetime.fromtimestamp(
                expires, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")})
        return env.present({"app_jwt": "app_jwt"}, verdict)

    def tool_list_repo_issues(self, env: ContractEnv, installation_token: str) -> Any:
        expires = env.fam["tokens"].get(installation_token)
        bad = {"message": "Bad credentials", "documentation_url": DOCS}
        if expires is None:
            verdict = reject_integrity(401, bad)
        elif env.clock.now() >= expires:
            verdict = reject_validity("EXPIRED_BEFORE_USE", 401, bad)
        else:
            verdict = accept([{"number": 42, "title": "Flaky test in ci / test (3.11)"}])
        return env.present({"token": "installation_token"}, verdict, final=True)
