"""The URL issuers' verifiers check what the real services check: host, scheme, path, every
signed parameter, and the URL's own version / resource / protocol parameters (issue 21's cases).
Artifacts are made by the vendors' SDKs (azure-storage-blob, google-cloud-storage, botocore,
slack_sdk); the property test in test_issuer_properties.py covers every single-field mutation."""

from __future__ import annotations

import datetime as dt
import socket
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest
from azure.storage.blob import generate_container_sas

from environments.contracts.families import azure_sas, cloudfront, gcs_v4
from environments.contracts.families.slack_signing import BOLT_401
from tests.contracts.test_families import call, start

NOW = 1_767_225_600.0


def _set(url: str, name: str, value: str) -> str:
    parts = urlsplit(url)
    query = [(k, value if k == name else v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    return parts._replace(query=urlencode(query)).geturl()


def test_gcs_refuses_another_host_and_accepts_http_as_the_xml_api_does():
    url = gcs_v4.sign_url(NOW, 600)
    assert gcs_v4.verify_url(url, NOW + 1).accepted
    assert gcs_v4.verify_url(url.replace("https://", "http://"), NOW + 1).accepted  # scheme is not signed
    elsewhere = gcs_v4.verify_url(url.replace("storage.googleapis.com", "storage.example.com"), NOW + 1)
    assert not elsewhere.integrity_ok and elsewhere.body["error"] == "could_not_resolve_host"
    virtual = gcs_v4.verify_url(url.replace("storage.googleapis.com/agentbed-exports",
                                            "agentbed-exports.storage.googleapis.com"), NOW + 1)
    assert virtual.body["Error"]["Code"] == "SignatureDoesNotMatch"  # the host is signed
    assert gcs_v4.verify_url(gcs_v4.sign_url(NOW, 600, virtual=True), NOW + 1).accepted
    appended = gcs_v4.verify_url(url + "&alt=media", NOW + 1)
    assert appended.body["Error"]["Code"] == "SignatureDoesNotMatch"
    assert gcs_v4.verify_url(gcs_v4.sign_url(NOW, 600, query={"alt": "media"}), NOW + 1).accepted


def test_gcs_sdk_signs_locally_without_any_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the SDK tried to open a connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    url = gcs_v4.sign_url(NOW, 60)
    assert "X-Goog-Signature=" in url and gcs_v4.verify_url(url, NOW).accepted


def test_azure_honours_and_re_verifies_the_urls_own_sv_sr_and_spr():
    key = azure_sas.base64.b64encode(b"k" * 64).decode()
    url = azure_sas.blob_url("agentbedstore.blob.core.windows.net", azure_sas.issue_token(key, NOW, NOW + 600))
    assert azure_sas.verify_sas(url, key, NOW + 1).accepted
    for name, value in (("sv", "2015-04-05"), ("sr", "c"), ("spr", "https,http")):
        verdict = azure_sas.verify_sas(_set(url, name, value), key, NOW + 1)
        assert verdict.body["Error"]["AuthenticationErrorDetail"].startswith("Signature did not match"), name
    assert azure_sas.verify_sas(url.replace("https://", "http://"), key, NOW + 1).body["Error"]["Code"] \
        == "AuthorizationProtocolMismatch"
    assert azure_sas.verify_sas(url.replace("agentbedstore.", "otherstore."), key, NOW + 1).status == 502
    both = azure_sas.blob_url("agentbedstore.blob.core.windows.net",
                              azure_sas.issue_token(key, NOW, NOW + 600, protocol="https,http"), scheme="http")
    assert azure_sas.verify_sas(both, key, NOW + 1).accepted  # spr=https,http signed by the SDK: http is fine
    container = generate_container_sas("agentbedstore", "exports", account_key=key, permission="r",
                                       expiry=dt.datetime.fromtimestamp(NOW + 600, dt.UTC))
    assert azure_sas.verify_sas(azure_sas.blob_url("agentbedstore.blob.core.windows.net", container), key,
                                NOW + 1).accepted  # sr=c: a container SAS covers the blob


def test_cloudfront_policy_resource_includes_the_query_string():
    expires = dt.datetime.fromtimestamp(NOW + 300, dt.UTC)
    with_query = cloudfront.signer().generate_presigned_url(cloudfront.RESOURCE + "?quality=hd", date_less_than=expires)
    assert cloudfront.verify(with_query, NOW).accepted
    plain = cloudfront.signer().generate_presigned_url(cloudfront.RESOURCE, date_less_than=expires)
    assert not cloudfront.verify(plain + "&quality=hd", NOW).integrity_ok  # appended after signing
    assert not cloudfront.verify(plain.replace("https://", "http://"), NOW).integrity_ok
    custom = cloudfront.signer().generate_presigned_url(
        cloudfront.RESOURCE, policy=cloudfront.signer().build_policy(cloudfront.RESOURCE + "*", expires))
    assert cloudfront.verify(custom.replace(".mp4?", ".mp4?quality=hd&"), NOW).accepted


@pytest.mark.parametrize("change", ["signature", "timestamp", "late"])
def test_slack_answers_as_bolt_does(change):
    env = start("slack-command-basic")
    delivery = call(env, "receive_command")["body"]
    args = dict(delivery)
    if change == "signature":
        args["x_slack_signature"] = args["x_slack_signature"][:-1] + "0"
    elif change == "timestamp":
        args["x_slack_request_timestamp"] = "soon"
    else:
        call(env, "wait", seconds=301)
    obs = call(env, "forward_command", **args)
    assert obs["status"] == 401 and obs["body"] == BOLT_401
