"""GCS V4 signed URLs, GOOG4-RSA-SHA256 (catalogue row 5).

Issuer: google-cloud-storage's ``Blob.generate_signed_url(version="v4")`` with a service-account
key the project generated (families/rsa_keys.json; the SDK signs locally with it, no network),
run under the virtual clock so X-Goog-Date is virtual time. Verifier, as the XML API does
(cloud.google.com/storage/docs/access-control/signed-urls, .../signing-urls-manually,
.../request-endpoints): the URL must address the service (storage.googleapis.com, path-style, or
``<bucket>.storage.googleapis.com``; the XML API serves both http and https, and the scheme is
not signed); the canonical request is rebuilt from the URL's own host, path and every query
parameter, so the SDK's signer is re-run at the URL's X-Goog-Date with the URL's X-Goog-Expires,
host, path and extra parameters, and its signature must equal X-Goog-Signature; then
X-Goog-Date + X-Goog-Expires must not have passed. Errors: 400 ExpiredToken, 403
SignatureDoesNotMatch (with StringToSign), 400 MalformedSecurityHeader
(github.com/fog/fog-google/issues/264, github.com/jschneier/django-storages/issues/1021).
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, unquote, urlsplit

from agentbed.clock import VirtualClock
from agentbed.tools import tool
from environments.contracts.families.common import addressed, equal, single_valued
from environments.contracts.families.keys import service_account_info
from environments.contracts.family import (
    Family,
    Ref,
    Step,
    Verdict,
    accept,
    register,
    reject_integrity,
    reject_validity,
)

if TYPE_CHECKING:
    from environments.contracts.env import ContractEnv

HOST = "storage.googleapis.com"
BUCKET, OBJECT = "agentbed-exports", "ledger.parquet"
EMAIL = "signer@agentbed-demo.iam.gserviceaccount.com"
KEY = "gcs-service-account"
AUTH = ("X-Goog-Algorithm", "X-Goog-Credential", "X-Goog-Date", "X-Goog-Expires", "X-Goog-SignedHeaders",
        "X-Goog-Signature")
MAX_EXPIRES = 604800  # 7 days, the V4 maximum


@functools.cache
def _client() -> Any:
    from google.cloud.storage import Client
    from google.oauth2 import service_account

    credentials = service_account.Credentials.from_service_account_info(service_account_info(KEY, EMAIL))
    return Client(project="agentbed-demo", credentials=credentials)


def sign_url(now: float, expires: int, *, scheme: str = "https", bucket: str = BUCKET, name: str = OBJECT,
             virtual: bool = False,
             query: dict[str, str] | None = None) -> str:
    """The SDK's V4 signed GET URL for ``name`` in the bucket at virtual ``now``, path-style or
    (``virtual``) virtual-hosted style."""
    client = _client()
    blob = client.bucket(bucket).blob(name)
    with VirtualClock(now).frozen():
        return blob.generate_signed_url(version="v4", expiration=dt.timedelta(seconds=expires), method="GET",
                                        credentials=client._credentials, api_access_endpoint=f"{scheme}://{HOST}",
                                        virtual_hosted_style=virtual, query_parameters=query or None)


def _error(code: str, message: str, **extra: str) -> dict[str, Any]:
    return {"Error": {"Code": code, "Message": message, **extra}}


def _string_to_sign(url: str, params: dict[str, str]) -> str:
    """What the service reports it signed (V4: algorithm, date, scope, hash of the canonical request)."""
    parts = urlsplit(url)
    canonical = "\n".join(["GET", parts.path, "&".join(sorted(parts.query.split("&"))), f"host:{parts.netloc}", "",
                           "host", "UNSIGNED-PAYLOAD"])
    scope = params.get("X-Goog-Credential", "").partition("/")[2]
    return "\n".join(["GOOG4-RSA-SHA256", params.get("X-Goog-Date", ""), scope,
                      hashlib.sha256(canonical.encode()).hexdigest()])


def verify_url(url: str, now: float) -> Verdict:
    where = addressed(url, lambda host: host == HOST or host.endswith("." + HOST))
    if not isinstance(where, tuple):
        return where
    parts, query = where
    host = parts.hostname or ""
    params = dict(query)
    malformed = reject_integrity(400, _error("MalformedSecurityHeader", "Your request has a malformed header.",
                                             Details="Missing, duplicated or malformed X-Goog-* query parameter."))
    if not single_valued(query, AUTH) or any(k not in params for k in AUTH):
        return malformed
    try:
        signed_at = dt.datetime.strptime(params["X-Goog-Date"], "%Y%m%dT%H%M%SZ").replace(tzinfo=dt.UTC).timestamp()
        expires = int(params["X-Goog-Expires"])
    except ValueError:
        return malformed
    if not 1 <= expires <= MAX_EXPIRES:
        return malformed
    extra = {k: v for k, v in query if k not in AUTH}
    virtual = host != HOST  # virtual-hosted style: the bucket is in the (signed) host
    path = unquote(parts.path)
    bucket, _, name = (f"{host[: -len(HOST) - 1]}{path}" if virtual else path.lstrip("/")).partition("/")
    if not bucket or not name:
        return reject_integrity(404, _error("NoSuchKey", "The specified key does not exist."))
    resigned = sign_url(signed_at, expires, scheme=parts.scheme, bucket=bucket, name=name, virtual=virtual,
                        query=extra)
    expected = dict(parse_qsl(urlsplit(resigned).query))
    same = all(equal(expected.get(k, ""), params[k]) for k in AUTH)
    if not same:
        return reject_integrity(403, _error(
            "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you "
            "provided. Check your Google secret key and signing method.", StringToSign=_string_to_sign(url, params)))
    if now > signed_at + expires:
        return reject_validity("EXPIRED_BEFORE_USE", 400, _error(
            "ExpiredToken", "The provided token has expired.",
            Details=f"Request has expired: {params['X-Goog-Date']}"))
    if (bucket, name) != (BUCKET, OBJECT):
        return reject_integrity(404, _error("NoSuchKey", "The specified key does not exist."))
    return accept({"size": 5120, "md5Hash": "mMvS3u1mJg0nYc0yrkTtQg=="})


@register
class GcsSignedUrl(Family["ContractEnv"]):
    name = "gcs-v4-signed-url"
    title = "GCS V4 signed URL (google-cloud-storage generate_signed_url, GOOG4-RSA-SHA256)"
    catalogue = (5,)
    labels = {"EXPIRED_BEFORE_USE": None}
    final_tool = "download"
    tools = (tool("sign_gcs_url", "Create a V4 signed URL for gs://agentbed-exports/ledger.parquet.", cost=1.0),
             tool("download", "HTTP GET a URL and return the object's digest.", cost=2.0, url={"type": "string"}))

    def instruction(self, p: Any) -> str:
        return f"Call sign_gcs_url, then download(url). The URL is valid for {p['ttl']} s."

    def plan(self, p: Any) -> list[Step]:
        return [Step("sign_gcs_url", produces=("url",), ttl="ttl"), Step("download", {"url": Ref("url")})]

    def tool_sign_gcs_url(self, env: ContractEnv) -> Any:
        url = sign_url(env.clock.now(), int(env.p["ttl"]))
        return env.ok({"url": env.link("url", url), "expires_in": env.p["ttl"]})

    def tool_download(self, env: ContractEnv, url: str) -> Any:
        return env.present({"url": "url"}, verify_url(url, env.clock.now()), final=True)
