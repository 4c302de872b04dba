"""Issuers are no more lenient than the real service or client (issue 36), one test per case,
each checked against the reference itself where it runs here: the curl binary, authlib's
authorization-server PKCE check, botocore's SigV4 signer."""

from __future__ import annotations

import os
import shutil
import subprocess
from types import SimpleNamespace
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from authlib.oauth2.rfc6749.errors import OAuth2Error
from authlib.oauth2.rfc7636.challenge import CodeChallenge
from botocore.auth import S3SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from agentbed.clock import VirtualClock
from environments.contracts.families import cloudfront, gcs_v4, oauth_pkce, s3_presign
from environments.contracts.families.common import CURL_BAD_URL, curl_refuses
from tests.contracts.test_families import call, start

NOW = 1_767_225_600.0
WRAPPED = ("\n", "\r\n", "\t", " ")  # a chat UI's line wrap, a tab, a space


def _curl() -> str:
    found = shutil.which("curl")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("curl is not installed: apt-get install curl (the sandbox client the issuers model)")
        pytest.skip("curl is not installed")
    return found


def test_curl_itself_refuses_a_wrapped_or_empty_url_before_sending_it():
    curl = _curl()
    for url in ["", *(f"https://agentbed-reports.s3.amazonaws.com/a{c}b?X-Amz-Date=1" for c in WRAPPED)]:
        run = subprocess.run([curl, "-sS", "--max-time", "2", url], capture_output=True, text=True, timeout=10)
        assert run.returncode == 3, (url, run)  # CURLE_URL_MALFORMAT: nothing was sent
        assert run.stderr.strip() == CURL_BAD_URL
        assert curl_refuses(url).body["message"] == CURL_BAD_URL


def test_every_url_issuer_refuses_a_url_with_a_line_break_as_curl_does():
    s3 = s3_presign.presign(VirtualClock(NOW), Credentials("AKIAEXAMPLE", "secret"), "GET", "a/b.csv", 300)
    verifiers = {
        "s3": (s3, lambda url: s3_presign.verify_presigned(url, "GET", {}, {"AKIAEXAMPLE": "secret"}, NOW + 1)),
        "gcs": (gcs_v4.sign_url(NOW, 600), lambda url: gcs_v4.verify_url(url, NOW + 1)),
    }
    for name, (url, verify) in verifiers.items():
        assert verify(url).accepted, name
        for c in WRAPPED:
            wrapped = url[:40] + c + url[40:]
            verdict = verify(wrapped)
            assert not verdict.integrity_ok and verdict.body == {"error": "url_malformed", "message": CURL_BAD_URL}
    env = start("cloudfront-basic")
    url = call(env, "sign_cloudfront_url")["body"]["url"]
    assert cloudfront.verify(url, env.clock.now()).accepted
    assert cloudfront.verify(url[:50] + "\n" + url[50:], env.clock.now()).body["message"] == CURL_BAD_URL


def test_a_line_break_in_a_presigned_url_now_fails_both_integrity_axes(play):
    from attacks.contracts.agents import corrupting
    from environments.contracts.agents import oracle

    record = play("s3-get-basic", corrupting(oracle(), "newline"))
    assert not record.metrics["integrity_issuer"] and not record.metrics["integrity_strict"]
    assert record.metrics["headline"] == "WHITESPACE"


def _authlib_verdict(query: str) -> str | None:
    """authlib's own authorization-server check of a PKCE authorization request."""
    request = SimpleNamespace(payload=SimpleNamespace(data={k: v[0] for k, v in parse_qs(query).items()},
                                                      datalist=parse_qs(query)))
    try:
        CodeChallenge(required=True).validate_code_challenge(SimpleNamespace(request=request), oauth_pkce.REDIRECT)
    except OAuth2Error as error:
        return error.description
    return None


@pytest.mark.parametrize("method", ["S256", "S256.", "S256 ", "s256", "plain", "SHA256"])
def test_the_authorize_step_refuses_what_authlib_refuses(method):
    env = start("oauth-basic")
    url = call(env, "start_authorization")["body"]["authorization_url"]
    changed = url.replace("code_challenge_method=S256", "code_challenge_method=" + quote(method))
    answer = call(env, "approve_in_browser", authorization_url=changed)
    expected = _authlib_verdict(urlsplit(changed).query)
    assert (expected is None) == (method in ("S256", "plain"))
    if expected is None:
        assert answer["status"] == 200 and "code" in answer["body"]
    else:
        assert answer["status"] == 400 and answer["body"] == {"error": "invalid_request",
                                                              "error_description": expected}


def test_an_empty_upload_url_is_refused_before_the_throttle_answers():
    env = start("s3-put-slowdown-backoff")
    issued = call(env, "presign_put")["body"]
    empty = call(env, "upload", url="", content_type=issued["content_type"])
    assert empty["body"] == {"error": "url_malformed", "message": CURL_BAD_URL}
    assert "upload_attempts" not in env.fam  # the request never reached S3, so S3 did not throttle it
    first = call(env, "upload", url=issued["url"], content_type=issued["content_type"])
    assert first["status"] == 503 and first["body"]["Error"]["Code"] == "SlowDown"


@pytest.mark.parametrize("per_page", [0, -1, 4, 9, 101])
def test_resources_per_page_outside_1_to_the_service_maximum_is_refused(per_page):
    env = start("page-token-three-pages")  # the service's maximum page size is 3, below the 9 resources
    answer = call(env, "get_resources", resources_per_page=per_page, pagination_token="")
    assert answer["status"] == 400 and answer["body"]["__type"] == "InvalidParameterException"
    assert answer["body"]["Message"] == "ResourcesPerPage must be between 1 and 3."
    first = call(env, "get_resources", resources_per_page=3, pagination_token="")
    assert first["status"] == 200 and first["body"]["PaginationToken"]  # one page cannot hold the listing


def _lower_escape(text: str) -> str:
    """``text`` with its first upper-case %XX escape written in lower case."""
    at = next(i for i in range(len(text) - 2) if text[i] == "%" and text[i + 1:i + 3] != text[i + 1:i + 3].lower())
    return text[:at + 1] + text[at + 1:at + 3].lower() + text[at + 3:]


def test_s3_percent_escape_case_does_not_matter_in_path_or_query_as_botocore_signs_the_key():
    creds, key = Credentials("AKIAEXAMPLE", "secret"), "reports/2026/Q3 summary+final (v2).csv"
    url = s3_presign.presign(VirtualClock(NOW), creds, "GET", key, 300)
    parts = urlsplit(url)

    def verify(u: str):
        return s3_presign.verify_presigned(u, "GET", {}, {"AKIAEXAMPLE": "secret"}, NOW + 1)

    lower_path = parts._replace(path=_lower_escape(parts.path)).geturl()
    lower_query = parts._replace(query=_lower_escape(parts.query)).geturl()
    assert lower_path != url and lower_query != url
    assert verify(url).accepted and verify(lower_path).accepted and verify(lower_query).accepted
    # botocore's signer over the decoded key (what S3 canonicalises) gives the URL's own signature,
    # so S3 computes the same canonical request whatever the case of the escapes the client sent
    request = AWSRequest(method="GET", url=f"https://{s3_presign.BUCKET}.s3.amazonaws.com/{quote(key, safe='/~')}")
    with VirtualClock(NOW).frozen():
        S3SigV4QueryAuth(creds, "s3", s3_presign.REGION, expires=300).add_auth(request)
    assert parse_qs(urlsplit(request.url).query)["X-Amz-Signature"] == parse_qs(parts.query)["X-Amz-Signature"]
    # a different key is still refused: '+' for the space (%20) names another object
    plus = parts._replace(path=parts.path.replace("%20", "+", 1)).geturl()
    assert verify(plus).body["Error"]["Code"] == "SignatureDoesNotMatch"


def test_github_webhook_signatures_are_checked_by_gidgethub_on_githubs_own_test_vector():
    from gidgethub import ValidationFailure
    from gidgethub.sansio import validate_event

    from environments.contracts.families.github_webhook import GithubWebhook

    # docs.github.com "Validating webhook deliveries": secret, payload and the expected header
    secret, payload = "It's a Secret to Everybody", "Hello, World!"
    expected = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    env = start("github-webhook-single")
    env.fam["secret"] = secret
    assert GithubWebhook().sign(env, payload)["x_hub_signature_256"] == expected
    validate_event(payload.encode(), signature=expected, secret=secret)
    assert GithubWebhook().verify(env, payload, {"x_hub_signature_256": expected}).accepted
    with pytest.raises(ValidationFailure):
        validate_event((payload + " ").encode(), signature=expected, secret=secret)
    refused = GithubWebhook().verify(env, payload + " ", {"x_hub_signature_256": expected})
    assert not refused.integrity_ok and refused.status == 401


def test_csrf_tokens_are_flask_wtfs_own():
    from flask import Flask, session
    from flask_wtf.csrf import validate_csrf

    env = start("csrf-basic")
    issued = call(env, "load_form")["body"]["csrf_token"]
    app = Flask("reference")
    app.secret_key = "x"
    with env.clock.frozen(), app.test_request_context():  # Flask-WTF in an app of its own accepts it
        session["csrf_token"] = env.fam["raw"]
        validate_csrf(issued, secret_key=env.fam["secret_key"], time_limit=env.p["ttl"])
    answers = {name: call(start("csrf-basic"), "submit_form", csrf_token=value, display_name="Ada")["body"]
               for name, value in (("missing", ""), ("invalid", issued[:-3] + "abc"))}
    assert answers["missing"]["message"] == "The CSRF token is missing."
    assert answers["invalid"]["message"] == "The CSRF token is invalid."
    assert call(env, "submit_form", csrf_token=issued, display_name="Ada")["body"] == {"saved": True}
