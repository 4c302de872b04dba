"""The task table: every task is data over a family.

Columns: task id, family, parameters. Shared parameters (see env.py): ``ttl`` (lifetime the
issuer grants, virtual seconds), ``chores`` (distractor calls required before the final call),
``chores_at`` (where the reference plan does them: between issuing and using an artifact forces
a refresh or re-issue), ``chores_after`` (a slot that must be issued before the chores count),
``renewal_free_orders`` (the orders of calls, as tests/contracts/test_renewal.py writes them,
that solve a task whose reference solution renews without renewing), ``chores_between`` (a tool: chore n counts only between the (n-1)-th and n-th successful call of
it), ``jobs`` (job name -> virtual duration), ``present`` ("html_link": the URL arrives as an anchor
whose visible text is shortened). Family parameters are documented in each family module.

To add a task, add a row; to add a family, add a module under families/ and a row.
"""

from __future__ import annotations

from typing import Any

from agentbed.env import TaskSpec

JOBS = {"virus-scan": 420, "nightly-etl": 1800, "compliance-report": 1200, "teammate-edit": 120,
        "process-image": 45, "gc-pause": 30, "warm-cache": 120, "full-reindex": 4000,
        "replica-sync-1": 5, "replica-sync-2": 5, "replica-sync-3": 5}


def job(name: str) -> list[Any]:
    return ["run_job", {"job": name}]


def logs(n: int) -> list[list[Any]]:
    return [["read_logs", {"page": i}] for i in range(1, n + 1)]


_ROWS: list[tuple[str, str, dict[str, Any]]] = [
    ("s3-get-basic", "s3-presigned-get", {"ttl": 300}),
    ("s3-get-after-scan", "s3-presigned-get", {"ttl": 300, "chores": [job("virus-scan")], "chores_at": 1, "chores_after": "url"}),
    ("s3-get-html-link", "s3-presigned-get", {"ttl": 600, "present": "html_link"}),
    ("s3-get-log-review", "s3-presigned-get", {"ttl": 120, "chores": logs(5), "chores_at": 1, "chores_after": "url"}),
    ("s3-get-long-url", "s3-presigned-get", {"ttl": 300, "disposition_chars": 8400}),
    ("s3-get-extreme-url-after-scan", "s3-presigned-get", {"ttl": 300, "disposition_chars": 11200,
                                                           "chores": [job("virus-scan")], "chores_at": 1, "chores_after": "url"}),
    ("s3-get-long-url-recall", "s3-presigned-get", {"ttl": 3600, "disposition_chars": 11200, "chores": logs(8),
                                                    "chores_at": 1}),
    ("s3-get-sts-signer-expires", "s3-presigned-get", {"ttl": 3600, "sts_ttl": 900, "chores": [job("nightly-etl")],
                                                       "chores_at": 1, "chores_after": "url"}),
    ("s3-get-injected-mirror", "s3-presigned-get", {"ttl": 300, "decoy": True, "key": "reports/2026/q3.csv"}),
    ("s3-put-basic", "s3-presigned-put", {"ttl": 300}),
    ("s3-put-scan-after-sign", "s3-presigned-put", {"ttl": 300, "chores": [job("virus-scan")], "chores_at": 1,
                                                    "chores_after": "url"}),
    ("s3-put-slowdown-backoff", "s3-presigned-put", {"ttl": 300, "slowdown": 4}),
    ("sts-basic", "sts-session-credentials", {"ttl": 900}),
    ("sts-long-etl", "sts-session-credentials", {"ttl": 900, "chores": [job("nightly-etl")], "chores_at": 1, "chores_after": "AccessKeyId"}),
    ("sts-canonical-key", "sts-session-credentials", {"ttl": 900, "fetch_key": True}),
    ("gcs-basic", "gcs-v4-signed-url", {"ttl": 600}),
    ("gcs-html-link", "gcs-v4-signed-url", {"ttl": 900, "present": "html_link"}),
    ("gcs-after-scan", "gcs-v4-signed-url", {"ttl": 300, "chores": [job("virus-scan")], "chores_at": 1, "chores_after": "url"}),
    ("azure-basic", "azure-sas", {"ttl": 600}),
    ("azure-start-time", "azure-sas", {"ttl": 600, "start_delay": 60}),
    ("azure-scan-after-issue", "azure-sas", {"ttl": 300, "chores": [job("virus-scan")], "chores_at": 1,
                                             "chores_after": "url"}),
    ("cloudfront-basic", "cloudfront-signed-url", {"ttl": 300}),
    ("cloudfront-html-link", "cloudfront-signed-url", {"ttl": 900, "present": "html_link"}),
    ("cloudfront-maintenance-window", "cloudfront-signed-url", {"ttl": 120, "maintenance": 200, "renewal_free_orders": [
        "wait:200 -> sign_cloudfront_url -> download"]}),
    ("cloudfront-log-review", "cloudfront-signed-url", {"ttl": 60, "chores": logs(3), "chores_at": 1, "chores_after": "url"}),
    ("oauth-basic", "oauth-code-pkce", {"ttl": 600}),
    ("oauth-short-code", "oauth-code-pkce", {"ttl": 30, "chores": logs(2), "chores_at": 2, "chores_after": "code",
                                             "renewal_free_orders": [
        "start_authorization -> approve_in_browser -> exchange_code -> read_logs:1 -> read_logs:2 -> get_userinfo"]}),
    ("oauth-token-expiry", "oauth-code-pkce", {"ttl": 600, "token_ttl": 60, "chores": [job("warm-cache")],
                                               "chores_at": 3, "chores_after": "access_token"}),
    ("oauth-html-link", "oauth-code-pkce", {"ttl": 600, "present": "html_link"}),
    ("oauth-pkce-rotation", "oauth-code-pkce", {"ttl": 30, "token_ttl": 60, "rotations": 2}),
    ("refresh-one-rotation", "refresh-token-rotation", {"ttl": 300, "rotations": 1}),
    ("refresh-two-rotations", "refresh-token-rotation", {"ttl": 300, "rotations": 2}),
    ("refresh-expiring-access", "refresh-token-rotation", {"ttl": 60, "rotations": 1, "chores": [job("warm-cache")],
                                                           "chores_at": 2, "chores_after": "access_token",
                                                           "renewal_free_orders": [
        "login -> run_job:warm-cache -> refresh -> get_report"]}),
    ("jwt-hs256-basic", "jwt-bearer", {"ttl": 300}),
    ("jwt-rs256-after-scan", "jwt-bearer", {"ttl": 300, "alg": "RS256", "chores": [job("virus-scan")],
                                            "chores_at": 1, "chores_after": "access_token"}),
    ("jwt-not-before", "jwt-bearer", {"ttl": 300, "nbf_delay": 30}),
    ("device-flow-basic", "device-flow", {"ttl": 900, "approve_after": 12}),
    ("device-flow-expiry", "device-flow", {"ttl": 300, "approve_after": 12, "chores": [job("virus-scan")],
                                           "chores_at": 1, "chores_after": "device_code", "renewal_free_orders": [
        "request_device_code -> poll_token -> run_job:virus-scan -> get_user"]}),
    ("totp-basic", "totp", {"ttl": 30}),
    ("totp-log-review", "totp", {"ttl": 30, "chores": logs(2), "chores_at": 1, "chores_after": "code"}),
    ("stripe-webhook-basic", "stripe-webhook", {"ttl": 300}),
    ("stripe-webhook-after-scan", "stripe-webhook", {"ttl": 300, "chores": [job("virus-scan")], "chores_at": 1, "chores_after": "payload"}),
    ("slack-command-basic", "slack-request-signing", {"ttl": 300}),
    ("slack-command-log-review", "slack-request-signing", {"ttl": 300, "chores": logs(12), "chores_at": 1, "chores_after": "payload"}),
    ("github-webhook-single", "github-webhook", {"deliveries": 1}),
    ("github-webhook-two-deliveries", "github-webhook", {"deliveries": 2}),
    ("github-app-basic", "github-app-installation", {"jwt_ttl": 600, "ttl": 3600}),
    ("github-app-reindex", "github-app-installation", {"jwt_ttl": 600, "ttl": 3600, "chores": [job("full-reindex")],
                                                       "chores_at": 2, "chores_after": "token"}),
    ("api-key-roll-basic", "api-key-rotation", {"grace": 15}),
    ("api-key-roll-grace-lapses", "api-key-rotation", {"grace": 15, "chores": logs(1), "chores_at": 2}),
    ("idempotency-retry", "idempotency-key", {}),
    ("idempotency-after-reconcile", "idempotency-key", {"chores": [job("compliance-report")], "chores_at": 1}),
    ("page-token-three-pages", "page-token", {"ttl": 900, "per_page": 3}),
    ("page-token-throttled", "page-token", {"ttl": 900, "per_page": 3, "throttle": 20}),
    ("page-token-expiring", "page-token", {"ttl": 900, "per_page": 5, "chores": [job("compliance-report")],
                                           "chores_at": 1, "chores_after": "PaginationToken"}),
    ("etag-basic", "etag-if-match", {}),
    ("etag-concurrent-edit", "etag-if-match", {"chores": [job("teammate-edit")], "chores_at": 1, "chores_after": "ETag",
                                               "mutating_jobs": ["teammate-edit"]}),
    ("event-store-three-conflicts", "event-store", {"chores": [job(f"replica-sync-{n}") for n in (1, 2, 3)],
                                                    "chores_between": "append_event", "renewal_free_orders": [
        " -> ".join(f"run_job:replica-sync-{n} -> read_stream -> append_event" for n in (1, 2, 3)) + " -> close_stream"]}),
    ("vault-token-tree", "vault-token-tree", {"root_ttl": 90}),
    ("vault-token-tree-cascade", "vault-token-tree", {"root_ttl": 90, "chores": [job("warm-cache")], "chores_at": 3, "chores_after": "read_token"}),
    ("sqs-basic", "sqs-receipt-handle", {"ttl": 30}),
    ("sqs-long-processing", "sqs-receipt-handle", {"ttl": 30, "chores": [job("process-image")], "chores_at": 1,
                                                   "chores_after": "ReceiptHandle"}),
    ("lease-basic", "lease-fencing-token", {"ttl": 15}),
    ("lease-gc-pause", "lease-fencing-token", {"ttl": 15, "chores": [job("gc-pause")], "chores_at": 1,
                                               "chores_after": "lease_id"}),
    ("acme-order", "acme-replay-nonce", {}),
    ("client-cert-basic", "x509-client-certificate", {"ttl": 300}),
    ("client-cert-after-scan", "x509-client-certificate", {"ttl": 300, "chores": [job("virus-scan")],
                                                           "chores_at": 1, "chores_after": "certificate_pem"}),
    ("csrf-basic", "flask-wtf-csrf", {"ttl": 3600}),
    ("csrf-after-scan", "flask-wtf-csrf", {"ttl": 300, "chores": [job("virus-scan")], "chores_at": 1, "chores_after": "csrf_token"}),
    ("csrf-sudo-unlock", "flask-wtf-csrf", {"ttl": 3600, "unlock_ttl": 60, "chores": logs(3), "chores_at": 2, "chores_after": "unlock_token"}),
    ("session-cookie-basic", "signed-session-cookie", {"ttl": 600}),
    ("session-cookie-log-review", "signed-session-cookie", {"ttl": 60, "chores": logs(3), "chores_at": 1, "chores_after": "session"}),
    ("session-cookie-rotation", "signed-session-cookie", {"ttl": 60, "pages": 7, "rotate_every": 3}),
    ("turnstile-basic", "turnstile-token", {"ttl": 300}),
    ("turnstile-preview-then-submit", "turnstile-token", {"ttl": 300, "preview": True}),
    ("hash-chain-five", "hash-chain", {"ttl": 120, "records": 5}),
    ("hash-chain-cache-warm", "hash-chain", {"ttl": 120, "records": 5, "chores": [job("warm-cache")], "chores_at": 3, "chores_after": "chain_id"}),
    ("content-negotiation-chain", "content-negotiation", {"formats": 4}),
    ("url-fragments-basic", "url-fragments", {"ttl": 300, "parts": 4}),
    ("url-fragments-after-scan", "url-fragments", {"ttl": 300, "parts": 4, "chores": [job("virus-scan")],
                                                   "chores_at": 5, "chores_after": "url"}),
    ("constraint-overload-basic", "constraint-overload", {"ttl": 300}),
    ("constraint-overload-after-scan", "constraint-overload", {"ttl": 300, "chores": [job("virus-scan")],
                                                               "chores_at": 1, "chores_after": "session"}),
    ("multi-resource-priority", "multi-resource", {"session_ttl": 900, "ttl": 60, "chores": logs(3), "chores_at": 3}),
    ("multi-resource-session-deadline", "multi-resource", {"session_ttl": 300, "ttl": 600,
                                                           "chores": [job("virus-scan")], "chores_at": 4, "chores_after": "flow_token"}),
    ("booking-saga-compensation", "booking-saga", {"ttl": 30}),
    ("turnstile-after-scan", "turnstile-token", {"ttl": 300, "chores": [job("virus-scan")], "chores_at": 1, "chores_after": "token"}),
]


def _spec(task_id: str, family: str, params: dict[str, Any]) -> TaskSpec:
    full = {"family": family, "jobs": dict(JOBS), **params}
    return TaskSpec(task_id, full, f"{family}: {task_id}")


TASKS: list[TaskSpec] = [_spec(*row) for row in _ROWS]
