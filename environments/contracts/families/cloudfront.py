"""CloudFront signed URL with a canned policy (catalogue row 7).

Issuer: botocore's ``CloudFrontSigner`` (RSA-SHA1 via cryptography, CloudFront-safe base64:
'+' -> '-', '=' -> '_', '/' -> '~'). Verifier: rebuild the canned policy from the URL and
Expires, verify RSA-SHA1. Errors: 403 AccessDenied "Access denied"; "Missing Key-Pair-Id query
parameter or cookie value"; "Unknown Key" (repost.aws knowledge-center
cloudfront-troubleshoot-signed-url-cookies).
"""

from __future__ import annotations

import base64
import datetime as dt
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

from botocore.signers import CloudFrontSigner
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

KEY_PAIR_ID, KEY = "K2JCJMDEHXQW5F", "cloudfront-key-pair"
RESOURCE = "https://d111111abcdef8.cloudfront.net/videos/launch-keynote.mp4"


def _rsa_sha1(message: bytes) -> bytes:
    return private_key(KEY).sign(message, padding.PKCS1v15(), hashes.SHA1())


def _denied(message: str) -> dict[str, Any]:
    return {"Error": {"Code": "AccessDenied", "Message": message}}


def verify(url: str, now: float) -> Any:
    try:
        parts = urlsplit(url)
        params = dict(parse_qsl(parts.query, keep_blank_values=True))
    except ValueError:
        return reject_integrity(403, {"Error": {"Code": "MalformedPolicy", "Message": "Malformed Policy"}})
    if "Key-Pair-Id" not in params:
        return reject_integrity(403, _denied("Missing Key-Pair-Id query parameter or cookie value"))
    if params["Key-Pair-Id"] != KEY_PAIR_ID:
        return reject_integrity(403, _denied("Unknown Key"))
    try:
        expires = int(params["Expires"])
        signature = base64.b64decode(params["Signature"].replace("-", "+").replace("_", "=").replace("~", "/"),
                                     validate=True)
    except (KeyError, ValueError):
        return reject_integrity(403, {"Error": {"Code": "MalformedPolicy", "Message": "Malformed Policy"}})
    resource = f"{parts.scheme}://{parts.netloc}{parts.path}"
    signer = CloudFrontSigner(KEY_PAIR_ID, _rsa_sha1)
    policy = signer.build_policy(resource, dt.datetime.fromtimestamp(expires, dt.UTC)).encode()
    try:
        public_key(KEY).verify(signature, policy, padding.PKCS1v15(), hashes.SHA1())
    except InvalidSignature:
        return reject_integrity(403, _denied("Access denied"))
    if now >= expires:
        return reject_validity("EXPIRED_BEFORE_USE", 403, _denied("Access denied"))
    return accept({"Content-Type": "video/mp4", "Content-Length": 73400320})


@register
class CloudFrontSignedUrl(Family):
    name = "cloudfront-signed-url"
    title = "CloudFront signed URL, canned policy (botocore CloudFrontSigner, RSA-SHA1)"
    catalogue = (7,)
    final_tool = "download"
    tools = (tool("sign_cloudfront_url", "Create a CloudFront signed URL for the keynote video.", cost=1.0),
             tool("download", "HTTP GET a URL through CloudFront.", cost=2.0, url={"type": "string"}))

    def instruction(self, p: Any) -> str:
        return f"Call sign_cloudfront_url, then download(url). The URL's policy expires {p['ttl']} s after signing."

    def plan(self, p: Any) -> list[Step]:
        return [Step("sign_cloudfront_url", produces=("url",), ttl="ttl"), Step("download", {"url": Ref("url")})]

    def tool_sign_cloudfront_url(self, env: ContractEnv) -> Any:
        expires = dt.datetime.fromtimestamp(int(env.clock.now() + env.p["ttl"]), dt.UTC)
        url = CloudFrontSigner(KEY_PAIR_ID, _rsa_sha1).generate_presigned_url(RESOURCE, date_less_than=expires)
        return env.ok({"url": env.link("url", url)})

    def tool_download(self, env: ContractEnv, url: str) -> Any:
        return env.present({"url": "url"}, verify(url, env.clock.now()), final=True)
