"""STS temporary credentials (catalogue row 4).

Issuer: GetSessionToken-shaped credentials (AccessKeyId, SecretAccessKey, SessionToken,
Expiration). The agent passes them back; the caller signs a ListObjectsV2 request with them
using botocore's SigV4 header signer (the real SDK path) under the virtual clock, and the
service re-signs with the secret it issued. Expired session: 403 ExpiredToken; unknown or
corrupted token: 403 InvalidClientTokenId (docs.aws.amazon.com STS API reference).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from agentbed.tools import tool
from environments.contracts.families.common import equal, token
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

URL = "https://agentbed-reports.s3.amazonaws.com/?list-type=2"


def _sign(clock: Any, creds: Credentials) -> str:
    request = AWSRequest(method="GET", url=URL)
    with clock.frozen():
        SigV4Auth(creds, "s3", "us-east-1").add_auth(request)
    return request.headers["Authorization"]


@register
class StsSessionCredentials(Family):
    name = "sts-session-credentials"
    title = "STS temporary credentials signing SigV4 requests (botocore)"
    catalogue = (4,)
    final_tool = "list_objects"
    tools = (
        tool("get_session_token", "AWS STS GetSessionToken: temporary credentials.", cost=1.0),
        tool("list_objects", "List the bucket, signing the request with the given credentials.", cost=2.0,
             access_key_id={"type": "string"}, secret_access_key={"type": "string"}, session_token={"type": "string"}),
    )

    def setup(self, env: ContractEnv, rng: Any) -> dict[str, Any]:
        return {"sessions": {}, "rng_salt": token(rng, 8)}

    def instruction(self, p: Any) -> str:
        return ("Call get_session_token, then list_objects with AccessKeyId, SecretAccessKey and SessionToken. "
                f"The credentials expire after {p['ttl']} s (DurationSeconds).")

    def plan(self, p: Any) -> list[Step]:
        return [Step("get_session_token", produces=("AccessKeyId", "SecretAccessKey", "SessionToken"), ttl="ttl"),
                Step("list_objects", {"access_key_id": Ref("AccessKeyId"), "secret_access_key": Ref("SecretAccessKey"),
                                      "session_token": Ref("SessionToken")})]

    def tool_get_session_token(self, env: ContractEnv) -> Any:
        rng = env.np_random
        key_id = "ASIA" + token(rng, 12).upper().replace("-", "Q").replace("_", "Z")[:16]
        secret, session = token(rng, 30), "IQoJb3JpZ2luX2VjE" + token(rng, 180)
        expires = env.clock.now() + env.p["ttl"]
        env.fam["sessions"][key_id] = {"secret": secret, "token": session, "expires": expires}
        return env.ok({"Credentials": {
            "AccessKeyId": env.issue("AccessKeyId", key_id),
            "SecretAccessKey": env.issue("SecretAccessKey", secret),
            "SessionToken": env.issue("SessionToken", session),
            "Expiration": dt.datetime.fromtimestamp(expires, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}})

    def tool_list_objects(self, env: ContractEnv, access_key_id: str, secret_access_key: str, session_token: str) -> Any:
        sent = _sign(env.clock, Credentials(access_key_id, secret_access_key, session_token))
        session = env.fam["sessions"].get(access_key_id)
        invalid = {"Error": {"Code": "InvalidClientTokenId",
                             "Message": "The security token included in the request is invalid."}}
        if session is None or not equal(session["token"], session_token):
            verdict = reject_integrity(403, invalid)
        elif not equal(_sign(env.clock, Credentials(access_key_id, session["secret"], session["token"])), sent):
            verdict = reject_integrity(403, {"Error": {
                "Code": "SignatureDoesNotMatch", "Message": "The request signature we calculated does not match "
                "the signature you provided. Check your key and signing method."}})
        elif env.clock.now() >= session["expires"]:
            verdict = reject_validity("EXPIRED_BEFORE_USE", 400, {"Error": {
                "Code": "ExpiredToken", "Message": "The provided token has expired."}})
        else:
            verdict = accept({"Name": "agentbed-reports", "KeyCount": 3,
                              "Contents": [{"Key": f"reports/2026/{m}.csv"} for m in ("jul", "aug", "sep")]})
        slots = {"AccessKeyId": "access_key_id", "SecretAccessKey": "secret_access_key", "SessionToken": "session_token"}
        return env.present(slots, verdict, final=True)
