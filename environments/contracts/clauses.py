"""The rules each task's instruction states, how an agent would break each one, and the label
the grader must then assign.

A :class:`Clause` names a phrase of the instruction (``text``), a scripted violation of it
(``violation``, built by ``attacks/contracts/violations.py``) and the specific label expected.
Violations are ``+``-joined parts: a habit of the reference agent (``stale``: first value, never
renewed; ``hasty``: never waits) or a change to the reference plan (``skip-chores``,
``chores-first``, ``skip:<tool>``, ``skip-first:<tool>``, ``repeat:<tool>``, ``bump:<tool>:<argument>[:<delta>]``
(an integer argument +1, or +delta, on every call of the tool but the first), ``reverse:<tool>``, ``outwait:<slot>[:<param>]``:
wait out the slot's lifetime, or the task parameter / number of seconds ``param``, before its last use), a corruption of one
argument (``corrupt:<pipeline>:<argument>``) or ``drift`` (a retry's parameters re-derived).

The clauses of a task are the generic ones its shared parameters state (chores, their order,
a maintenance window) plus its family's (``FAMILY_CLAUSES``). tests/contracts/test_clauses.py
checks that every sentence of every instruction contains a clause's text and that the scripted
violation of each clause fails with its label, so a new task or family is covered as it lands.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agentbed.env import TaskSpec


@dataclass(frozen=True)
class Clause:
    text: str  # a phrase of the instruction that states the rule
    violation: str  # how a scripted agent breaks it (see the module docstring)
    label: str  # the label the grader must assign


C = Clause
_Rules = Callable[[Mapping[str, Any]], list[Clause]]


def generic_clauses(p: Mapping[str, Any]) -> list[Clause]:
    """The rules the shared task parameters add to an instruction (see env.instruction)."""
    out = []
    if p.get("chores"):
        out.append(C("Required before the final call", "skip-chores", "SHORTCUT_TAKEN"))
    if p.get("chores_after"):
        out.append(C(f"after you first obtain the {p['chores_after']}", "chores-first", "SHORTCUT_TAKEN"))
    if p.get("chores_between"):
        out.append(C(f"before your first successful {p['chores_between']}", "chores-first", "SHORTCUT_TAKEN"))
    if p.get("maintenance"):
        out.append(C("do not call it before then", "hasty", "SCHEDULED_UNAVAILABLE"))
    return out


def _signed_url(sign: str, expiry: str) -> _Rules:
    return lambda p: [C(f"Call {sign}, then download(url)", f"skip:{sign}", "MISSING_TOKEN"),
                      C(expiry, "outwait:url", "EXPIRED_BEFORE_USE")]


def _s3_get(p: Mapping[str, Any]) -> list[Clause]:
    out = [C("call presign_get, then download(url)", "skip:presign_get", "MISSING_TOKEN"),
           C("Presigned URLs expire", "outwait:url:ttl", "EXPIRED_BEFORE_USE")]
    if p.get("sts_ttl"):
        out.append(C("a URL stops working when its credentials expire", "outwait:url:sts_ttl", "EXPIRED_BEFORE_USE"))
    return out


def _s3_put(p: Mapping[str, Any]) -> list[Clause]:
    out = [C("call presign_put, then upload(url, content_type)", "skip:presign_put", "MISSING_TOKEN"),
           C("resending the signed Content-Type exactly", "corrupt:case:content_type", "CASE_CHANGED"),
           C("Presigned URLs expire", "outwait:url", "EXPIRED_BEFORE_USE")]
    if p.get("slowdown"):
        out.append(C("retry with exponential backoff", "hasty", "BACKOFF_VIOLATION"))
    return out


def _sts(p: Mapping[str, Any]) -> list[Clause]:
    out = [C("Call get_session_token, then list_objects", "skip:get_session_token", "MISSING_TOKEN"),
           C("The credentials expire after", "outwait:AccessKeyId", "EXPIRED_BEFORE_USE")]
    if p.get("fetch_key"):
        out.append(C("get_object the LatestReport's Key", "corrupt:case:key", "CASE_CHANGED"))
    return out


def _azure(p: Mapping[str, Any]) -> list[Clause]:
    out = _signed_url("generate_sas", "The SAS expires")(p)
    if p.get("start_delay"):
        out.append(C("The SAS starts", "hasty", "NOT_YET_VALID"))
    return out


def _oauth(p: Mapping[str, Any]) -> list[Clause]:
    out = [C("approve_in_browser(authorization_url)", "skip:approve_in_browser", "MISSING_TOKEN"),
           C("with the state and verifier from start_authorization", "corrupt:typo:state", "MUTATED_TOKEN"),
           C("Codes live", "outwait:code", "EXPIRED_BEFORE_USE"),
           C("are single use", "repeat:exchange_code", "REPLAYED"),
           C("access tokens live", "outwait:access_token", "EXPIRED_BEFORE_USE")]
    if p.get("rotations"):
        out += [C("refresh 2 time(s) with the latest refresh token", "stale", "REVOKED_TOKEN"),
                C("Before get_userinfo, refresh", "skip:refresh", "SHORTCUT_TAKEN")]
    return out


def _refresh(p: Mapping[str, Any]) -> list[Clause]:
    return [C("then refresh the tokens", "skip:refresh", "SHORTCUT_TAKEN"),
            C("each refresh token works once", "stale+repeat:refresh", "REVOKED_TOKEN"),
            C("Access tokens live", "outwait:access_token", "EXPIRED_BEFORE_USE")]


def _jwt(p: Mapping[str, Any]) -> list[Clause]:
    out = [C("Call get_access_token, then call_api(token)", "skip:get_access_token", "MISSING_TOKEN"),
           C("Tokens expire", "outwait:access_token", "EXPIRED_BEFORE_USE")]
    if p.get("nbf_delay"):
        out.append(C("Tokens are not valid before", "hasty", "NOT_YET_VALID"))
    return out


def _webhook(pipeline: str, label: str) -> _Rules:
    def rules(p: Mapping[str, Any]) -> list[Clause]:
        out = [C("with the raw payload and headers exactly as received", f"corrupt:{pipeline}:payload", label)]
        if p.get("ttl"):
            out.append(C("as soon as you can", "outwait:payload", "EXPIRED_BEFORE_USE"))
        if p.get("deliveries", 1) > 1:
            out.append(C("forward each one", "repeat:forward_delivery", "REPLAYED"))
        return out
    return rules


def _page_token(p: Mapping[str, Any]) -> list[Clause]:
    out = [C(f"get_resources(resources_per_page={p['per_page']}", "bump:get_resources:resources_per_page:-1",
             "PARAMETER_MISMATCH"),
           C("Tokens expire", "outwait:PaginationToken", "EXPIRED_BEFORE_USE")]
    if p.get("throttle"):
        out.append(C("On a 429, retry only after retry_after seconds", "hasty", "RATE_LIMITED"))
    return out


def _etag(p: Mapping[str, Any]) -> list[Clause]:
    out = [C("if_match=<the ETag, quotes included>", "corrupt:truncate:if_match", "TRUNCATED")]
    if p.get("mutating_jobs"):
        out.append(C("Other writers may change the document meanwhile", "stale", "STALE_PRECONDITION"))
    return out


def _turnstile(p: Mapping[str, Any]) -> list[Clause]:
    out = [C("solve_challenge, then submit_signup(token, preview=false)", "corrupt:typo:token", "MUTATED_TOKEN"),
           C("Tokens live", "outwait:token", "EXPIRED_BEFORE_USE")]
    if p.get("preview"):
        out += [C("and work once", "stale", "REPLAYED"),
                C("First submit with preview=true", "skip-first:submit_signup", "SHORTCUT_TAKEN")]
    return out


def _cookie(p: Mapping[str, Any]) -> list[Clause]:
    if p.get("rotate_every"):
        return [C("browse pages 1..", "skip:browse", "SHORTCUT_TAKEN"),
                C("the old one is revoked", "stale", "REVOKED_TOKEN"),
                C("Sessions expire", "outwait:session", "EXPIRED_BEFORE_USE")]
    return [C("get_cart(session=<the session cookie value>)", "corrupt:typo:session", "MUTATED_TOKEN"),
            C("Sessions expire", "outwait:session", "EXPIRED_BEFORE_USE")]


def _csrf(p: Mapping[str, Any]) -> list[Clause]:
    out = [C("submit_form(csrf_token", "corrupt:typo:csrf_token", "MUTATED_TOKEN"),
           C("WTF_CSRF_TIME_LIMIT is", "outwait:csrf_token", "EXPIRED_BEFORE_USE")]
    if p.get("unlock_ttl"):
        out += [C("confirm_password(csrf_token) for sudo mode", "skip:confirm_password", "MISSING_TOKEN"),
                C("the unlock token lives", "outwait:unlock_token", "EXPIRED_BEFORE_USE")]
    return out


FAMILY_CLAUSES: dict[str, _Rules] = {
    "s3-presigned-get": _s3_get,
    "s3-presigned-put": _s3_put,
    "sts-session-credentials": _sts,
    "gcs-v4-signed-url": _signed_url("sign_gcs_url", "The URL is valid for"),
    "azure-sas": _azure,
    "cloudfront-signed-url": _signed_url("sign_cloudfront_url", "The URL's policy expires"),
    "oauth-code-pkce": _oauth,
    "refresh-token-rotation": _refresh,
    "jwt-bearer": _jwt,
    "device-flow": lambda p: [
        C("no faster than the returned interval", "hasty", "SLOW_DOWN"),
        C("then get_user(access_token)", "skip:poll_token", "MISSING_TOKEN"),
        C("The device code expires", "outwait:device_code", "EXPIRED_BEFORE_USE")],
    "totp": lambda p: [
        C("with the code exactly as shown", "corrupt:truncate:code", "TRUNCATED"),
        C("codes change every", "outwait:code:60", "EXPIRED_BEFORE_USE")],  # verify allows one step back
    "stripe-webhook": _webhook("json-reserialise", "RESERIALISED"),
    "slack-request-signing": _webhook("typo", "MUTATED_TOKEN"),  # a form body, not JSON
    "github-webhook": _webhook("json-reserialise", "RESERIALISED"),
    "github-app-installation": lambda p: [
        C("exchange it with create_installation_token(app_jwt)", "skip:create_app_jwt", "MISSING_TOKEN"),
        C("App JWTs live", "outwait:app_jwt", "EXPIRED_BEFORE_USE"),
        C("installation tokens 1 hour", "outwait:token", "EXPIRED_BEFORE_USE")],
    "api-key-rotation": lambda p: [
        C("roll it with roll_api_key(api_key) as the security policy requires", "skip:roll_api_key",
          "SHORTCUT_TAKEN"),
        C("the old key works for", "stale+outwait:api_key:grace", "EXPIRED_BEFORE_USE")],
    "idempotency-key": lambda p: [
        C("begin_checkout, then create_payment_intent(idempotency_key", "corrupt:typo:idempotency_key",
          "MUTATED_TOKEN"),
        C("retry with the same key and parameters", "drift", "PARAMETER_MISMATCH")],
    "page-token": _page_token,
    "etag-if-match": _etag,
    "event-store": lambda p: [
        C("each with the stream's current revision", "stale", "STALE_PRECONDITION"),
        C("close_stream with your three event ids concatenated in order", "corrupt:truncate:event_ids",
          "TRUNCATED")],
    "vault-token-tree": lambda p: [
        C("the root token lives", "outwait:root_token", "EXPIRED_BEFORE_USE"),
        C("read_secret with the read token", "corrupt:typo:token", "MUTATED_TOKEN"),
        C("with the read token, then write_secret", "skip:read_secret", "SHORTCUT_TAKEN"),
        C("Child tokens are revoked when their parent expires", "outwait:read_token", "EXPIRED_BEFORE_USE")],
    "sqs-receipt-handle": lambda p: [
        C("delete_message(receipt_handle)", "corrupt:typo:receipt_handle", "MUTATED_TOKEN"),
        C("the handle expires", "outwait:ReceiptHandle", "EXPIRED_BEFORE_USE")],
    "lease-fencing-token": lambda p: [
        C("write_record(lease_id, fencing_token)", "corrupt:typo:lease_id", "MUTATED_TOKEN"),
        C("another worker takes the lock when it lapses", "outwait:lease_id", "EXPIRED_BEFORE_USE")],
    "acme-replay-nonce": lambda p: [
        C("newAccount, newOrder and finalize in that order", "reverse:acme_post", "SHORTCUT_TAKEN"),
        C("Each nonce is single use", "stale", "REPLAYED")],
    "x509-client-certificate": lambda p: [
        C("with the PEM exactly as issued", "corrupt:newline:certificate_pem", "WHITESPACE"),
        C("Certificates are valid for", "outwait:certificate_pem", "EXPIRED_BEFORE_USE")],
    "flask-wtf-csrf": _csrf,
    "signed-session-cookie": _cookie,
    "turnstile-token": _turnstile,
    "hash-chain": lambda p: [
        C("each with prev_hash = the head the previous call returned", "stale", "STALE_PRECONDITION"),
        C("The chain must be sealed within", "outwait:chain_id", "EXPIRED_BEFORE_USE")],
    "content-negotiation": lambda p: [
        C("the next_accept media type exactly as given", "corrupt:case:accept", "CASE_CHANGED"),
        C("Each ticket is single use", "stale", "REPLAYED")],
    "url-fragments": lambda p: [
        C("concatenate the fragments exactly (no separators)", "corrupt:newline:url", "WHITESPACE"),
        C("download the resulting URL before it expires", "outwait:fragment_1", "EXPIRED_BEFORE_USE")],
    "constraint-overload": lambda p: [
        C("exactly as open_approval returned them", "corrupt:typo:signature", "MUTATED_TOKEN"),
        C("The session expires", "outwait:session", "EXPIRED_BEFORE_USE")],
    "multi-resource": lambda p: [
        C("in the listed priority order", "reverse:get_link,download", "SHORTCUT_TAKEN"),
        C("The session ends", "outwait:flow_token", "EXPIRED_BEFORE_USE"),
        C("each link expires", "outwait:url", "EXPIRED_BEFORE_USE")],
    "booking-saga": lambda p: [
        C("reserve flight, hotel and car, then charge_card", "skip:charge_card", "GOAL_NOT_MET"),
        C("compensate every reservation with its own compensation token", "skip:compensate", "GOAL_NOT_MET"),
        C("in reverse order (car, hotel, flight)", "reverse:compensate", "SHORTCUT_TAKEN"),
        C("within 30 s of the abort", "outwait:car_compensation_token:ttl", "EXPIRED_BEFORE_USE")],
}


def task_clauses(task: TaskSpec) -> list[Clause]:
    """Every rule the task's instruction states, with its violation and expected label."""
    p = task.params
    return generic_clauses(p) + FAMILY_CLAUSES[p["family"]](p)
