"""CloudFront signed URLs, canned or custom policy (catalogue row 7).

Issuer: botocore's ``CloudFrontSigner`` (RSA-SHA1 via cryptography, CloudFront-safe base64:
'+' -> '-', '=' -> '_', '/' -> '~'). Verifier, as CloudFront does (docs.aws.amazon.com
AmazonCloudFront/latest/DeveloperGuide "Create a signed URL using a canned policy" / "... custom
policy"): the URL must address the distribution; the policy's resource is the URL as requested
(scheme, host, path and query string) without the signing parameters Expires, Policy, Signature
and Key-Pair-Id, so a parameter appended after signing, another scheme or host breaks it; for a
canned policy the policy is rebuilt from that resource and Expires, for a custom one it is the
decoded Policy (its Resource may use * and ? wildcards; DateLessThan, DateGreaterThan); botocore's
signer re-run over that policy must give the URL's Signature. Errors: 403 AccessDenied "Access
denied"; "Missing Key-Pair-Id query parameter or cookie value"; "Unknown Key"; MalformedPolicy
"Malformed Policy" (repost.aws knowledge-center cloudfront-troubleshoot-signed-url-cookies).
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import fnmatch
import json
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

from agentbed.tools import tool
from environments.contracts.families.common import addressed, equal, single_valued
from environments.contracts.families.keys import private_key
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
    from botocore.signers import CloudFrontSigner

    from environments.contracts.env import ContractEnv

KEY_PAIR_ID, KEY = "K2JCJMDEHXQW5F", "cloudfront-key-pair"
DOMAIN = "d111111abcdef8.cloudfront.net"
RESOURCE = f"https://{DOMAIN}/videos/launch-keynote.mp4"
SIGNING = ("Expires", "Policy", "Signature", "Key-Pair-Id")


def _rsa_sha1(message: bytes) -> bytes:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    return private_key(KEY).sign(message, padding.PKCS1v15(), hashes.SHA1())


def signer() -> CloudFrontSigner:
    # botocore loads with the first signature, not with the catalog
    from botocore.signers import CloudFrontSigner

    return CloudFrontSigner(KEY_PAIR_ID, _rsa_sha1)


def _denied(message: str) -> dict[str, Any]:
    return {"Error": {"Code": "AccessDenied", "Message": message}}


MALFORMED = {"Error": {"Code": "MalformedPolicy", "Message": "Malformed Policy"}}


def _unsafe_b64(text: str) -> bytes:
    return base64.b64decode(text.replace("-", "+").replace("_", "=").replace("~", "/"), validate=True)


def requested_resource(url: str) -> str:
    """The URL without the signing parameters: what a policy's Resource must match."""
    parts = urlsplit(url)
    rest = "&".join(pair for pair in parts.query.split("&") if pair and pair.split("=", 1)[0] not in SIGNING)
    return f"{parts.scheme}://{parts.netloc}{parts.path}" + (f"?{rest}" if rest else "")


def verify(url: str, now: float) -> Verdict:
    where = addressed(url, lambda host: host == DOMAIN)
    if not isinstance(where, tuple):
        return where
    parts, query = where
    params = dict(query)
    if "Key-Pair-Id" not in params:
        return reject_integrity(403, _denied("Missing Key-Pair-Id query parameter or cookie value"))
    if params["Key-Pair-Id"] != KEY_PAIR_ID:
        return reject_integrity(403, _denied("Unknown Key"))
    if not single_valued(query, SIGNING) or "Signature" not in params or ("Expires" in params) == ("Policy" in params):
        return reject_integrity(403, MALFORMED)
    resource = requested_resource(url)
    try:
        if "Policy" in params:
            policy = _unsafe_b64(params["Policy"]).decode()
            statement = json.loads(policy)["Statement"][0]
            condition = statement["Condition"]
            expires = int(condition["DateLessThan"]["AWS:EpochTime"])
            start = int(condition.get("DateGreaterThan", {}).get("AWS:EpochTime", 0))
            covers = fnmatch.fnmatchcase(resource, statement.get("Resource", "*"))
            resigned = signer().generate_presigned_url(RESOURCE, policy=policy)
        else:
            expires, start, covers = int(params["Expires"]), 0, True
            resigned = signer().generate_presigned_url(resource, date_less_than=dt.datetime.fromtimestamp(expires,
                                                                                                           dt.UTC))
    except (KeyError, ValueError, TypeError, IndexError, AttributeError, binascii.Error, UnicodeDecodeError):
        return reject_integrity(403, MALFORMED)
    expected = dict(parse_qsl(urlsplit(resigned).query))["Signature"]
    if not equal(expected, params["Signature"]) or not covers:
        return reject_integrity(403, _denied("Access denied"))
    if now >= expires or now < start:
        return reject_validity("EXPIRED_BEFORE_USE" if now >= expires else "NOT_YET_VALID", 403,
                               _denied("Access denied"))
    if urlsplit(resource).path != urlsplit(RESOURCE).path:
        return reject_integrity(404, {"Error": {"Code": "NoSuchKey", "Message": "The specified key does not exist."}})
    return accept({"Content-Type": "video/mp4", "Content-Length": 73400320})


@register
class CloudFrontSignedUrl(Family["ContractEnv"]):
    name = "cloudfront-signed-url"
    title = "CloudFront signed URL, canned policy over the full URL (botocore CloudFrontSigner, RSA-SHA1)"
    catalogue = (7,)
    labels = {"EXPIRED_BEFORE_USE": None}
    final_tool = "download"
    tools = (tool("sign_cloudfront_url", "Create a CloudFront signed URL for the keynote video.", cost=1.0),
             tool("download", "HTTP GET a URL through CloudFront.", cost=2.0, url={"type": "string"}))

    def instruction(self, p: Any) -> str:
        return f"Call sign_cloudfront_url, then download(url). The URL's policy expires {p['ttl']} s after signing."

    def plan(self, p: Any) -> list[Step]:
        return [Step("sign_cloudfront_url", produces=("url",), ttl="ttl"), Step("download", {"url": Ref("url")})]

    def tool_sign_cloudfront_url(self, env: ContractEnv) -> Any:
        expires = dt.datetime.fromtimestamp(int(env.clock.now() + env.p["ttl"]), dt.UTC)
        resource = RESOURCE + (f"?{env.p['query']}" if env.p.get("query") else "")
        url = signer().generate_presigned_url(resource, date_less_than=expires)
        return env.ok({"url": env.link("url", url)})

    def tool_download(self, env: ContractEnv, url: str) -> Any:
        return env.present({"url": "url"}, verify(url, env.clock.now()), final=True)
