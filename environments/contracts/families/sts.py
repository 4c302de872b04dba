"""STS temporary credentials (catalogue row 4).

Issuer: GetSessionToken-shaped credentials (AccessKeyId, SecretAccessKey, SessionToken,
Expiration). The agent passes them back; the caller signs a ListObjectsV2 request with them
using botocore's SigV4 header signer (the real SDK path) under the virtual clock, and the
service re-signs with the secret it issued. Expired session: 403 ExpiredToken; unknown or
corrupted token: 403 InvalidClientTokenId (docs.aws.amazon.com STS API reference).
Task param ``fetch_key``: after listing, the agent GETs the latest report, whose key has
characters SigV4 canonicalisation percent-encodes (space, '+', parentheses, non-ASCII); the
request is signed over the canonical URI of the key the agent sends, which must be the listed
key byte for byte (else 404 NoSuchKey).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from agentbed.tools import tool
from environments.contracts.families.common import equal, token
from environments.contracts.families.s3_presign import credentials
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
    from botocore.credentials import Credentials

    from environments.contracts.env import ContractEnv

URL = "https://agentbed-reports.s3.amazonaws.com/?list-type=2"


LATEST_KEY = "reports/2026/Q3 résumé+final (v2).csv"


def _sign(clock: Any, creds: Credentials, url: str = URL) -> str:
    from botocore.auth import SigV4Auth  # botocore loads with the first signature, not with the catalog
    from botocore.awsrequest import AWSRequest

    request = AWSRequest(method="GET", url=url)
    with clock.frozen():
        SigV4Auth(creds, "s3", "us-east-1").add_auth(request)
    return request.headers["Authorization"]


@register
class StsSessionCredentials(Family["ContractEnv"]):
    name = "sts-session-credentials"
    title = "STS temporary credentials signing SigV4 requests (botocore)"
    catalogue = (4,)
    labels = {"EXPIRED_BEFORE_USE": None}
    final_tool = "list_objects"
    alternatives = {"mixed:get_object(*key*)": "an object key is not bound to the credentials that listed it; "
                    "any live session of the same role may fetch it"}
    tools = (
        tool("get_session_token", "AWS STS GetSessionToken: temporary credentials.", cost=1.0),
        tool("list_objects", "List the bucket, signing the request with the given credentials.", cost=2.0,
             access_key_id={"type": "string"}, secret_access_key={"type": "string"}, session_token={"type": "string"}),
        tool("get_object", "GET one object by key, signing the request with the given credentials.", cost=2.0,
             access_key_id={"type": "string"}, secret_access_key={"type": "string"}, session_token={"type": "string"},
             key={"type": "string", "maxLength": 1024}),
    )

    def setup(self, env: ContractEnv, rng: Any) -> dict[str, Any]:
        return {"sessions": {}, "rng_salt": token(rng, 8)}

    def instruction(self, p: Any) -> str:
        then = (" then get_object the LatestReport's Key with the same credentials." if p.get("fetch_key") else "")
        return ("Call get_session_token, then list_objects with AccessKeyId, SecretAccessKey and SessionToken,"
                f"{then} The credentials expire after {p['ttl']} s (DurationSeconds).")

    def plan(self, p: Any) -> list[Step]:
        creds = {"access_key_id": Ref("AccessKeyId"), "secret_access_key": Ref("SecretAccessKey"),
                 "session_token": Ref("SessionToken")}
        steps = [Step("get_session_token", produces=("AccessKeyId", "SecretAccessKey", "SessionToken"), ttl="ttl"),
                 Step("list_objects", creds, produces=("Key",))]
        return steps + ([Step("get_object", {**creds, "key": Ref("Key")})] if p.get("fetch_key") else [])

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

    def _verdict(self, env: ContractEnv, access_key_id: str, secret_access_key: str, session_token: str,
                  url: str) -> Any:
        """None if the request signed with these credentials is authentic and in time, else the error."""
        sent = _sign(env.clock, credentials(access_key_id, secret_access_key, session_token), url)
        session = env.fam["sessions"].get(access_key_id)
        invalid = {"Error": {"Code": "InvalidClientTokenId",
                             "Message": "The security token included in the request is invalid."}}
        if session is None or not equal(session["token"], session_token):
            return reject_integrity(403, invalid)
        if not equal(_sign(env.clock, credentials(access_key_id, session["secret"], session["token"]), url), sent):
            return reject_integrity(403, {"Error": {
                "Code": "SignatureDoesNotMatch", "Message": "The request signature we calculated does not match "
                "the signature you provided. Check your key and signing method."}})
        if env.clock.now() >= session["expires"]:
            return reject_validity("EXPIRED_BEFORE_USE", 400, {"Error": {
                "Code": "ExpiredToken", "Message": "The provided token has expired."}})
        return None

    def tool_list_objects(self, env: ContractEnv, access_key_id: str, secret_access_key: str, session_token: str) -> Any:
        verdict = self._verdict(env, access_key_id, secret_access_key, session_token, URL)
        if verdict is None:
            keys = [f"reports/2026/{m}.csv" for m in ("jul", "aug", "sep")]
            body: dict[str, Any] = {"Name": "agentbed-reports", "KeyCount": len(keys),
                                    "Contents": [{"Key": k} for k in keys]}
            if env.p.get("fetch_key"):
                body["LatestReport"] = {"Key": env.issue("Key", LATEST_KEY), "Size": 48213}
            verdict = accept(body)
        slots = {"AccessKeyId": "access_key_id", "SecretAccessKey": "secret_access_key", "SessionToken": "session_token"}
        return env.present(slots, verdict, final=not env.p.get("fetch_key"))

    def tool_get_object(self, env: ContractEnv, access_key_id: str, secret_access_key: str, session_token: str,
                        key: str) -> Any:
        url = "https://agentbed-reports.s3.amazonaws.com/" + quote(key, safe="/~")
        verdict = self._verdict(env, access_key_id, secret_access_key, session_token, url)
        if verdict is None:
            verdict = (accept({"Key": key, "ContentLength": 48213}) if key == LATEST_KEY else reject_integrity(
                404, {"Error": {"Code": "NoSuchKey", "Message": "The specified key does not exist.", "Key": key[:200]}}))
        slots = {"AccessKeyId": "access_key_id", "SecretAccessKey": "secret_access_key", "SessionToken": "session_token",
                 "Key": "key"}
        return env.present(slots, verdict, final=True)
