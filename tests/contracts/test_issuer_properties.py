"""Property test of the URL and request verifiers against the vendors' own code.

For each issuer, valid artifacts are generated through the environment (several seeds, so keys
and times differ), and every single-field mutation is made: the host (another host of the same
service, and a foreign one), the scheme, the path, and each query parameter changed, dropped and
duplicated, plus a parameter appended; each at the artifact's time and after it expires. The
family's verifier must agree with a reference verdict computed here from the vendor's code:
slack_sdk's own ``SignatureVerifier.is_valid``; for the URL issuers, which ship no verifier, the
SDK's signer re-run at the artifact's own time over the mutated URL's own fields (botocore for
S3 and CloudFront, google-cloud-storage for GCS, azure-storage-blob for Azure), after the
service's documented addressing rule (docs/contracts.md, "Issuer rules").
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from urllib.parse import parse_qsl, unquote, urlsplit

import pytest
from azure.storage.blob._shared_access_signature import BlobSharedAccessSignature
from botocore.auth import S3SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from slack_sdk.signature import SignatureVerifier

from agentbed.clock import VirtualClock
from environments.contracts.families import azure_sas, cloudfront, gcs_v4, s3_presign
from environments.contracts.families.slack_signing import SlackSigning, VirtualSlackClock
from tests.contracts.test_families import call, start

SEEDS = (0, 1, 2)


def mutations(url: str, other_host: str) -> Iterator[tuple[str, str]]:
    """(what changed, mutated URL): one field at a time, on the raw bytes of the URL."""
    parts = urlsplit(url)
    pairs = parts.query.split("&")
    yield "host: same service", url.replace(parts.netloc, other_host, 1)
    yield "host: foreign", url.replace(parts.netloc, "downloads.example.net", 1)
    yield "scheme", url.replace(parts.scheme + "://", ("http" if parts.scheme == "https" else "https") + "://", 1)
    yield "path", parts._replace(path=parts.path[:-1] + ("x" if parts.path[-1] != "x" else "y")).geturl()
    yield "appended", url + "&x-trace=1"
    for i, pair in enumerate(pairs):
        name, _, value = pair.partition("=")
        changed = value[:-1] + ("1" if not value.endswith("1") else "2") if value else "1"
        for kind, new in (("changed", pairs[:i] + [f"{name}={changed}"] + pairs[i + 1:]),
                          ("dropped", pairs[:i] + pairs[i + 1:]),
                          ("duplicated", pairs[:i + 1] + [pair] + pairs[i + 1:])):
            yield f"{name} {kind}", parts._replace(query="&".join(new)).geturl()


def _single(query: list[tuple[str, str]]) -> bool:
    keys = [k for k, _ in query]
    return len(keys) == len(set(keys))


# -- reference verdicts from the vendors' code ------------------------------------------------
def s3_reference(url: str, now: float, access_key: str, secret: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not (parts.hostname or "").endswith(".amazonaws.com"):
        return False
    query = parse_qsl(parts.query, keep_blank_values=True)
    params = dict(query)
    if not _single(query) or any(p not in params for p in s3_presign.AUTH_PARAMS):
        return False
    if params["X-Amz-Credential"].split("/")[0] != access_key:
        return False
    try:
        signed_at = dt.datetime.strptime(params["X-Amz-Date"], "%Y%m%dT%H%M%SZ").replace(tzinfo=dt.UTC).timestamp()
        expires = int(params["X-Amz-Expires"])
    except ValueError:
        return False
    rest = "&".join(p for p in parts.query.split("&") if p.split("=")[0] not in s3_presign.AUTH_PARAMS)
    request = AWSRequest(method="GET", url=parts._replace(query=rest).geturl())
    with VirtualClock(signed_at).frozen():
        S3SigV4QueryAuth(Credentials(access_key, secret), "s3", "us-east-1", expires=expires).add_auth(request)
    resigned = dict(parse_qsl(urlsplit(request.url).query))
    return all(resigned[k] == params[k] for k in s3_presign.AUTH_PARAMS) and now <= signed_at + expires


def gcs_reference(url: str, now: float) -> bool:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme not in ("http", "https") or not (host == gcs_v4.HOST or host.endswith("." + gcs_v4.HOST)):
        return False
    query = parse_qsl(parts.query, keep_blank_values=True)
    params = dict(query)
    if not _single(query) or any(k not in params for k in gcs_v4.AUTH):
        return False
    try:
        signed_at = dt.datetime.strptime(params["X-Goog-Date"], "%Y%m%dT%H%M%SZ").replace(tzinfo=dt.UTC).timestamp()
        expires = int(params["X-Goog-Expires"])
    except ValueError:
        return False
    if not 1 <= expires <= 604800:
        return False
    virtual = host != gcs_v4.HOST
    bucket, _, name = ((host[: -len(gcs_v4.HOST) - 1] + unquote(parts.path)) if virtual
                       else unquote(parts.path).lstrip("/")).partition("/")
    blob = gcs_v4._client().bucket(bucket).blob(name)
    with VirtualClock(signed_at).frozen():
        resigned = blob.generate_signed_url(
            version="v4", expiration=dt.timedelta(seconds=expires), method="GET",
            credentials=gcs_v4._client()._credentials, api_access_endpoint=f"{parts.scheme}://{gcs_v4.HOST}",
            virtual_hosted_style=virtual, query_parameters={k: v for k, v in query if k not in gcs_v4.AUTH} or None)
    same = resigned.split("?", 1)[1].split("&")
    return sorted(same) == sorted(parts.query.split("&")) and now <= signed_at + expires \
        and (bucket, name) == (gcs_v4.BUCKET, gcs_v4.OBJECT)


def azure_reference(url: str, now: float, key: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or parts.hostname != "agentbedstore.blob.core.windows.net":
        return False
    query = parse_qsl(parts.query, keep_blank_values=True)
    q = dict(query)
    if not _single(query) or any(k not in q for k in ("sv", "sr", "sp", "se", "sig")) or q["sr"] not in ("b", "c"):
        return False
    signer = BlobSharedAccessSignature("agentbedstore", account_key=key)
    signer.x_ms_version = q["sv"]
    fields = {"permission": q["sp"], "start": q.get("st"), "expiry": q["se"], "protocol": q.get("spr")}
    token = (signer.generate_blob("exports", unquote(parts.path).split("/", 2)[2], **fields) if q["sr"] == "b"
             else signer.generate_container(unquote(parts.path).split("/")[1], **fields))
    try:
        start = dt.datetime.strptime(q["st"], azure_sas.FMT).replace(tzinfo=dt.UTC).timestamp() if "st" in q else 0
        expiry = dt.datetime.strptime(q["se"], azure_sas.FMT).replace(tzinfo=dt.UTC).timestamp()
    except ValueError:
        return False
    return (dict(parse_qsl(token))["sig"] == q["sig"] and start <= now < expiry and "r" in q["sp"]
            and (parts.scheme == "https" or "http" in q.get("spr", "").split(","))
            and unquote(parts.path) == f"/{azure_sas.CONTAINER}/{azure_sas.BLOB}")


def cloudfront_reference(url: str, now: float) -> bool:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or parts.hostname != cloudfront.DOMAIN:
        return False
    query = parse_qsl(parts.query, keep_blank_values=True)
    params = dict(query)
    if not _single(query) or any(k not in params for k in ("Expires", "Signature", "Key-Pair-Id")):
        return False
    if params["Key-Pair-Id"] != cloudfront.KEY_PAIR_ID or not params["Expires"].isdigit():
        return False
    base = "&".join(p for p in parts.query.split("&") if p.split("=")[0] not in cloudfront.SIGNING)
    resource = parts._replace(query=base).geturl()
    resigned = cloudfront.signer().generate_presigned_url(
        resource, date_less_than=dt.datetime.fromtimestamp(int(params["Expires"]), dt.UTC))
    return (dict(parse_qsl(urlsplit(resigned).query))["Signature"] == params["Signature"]
            and now < int(params["Expires"]) and parts.path == urlsplit(cloudfront.RESOURCE).path)


# -- the issuers, through the environment --------------------------------------------------------
def _s3(seed: int) -> tuple[str, float, Callable[[str, float], bool], Callable[[str, float], bool], str]:
    env = start("s3-get-basic", seed)
    url = call(env, "presign_get")["body"]["url"]
    fam = env.fam
    return (url, env.clock.now(),
            lambda u, now: s3_presign.verify_presigned(u, "GET", {}, {fam["access_key"]: fam["secret"]}, now).accepted,
            lambda u, now: s3_reference(u, now, fam["access_key"], fam["secret"]),
            "agentbed-reports-eu.s3.amazonaws.com")


def _gcs(seed: int):
    env = start("gcs-basic", seed)
    url = call(env, "sign_gcs_url")["body"]["url"]
    return (url, env.clock.now(), lambda u, now: gcs_v4.verify_url(u, now).accepted, gcs_reference,
            "agentbed-exports.storage.googleapis.com")


def _azure(seed: int):
    env = start("azure-basic", seed)
    url = call(env, "generate_sas")["body"]["url"]
    key = env.fam["key"]
    return (url, env.clock.now(), lambda u, now: azure_sas.verify_sas(u, key, now).accepted,
            lambda u, now: azure_reference(u, now, key), "otherstore.blob.core.windows.net")


def _cloudfront(seed: int):
    env = start("cloudfront-basic", seed)
    url = call(env, "sign_cloudfront_url")["body"]["url"]
    return (url, env.clock.now(), lambda u, now: cloudfront.verify(u, now).accepted, cloudfront_reference,
            "d222222abcdef8.cloudfront.net")


ISSUERS = {"s3": _s3, "gcs": _gcs, "azure": _azure, "cloudfront": _cloudfront}
# The mutations a real service accepts (the rest must all be refused).
ACCEPTED = {"s3": {"scheme"}, "gcs": {"scheme"}, "azure": {"appended"}, "cloudfront": set()}


@pytest.mark.parametrize("issuer", sorted(ISSUERS))
def test_every_single_field_mutation_gets_the_vendors_verdict(issuer):
    checked = 0
    for seed in SEEDS:
        url, issued_at, verifier, reference, other_host = ISSUERS[issuer](seed)
        assert verifier(url, issued_at) and reference(url, issued_at), "the unmutated artifact is refused"
        for what, mutated in mutations(url, other_host):
            for now in (issued_at + 1, issued_at + 100_000):
                expected = reference(mutated, now)
                assert verifier(mutated, now) == expected, (issuer, seed, what, now - issued_at, mutated)
                if now == issued_at + 1:
                    assert expected == (what in ACCEPTED[issuer]), (issuer, what)
                checked += 1
    assert checked >= 60


def _slack_mutations(delivery: dict[str, str]) -> Iterator[tuple[str, dict[str, str]]]:
    for field, value in delivery.items():
        for kind, new in (("changed", value[:-1] + ("1" if not value.endswith("1") else "2")), ("dropped", ""),
                          ("doubled", value + value), ("spaced", value + " ")):
            yield f"{field} {kind}", {**delivery, field: new}


def test_slack_verdicts_are_the_sdks_own():
    for seed in SEEDS:
        for late in (0, 301):
            env = start("slack-command-basic", seed)
            delivery = call(env, "receive_command")["body"]
            call(env, "wait", seconds=late)
            sdk = SignatureVerifier(env.fam["secret"], clock=VirtualSlackClock(env))
            for what, args in [("none", delivery), *_slack_mutations(delivery)]:
                try:
                    expected = sdk.is_valid(body=args["payload"], timestamp=args["x_slack_request_timestamp"],
                                            signature=args["x_slack_signature"])
                except ValueError:
                    expected = False
                headers = {h: args[h] for h in SlackSigning.headers}
                got = SlackSigning().verify(env, args["payload"], headers).accepted
                assert got == expected, (seed, late, what)
                assert got == (what == "none" and late == 0)
