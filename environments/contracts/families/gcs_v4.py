"""GCS V4 signed URLs, GOOG4-RSA-SHA256 (catalogue row 5).

The canonical request and string-to-sign follow cloud.google.com/storage/docs/access-control/
signing-urls-manually; the signature is RSA PKCS#1 v1.5 over SHA-256 (cryptography). The
verifier re-canonicalises the received query (sorted, re-encoded) like the service does.
Errors: 400 ExpiredToken, 403 SignatureDoesNotMatch, 400 MalformedSecurityHeader
(github.com/fog/fog-google/issues/264, github.com/jschneier/django-storages/issues/1021).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, quote, urlsplit

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding

from agentbed.tools import tool
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

HOST = "storage.googleapis.com"
EMAIL = "signer@agentbed-demo.iam.gserviceaccount.com"
KEY = "gcs-service-account"


def _canonical_query(params: list[tuple[str, str]]) -> str:
    return "&".join(f"{quote(k, safe='-_.~')}={quote(v, safe='-_.~')}" for k, v in sorted(params))


def _string_to_sign(path: str, params: list[tuple[str, str]], stamp: str) -> bytes:
    canonical = "\n".join(["GET", quote(path, safe="/-_.~"), _canonical_query(params), f"host:{HOST}", "", "host",
                           "UNSIGNED-PAYLOAD"])
    scope = f"{stamp[:8]}/auto/storage/goog4_request"
    return "\n".join(["GOOG4-RSA-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()]).encode()


def sign_url(now: float, path: str, expires: int) -> str:
    stamp = dt.datetime.fromtimestamp(now, dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    params = [("X-Goog-Algorithm", "GOOG4-RSA-SHA256"),
              ("X-Goog-Credential", f"{EMAIL}/{stamp[:8]}/auto/storage/goog4_request"),
              ("X-Goog-Date", stamp), ("X-Goog-Expires", str(expires)), ("X-Goog-SignedHeaders", "host")]
    signature = private_key(KEY).sign(_string_to_sign(path, params, stamp), padding.PKCS1v15(), hashes.SHA256())
    return f"https://{HOST}{quote(path, safe='/-_.~')}?{_canonical_query(params)}&X-Goog-Signature={signature.hex()}"


def _error(status: int, code: str, message: str, details: str = "") -> dict[str, Any]:
    return {"Error": {"Code": code, "Message": message, **({"Details": details} if details else {})}}


def verify_url(url: str, now: float) -> Any:
    try:
        parts = urlsplit(url)
        query = parse_qsl(parts.query, keep_blank_values=True)
        params = dict(query)
        signature = bytes.fromhex(params.pop("X-Goog-Signature"))
        stamp = params["X-Goog-Date"]
        signed_at = dt.datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=dt.UTC).timestamp()
        expires = int(params["X-Goog-Expires"])
    except (KeyError, ValueError):
        return reject_integrity(400, _error(400, "MalformedSecurityHeader", "Your request has a malformed header.",
                                            "Missing or malformed X-Goog-Date, X-Goog-Expires or X-Goog-Signature."))
    others = [(k, v) for k, v in query if k != "X-Goog-Signature"]
    try:
        public_key(KEY).verify(signature, _string_to_sign(parts.path, others, stamp), padding.PKCS1v15(),
                               hashes.SHA256())
    except InvalidSignature:
        return reject_integrity(403, _error(403, "SignatureDoesNotMatch", "Access denied.",
                                            "The request signature we calculated does not match the signature "
                                            "you provided. Check your Google secret key and signing method."))
    if now > signed_at + expires:
        return reject_validity("EXPIRED_BEFORE_USE", 400, _error(
            400, "ExpiredToken", "The provided token has expired.",
            f"Request has expired: {dt.datetime.fromtimestamp(signed_at + expires, dt.UTC).isoformat()}"))
    return accept({})


@register
class GcsSignedUrl(Family):
    name = "gcs-v4-signed-url"
    title = "GCS V4 signed URL (GOOG4-RSA-SHA256)"
    catalogue = (5,)
    final_tool = "download"
    tools = (tool("sign_gcs_url", "Create a V4 signed URL for gs://agentbed-exports/ledger.parquet.", cost=1.0),
             tool("download", "HTTP GET a URL and return the object's digest.", cost=2.0, url={"type": "string"}))

    def instruction(self, p: Any) -> str:
        return f"Call sign_gcs_url, then download(url). The URL is valid for {p['ttl']} s."

    def plan(self, p: Any) -> list[Step]:
        return [Step("sign_gcs_url", produces=("url",), ttl="ttl"), Step("download", {"url": Ref("url")})]

    def tool_sign_gcs_url(self, env: ContractEnv) -> Any:
        url = sign_url(env.clock.now(), "/agentbed-exports/ledger.parquet", int(env.p["ttl"]))
        return env.ok({"url": env.link("url", url), "expires_in": env.p["ttl"]})

    def tool_download(self, env: ContractEnv, url: str) -> Any:
        verdict = verify_url(url, env.clock.now())
        if verdict.accepted:
            verdict = accept({"size": 5120, "md5Hash": "mMvS3u1mJg0nYc0yrkTtQg=="})
        return env.present({"url": "url"}, verdict, final=True)
