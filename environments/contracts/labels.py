"""Failure labels: what went wrong with an observation contract, named after what real APIs report.

Each label carries a one-line explanation (fed back to the agent in feedback mode) and the
public source of the behaviour it names. ``HEADLINE_ORDER`` fixes which label an episode is
reported under when several axes fail: missing, then integrity, then validity, then goal.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Label:
    name: str
    axis: str  # integrity | validity | goal | none
    explanation: str
    source: str


_LABELS = [
    Label("SUCCESS", "none", "Every contract was honoured and the goal was reached.", "-"),
    Label("MISSING_TOKEN", "integrity", "A required artifact was not sent at all.",
          "RFC 6750 3.1 (invalid_request); S3 AuthorizationQueryParametersError"),
    Label("VISIBLE_TEXT_MISMATCH", "integrity",
          "The visible text of a link was used instead of its href; the text is shortened.",
          "published ContractBench label; HTML anchor semantics (WHATWG HTML 4.6)"),
    Label("TRUNCATED", "integrity", "The artifact was cut short; only a prefix of it was sent.",
          "S3 SignatureDoesNotMatch on a cut presigned URL (github.com/aws/aws-sdk-js/issues/1099)"),
    Label("AUTOLINK_TRAILING", "integrity",
          "Trailing punctuation (')', '.', '>') was glued to the artifact, as markdown auto-linkers do.",
          "SigV4 verifiers reject a trailing ')' (specs/contracts.md library facts)"),
    Label("URL_DECODED", "integrity", "The artifact was percent-decoded (%2B, %2F, %3D turned into + / =).",
          "Azure SAS 'Signature did not match' on unencoded sig (github.com/Azure/azure-storage-ruby/issues/217)"),
    Label("HTML_ESCAPED", "integrity", "HTML entities were written into the artifact ('&' became '&amp;').",
          "SigV4: '&amp;' splits the canonical query (specs/contracts.md library facts)"),
    Label("RESERIALISED", "integrity",
          "A JSON body was parsed and re-serialised: same value, different bytes, so the HMAC over the raw body fails.",
          "Stripe 'No signatures found matching the expected signature for payload' (stripe webhook docs)"),
    Label("WHITESPACE", "integrity", "Whitespace or a newline was inserted into the artifact.",
          "raw bytes differ; curl refuses such a URL (error 3), although urllib.parse.urlsplit silently drops '\\n'"),
    Label("CASE_CHANGED", "integrity", "The letter case of the artifact was changed.",
          "SigV4 signature is lower-case hex; a case change is SignatureDoesNotMatch"),
    Label("PADDING_LOST", "integrity", "Base64 '=' padding was stripped from the artifact.",
          "PyJWT DecodeError 'Invalid crypto padding'; RFC 4648 3.2"),
    Label("UNICODE_NORMALISED", "integrity",
          "The artifact was Unicode-normalised (NFC/NFKC); the code points, and so the bytes, changed.",
          "HMAC over raw UTF-8 bytes (GitHub 'Validating webhook deliveries')"),
    Label("PARAMETER_APPENDED", "integrity", "A query or form parameter was appended to the artifact after it was signed.",
          "CloudFront canned policy covers the query string; SigV4 and GCS V4 sign every query parameter (docs/contracts.md "
          "issuer rules)"),
    Label("PARAMETER_DUPLICATED", "integrity", "A parameter of the artifact was repeated.",
          "ambiguous parameters (OWASP WSTG-INPV-04 HTTP parameter pollution); S3 AuthorizationQueryParametersError, "
          "GCS MalformedSecurityHeader"),
    Label("PARAMETER_DROPPED", "integrity", "A parameter of the artifact was removed.",
          "S3 AuthorizationQueryParametersError ('Query-string authentication version 4 requires ...'); Azure 'Signature "
          "fields not well formed.'"),
    Label("EXTENDED", "integrity", "Bytes were added before or after the artifact.",
          "HMAC / signature over the exact bytes (SigV4, Slack v0, Stripe-Signature)"),
    Label("ENCODING_CHANGED", "integrity",
          "The artifact was re-encoded (percent-encoded again or differently, base64 turned into base64url).",
          "RFC 3986 2.4 (percent-encode once); RFC 4648 4-5 (base64 vs base64url alphabets)"),
    Label("INVISIBLE_CHARACTER", "integrity",
          "An invisible character (zero-width space, BOM, soft hyphen) was inserted into the artifact.",
          "Unicode format characters (category Cf), Unicode TR36 security considerations; raw bytes differ"),
    Label("HOMOGLYPH", "integrity", "Letters were replaced by look-alike letters of another alphabet.",
          "Unicode TR39 confusables; raw bytes differ"),
    Label("SMART_QUOTES", "integrity", "Straight quotes were replaced by typographic (curly) quotes.",
          "RFC 8259 7 (JSON strings are delimited by U+0022); HMAC over raw bytes (Stripe, GitHub webhooks)"),
    Label("MUTATED_TOKEN", "integrity",
          "Characters inside the artifact were changed, inserted or removed (most of it kept).",
          "published ContractBench label MUTATED_TOKEN; S3 SignatureDoesNotMatch"),
    Label("WRONG_VALUE", "integrity", "The value sent is not the artifact that was issued.",
          "S3 SignatureDoesNotMatch; OAuth invalid_grant; AWS InvalidClientTokenId"),
    Label("EXPIRED_BEFORE_USE", "validity", "The artifact was used after it expired; get a fresh one right before use.",
          "S3 AccessDenied 'Request has expired'; STS ExpiredToken; RFC 6749 invalid_grant"),
    Label("NOT_YET_VALID", "validity", "The artifact was used before its start time (nbf / st).",
          "PyJWT ImmatureSignatureError; Azure 'Signature not valid in the specified time frame'"),
    Label("REPLAYED", "validity", "A single-use artifact was used a second time.",
          "ACME badNonce (RFC 8555 6.5); AADSTS54005 code already redeemed; Turnstile timeout-or-duplicate"),
    Label("REVOKED_TOKEN", "validity",
          "A rotated refresh token was reused, so the issuer revoked the whole token family.",
          "RFC 9700 4.14.2; auth0 refresh token rotation (reuse detection)"),
    Label("SLOW_DOWN", "validity", "The agent polled faster than the interval the issuer set.",
          "RFC 8628 3.5 slow_down; GitHub device flow docs"),
    Label("RATE_LIMITED", "validity", "The agent retried before the Retry-After the server set had elapsed.",
          "RFC 6585 4 (429 Too Many Requests) and RFC 9110 10.2.3 Retry-After; AWS ThrottlingException"),
    Label("BACKOFF_VIOLATION", "validity", "The agent retried sooner than the exponential backoff the service asks for.",
          "S3 503 SlowDown 'Please reduce your request rate.' with SDK exponential backoff (AWS SDKs and Tools "
          "reference, retry behavior); published ContractBench label"),
    Label("SCHEDULED_UNAVAILABLE", "validity", "The final call was made during an announced maintenance window.",
          "RFC 9110 15.6.4 503 Service Unavailable with Retry-After; published ContractBench label"),
    Label("STALE_PRECONDITION", "validity",
          "A precondition (ETag, fencing token) was stale: the resource changed after it was read.",
          "RFC 9110 13.1.1 412 Precondition Failed; S3 PreconditionFailed"),
    Label("PARAMETER_MISMATCH", "validity",
          "The artifact was resent with different request parameters than it was issued for.",
          "Stripe idempotency_error; Google AIP-158 page token with changed request"),
    Label("SHORTCUT_TAKEN", "goal", "The required steps before the final call were not all done.",
          "published ContractBench label"),
    Label("GOAL_NOT_MET", "goal", "The task's final call never succeeded (gave up or ran out of budget).",
          "published ContractBench label OTHER"),
]

LABELS: dict[str, Label] = {label.name: label for label in _LABELS}
INTEGRITY_LABELS = tuple(n for n, lab in LABELS.items() if lab.axis == "integrity")
VALIDITY_LABELS = tuple(n for n, lab in LABELS.items() if lab.axis == "validity")
HEADLINE_ORDER = tuple(n for n in LABELS if n != "SUCCESS")


def headline(labels: list[str]) -> str:
    """The one label an episode is reported under (first in HEADLINE_ORDER), or SUCCESS."""
    present = set(labels)
    for name in HEADLINE_ORDER:
        if name in present:
            return name
    return "SUCCESS"


def feedback_text(name: str) -> dict[str, str]:
    label = LABELS[name]
    return {"label": name, "explanation": label.explanation}
