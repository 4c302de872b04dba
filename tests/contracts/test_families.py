"""The real issuers and verifiers, family by family: what they accept, what they reject, and the
error bodies they answer with."""

from __future__ import annotations

import json

from agentbed.tools import make_action
from environments.contracts.env import ContractEnv


def start(task: str, seed: int = 0) -> ContractEnv:
    env = ContractEnv(task)
    env.reset(seed=seed)
    return env


def call(env: ContractEnv, tool: str, **args) -> dict:
    return json.loads(env.step(make_action(tool, **args))[0])


def test_s3_presigned_put_needs_the_signed_content_type_resent_exactly():
    env = start("s3-put-basic")
    issued = call(env, "presign_put")["body"]
    wrong = call(env, "upload", url=issued["url"], content_type="text/csv")
    assert wrong["body"]["Error"]["Code"] == "SignatureDoesNotMatch"
    right = call(env, "upload", url=issued["url"], content_type=issued["content_type"])
    assert right["status"] == 200 and "ETag" in right["body"]


def test_sts_expired_credentials_answer_expired_token():
    env = start("sts-long-etl")
    creds = call(env, "get_session_token")["body"]["Credentials"]
    call(env, "run_job", job="nightly-etl")
    obs = call(env, "list_objects", access_key_id=creds["AccessKeyId"], secret_access_key=creds["SecretAccessKey"],
               session_token=creds["SessionToken"])
    assert obs["body"]["Error"]["Code"] == "ExpiredToken"


def test_azure_sas_start_time_is_enforced_then_accepted_after_waiting():
    env = start("azure-start-time")
    issued = call(env, "generate_sas")["body"]
    early = call(env, "download", url=issued["url"])
    assert "Signature not valid in the specified time frame" in early["body"]["Error"]["AuthenticationErrorDetail"]
    env2 = start("azure-start-time")
    issued = call(env2, "generate_sas")["body"]
    call(env2, "wait", seconds=61)
    assert call(env2, "download", url=issued["url"])["status"] == 200


def test_cloudfront_and_gcs_reject_a_tampered_signature():
    env = start("cloudfront-basic")
    url = call(env, "sign_cloudfront_url")["body"]["url"]
    assert call(env, "download", url=url.replace("Expires=", "Expires=1"))["body"]["Error"]["Message"] == "Access denied"
    env = start("gcs-basic")
    url = call(env, "sign_gcs_url")["body"]["url"]
    bad = call(env, "download", url=url[:-4] + "0000" if not url.endswith("0000") else url[:-4] + "1111")
    assert bad["body"]["Error"]["Code"] == "SignatureDoesNotMatch"


def test_oauth_state_mismatch_pkce_failure_and_code_reuse():
    env = start("oauth-basic")
    first = call(env, "start_authorization")["body"]
    code = call(env, "approve_in_browser", authorization_url=first["authorization_url"])["body"]["code"]
    bad_state = call(env, "exchange_code", code=code, state="x" + first["state"], code_verifier=first["code_verifier"])
    assert "CSRF Warning" in bad_state["body"]["error_description"]
    bad_pkce = call(env, "exchange_code", code=code, state=first["state"], code_verifier="A" * 43)
    assert bad_pkce["body"] == {"error": "invalid_grant", "error_description": "Code challenge failed."}
    ok = call(env, "exchange_code", code=code, state=first["state"], code_verifier=first["code_verifier"])
    assert ok["body"]["token_type"] == "Bearer"
    again = call(env, "exchange_code", code=code, state=first["state"], code_verifier=first["code_verifier"])
    assert again["body"]["error"] == "invalid_grant"
    assert "REPLAYED" in env.attempt["labels"]


def test_reusing_a_rotated_refresh_token_revokes_the_family():
    env = start("refresh-two-rotations")
    login = call(env, "login")["body"]
    rotated = call(env, "refresh", refresh_token=login["refresh_token"])["body"]
    reuse = call(env, "refresh", refresh_token=login["refresh_token"])
    assert reuse["body"]["error"] == "invalid_grant"
    revoked = call(env, "get_report", access_token=rotated["access_token"])
    assert revoked["status"] == 401 and "REVOKED_TOKEN" in env.attempt["labels"]


def test_jwt_nbf_and_signature_checks_are_pyjwts():
    env = start("jwt-not-before")
    token = call(env, "get_access_token")["body"]["access_token"]
    early = call(env, "call_api", token=token)
    assert "The token is not yet valid (nbf)" in early["body"]["WWW-Authenticate"]
    forged = call(env, "call_api", token=token[:-2] + ("AA" if not token.endswith("AA") else "BB"))
    assert forged["status"] == 401 and "NOT_YET_VALID" in env.attempt["labels"]


def test_device_flow_polling_too_fast_answers_slow_down_and_adds_five_seconds():
    env = start("device-flow-basic")
    code = call(env, "request_device_code")["body"]["device_code"]
    assert call(env, "poll_token", device_code=code)["body"]["error"] == "authorization_pending"
    fast = call(env, "poll_token", device_code=code)["body"]
    assert fast["error"] == "slow_down" and fast["interval"] == 10


def test_totp_late_code_is_rejected_leading_zero_codes_stay_strings():
    env = start("totp-log-review")
    code = call(env, "read_authenticator")["body"]["code"]
    assert len(code) == 6
    call(env, "read_logs", page=1)
    call(env, "read_logs", page=2)
    late = call(env, "verify_otp", code=code)
    assert late["body"]["message"] == "Invalid two-factor code." and "EXPIRED_BEFORE_USE" in env.attempt["labels"]


def test_stripe_construct_event_tolerance_and_reserialised_payload():
    env = start("stripe-webhook-basic")
    event = call(env, "receive_event")["body"]
    reserialised = json.dumps(json.loads(event["payload"]), ensure_ascii=False)
    bad = call(env, "forward_event", payload=reserialised, stripe_signature=event["stripe_signature"])
    assert "No signatures found matching the expected signature" in bad["body"]["error"]["message"]
    env = start("stripe-webhook-after-scan")
    event = call(env, "receive_event")["body"]
    call(env, "run_job", job="virus-scan")
    late = call(env, "forward_event", payload=event["payload"], stripe_signature=event["stripe_signature"])
    assert "Timestamp outside the tolerance zone" in late["body"]["error"]["message"]


def test_github_redelivery_of_the_same_delivery_is_a_replay():
    env = start("github-webhook-two-deliveries")
    d = call(env, "receive_delivery")["body"]
    args = {"payload": d["payload"], "x_hub_signature_256": d["x_hub_signature_256"],
            "x_github_delivery": d["x_github_delivery"]}
    assert call(env, "forward_delivery", **args)["status"] == 200
    assert call(env, "forward_delivery", **args)["status"] == 409


def test_idempotent_retry_replays_and_changed_parameters_are_an_idempotency_error():
    env = start("idempotency-retry")
    cart = call(env, "begin_checkout")["body"]
    first = call(env, "create_payment_intent", idempotency_key=cart["idempotency_key"], amount=cart["amount"],
                 currency="eur")
    assert first["body"]["error"] == "api_connection_error"
    changed = call(env, "create_payment_intent", idempotency_key=cart["idempotency_key"], amount=cart["amount"] + 1,
                   currency="eur")
    assert changed["body"]["error"]["type"] == "idempotency_error"


def test_etag_sqs_lease_acme_csrf_cookie_and_page_token_error_bodies():
    env = start("etag-concurrent-edit")
    etag = call(env, "get_document")["body"]["ETag"]
    call(env, "run_job", job="teammate-edit")
    assert call(env, "put_document", if_match=etag, line="x")["body"]["Error"]["Code"] == "PreconditionFailed"
    env = start("sqs-long-processing")
    handle = call(env, "receive_message")["body"]["ReceiptHandle"]
    assert call(env, "delete_message", receipt_handle=handle[:-2])["body"]["Error"]["Code"] == "ReceiptHandleIsInvalid"
    env = start("lease-gc-pause")
    lease = call(env, "acquire_lock")["body"]
    call(env, "run_job", job="gc-pause")
    gone = call(env, "write_record", lease_id=lease["lease_id"], fencing_token=lease["fencing_token"])
    assert gone["body"]["error"] == "etcdserver: requested lease not found"
    env = start("acme-order")
    nonce = call(env, "new_nonce")["body"]["replay_nonce"]
    call(env, "acme_post", resource="newAccount", nonce=nonce)
    assert call(env, "acme_post", resource="newOrder", nonce=nonce)["body"]["type"].endswith("badNonce")
    env = start("csrf-after-scan")
    token = call(env, "load_form")["body"]["csrf_token"]
    call(env, "run_job", job="virus-scan")
    assert call(env, "submit_form", csrf_token=token, display_name="Ada")["body"]["message"] == \
        "The CSRF token has expired."
    env = start("session-cookie-basic")
    cookie = call(env, "sign_in")["body"]["session"]
    assert call(env, "get_cart", session=cookie + "x")["body"]["error"] == "bad_session"
    env = start("page-token-expiring")
    page = call(env, "get_resources", resources_per_page=5, pagination_token="")["body"]
    changed = call(env, "get_resources", resources_per_page=4, pagination_token=page["PaginationToken"])
    assert "must match" in changed["body"]["Message"]
