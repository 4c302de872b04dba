"""Azure Storage service SAS for one blob (catalogue row 6).

Issuer: azure-storage-blob's ``generate_blob_sas`` (account key, sp=r, st/se from the virtual
clock, spr=https; sv is the SDK's own service version). Verifier, as the Blob service does
(learn.microsoft.com "Create a service SAS"):

* the host names the storage account (``<account>.blob.core.windows.net``); another host is not
  the service; the canonicalised resource is built from the URL's own host and path;
* the URL's own ``sv``, ``sr`` and ``spr`` are honoured: the string-to-sign is rebuilt in the
  layout of the URL's ``sv`` (the SDK's layout for 2020-12-06 and later, the documented older
  layouts for 2015-04-05 to 2020-10-02), for the resource ``sr`` names (``b`` the blob, ``c`` its
  container), and ``sig`` is compared with the SDK's signature over it (``generate_blob_sas`` /
  ``generate_container_sas``' signer re-run with the URL's own fields); every signed field (sp, st, se,
  sip, spr, sv, sr, si, ses, rscc, rscd, rsce, rscl, rsct) takes part, so changing one breaks sig;
* then st <= now < se (UTC), the protocol (``spr=https`` refuses http) and the permission (``r``).
Errors (JSON-rendered XML bodies): 403 AuthenticationFailed with "Signature did not match. String
to sign used was ...", "Signature not valid in the specified time frame: Start [..] - Expiry [..]
- Current [..]" or "Signature fields not well formed."; 403 AuthorizationProtocolMismatch; 403
AuthorizationPermissionMismatch (learn.microsoft.com "Blob Storage error codes";
github.com/Azure/azure-storage-ruby/issues/217, github.com/microsoft/AzureStorageExplorer/issues/3219).
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, quote, unquote

from agentbed.tools import tool
from environments.contracts.families.common import addressed, equal, random_bytes, single_valued
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

ACCOUNT, CONTAINER, BLOB = "agentbedstore", "exports", "invoices/2026-01.pdf"
HOST_SUFFIX = ".blob.core.windows.net"
FMT = "%Y-%m-%dT%H:%M:%SZ"
CLIENT_IP = "203.0.113.10"  # the sandbox's egress address, checked against a signed ``sip``
SIGNED = ("sv", "sr", "sp", "st", "se", "sip", "spr", "si", "ses", "rscc", "rscd", "rsce", "rscl", "rsct", "sig")
CURRENT_LAYOUT = "2020-12-06"  # first version whose string-to-sign is the SDK's (adds ses)
OLDEST = "2015-04-05"          # first version with sip and spr in the string-to-sign
_OVERRIDES = {"rscc": "cache_control", "rscd": "content_disposition", "rsce": "content_encoding",
              "rscl": "content_language", "rsct": "content_type"}


def blob_url(host: str, token: str, scheme: str = "https") -> str:
    return f"{scheme}://{host}/{CONTAINER}/{quote(BLOB, safe='/~')}?{token}"


def issue_token(key: str, start: float, expiry: float, protocol: str = "https") -> str:
    """The SDK's SAS token for the blob (the query string, without '?')."""
    from azure.storage.blob import generate_blob_sas  # imported when used: the SDK loads in ~0.4 s

    st, se = (dt.datetime.fromtimestamp(t, dt.UTC) for t in (start, expiry))
    return generate_blob_sas(ACCOUNT, CONTAINER, BLOB, account_key=key, permission="r", start=st, expiry=se,
                             protocol=protocol)


def _legacy_string_to_sign(q: dict[str, str], resource: str) -> str:
    """The documented string-to-sign of versions before 2020-12-06 (no signedEncryptionScope;
    before 2018-11-09 also no signedResource and signedSnapshotTime)."""
    fields = [q.get("sp", ""), q.get("st", ""), q.get("se", ""), resource, q.get("si", ""), q.get("sip", ""),
              q.get("spr", ""), q["sv"]]
    if q["sv"] >= "2018-11-09":
        fields += [q.get("sr", ""), ""]
    fields += [q.get(k, "") for k in _OVERRIDES]
    return "\n".join(fields)


def expected_signature(key: str, account: str, q: dict[str, str]) -> tuple[str, str]:
    """(sig, string-to-sign) for the URL's own signed fields, in the layout of its ``sv``."""
    resource = f"/blob/{account}/{CONTAINER}" + (f"/{BLOB}" if q["sr"] == "b" else "")
    if q["sv"] < CURRENT_LAYOUT:
        sts = _legacy_string_to_sign(q, resource)
        return base64.b64encode(hmac.new(base64.b64decode(key), sts.encode(), hashlib.sha256).digest()).decode(), sts
    from azure.storage.blob._shared_access_signature import BlobSharedAccessSignature

    seen: list[str] = []
    signer = BlobSharedAccessSignature(account, account_key=key)
    signer.x_ms_version = q["sv"]  # the SDK signs its own version; re-verify with the URL's
    fields: dict[str, Any] = dict(permission=q.get("sp"), start=q.get("st"), expiry=q.get("se"), ip=q.get("sip"),
                  protocol=q.get("spr"), policy_id=q.get("si"), encryption_scope=q.get("ses"), sts_hook=seen.append,
                  **{arg: q.get(name) for name, arg in _OVERRIDES.items()})
    token = (signer.generate_blob(CONTAINER, BLOB, **fields) if q["sr"] == "b"
             else signer.generate_container(CONTAINER, **fields))
    return dict(parse_qsl(token))["sig"], seen[-1]


def _http_date(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%a, %d %b %Y %H:%M:%S GMT")


def _failed(detail: str, code: str = "AuthenticationFailed") -> dict[str, Any]:
    message = ("Server failed to authenticate the request. Make sure the value of Authorization header is formed "
               "correctly including the signature." if code == "AuthenticationFailed" else detail)
    return {"Error": {"Code": code, "Message": message,
                      **({"AuthenticationErrorDetail": detail} if code == "AuthenticationFailed" else {})}}


def _parse_time(text: str) -> float:
    return dt.datetime.strptime(text, FMT).replace(tzinfo=dt.UTC).timestamp()


def verify_sas(url: str, key: str, now: float) -> Verdict:
    """The Blob service's answer to a GET of ``url`` at ``now`` (see the module docstring)."""
    where = addressed(url, lambda host: host == ACCOUNT + HOST_SUFFIX)
    if not isinstance(where, tuple):
        return where
    parts, query = where
    q = dict(query)
    malformed = reject_integrity(403, _failed("Signature fields not well formed."))
    if not single_valued(query, SIGNED) or any(k not in q for k in ("sv", "sr", "sp", "se", "sig")):
        return malformed
    if q["sr"] not in ("b", "c") or not OLDEST <= q["sv"] or "si" in q:  # no stored access policies exist
        return malformed
    try:
        start = _parse_time(q["st"]) if "st" in q else None
        expiry = _parse_time(q["se"])
        sig, sts = expected_signature(key, ACCOUNT, q)
    except (ValueError, TypeError):
        return malformed
    blob = unquote(parts.path)
    wrong_resource = blob != f"/{CONTAINER}/{BLOB}"
    if not equal(sig, q["sig"]) or (q["sr"] == "b" and wrong_resource):
        return reject_integrity(403, _failed("Signature did not match. String to sign used was " + sts))
    if (start is not None and now < start) or now >= expiry:
        label = "NOT_YET_VALID" if start is not None and now < start else "EXPIRED_BEFORE_USE"
        begin = _http_date(start) if start is not None else ""
        return reject_validity(label, 403, _failed(f"Signature not valid in the specified time frame: Start [{begin}]"
                                                   f" - Expiry [{_http_date(expiry)}] - Current [{_http_date(now)}]"))
    if parts.scheme == "http" and "http" not in q.get("spr", "https,http").split(","):
        return reject_integrity(403, _failed("This request is not authorized to perform this operation using this "
                                             "protocol.", "AuthorizationProtocolMismatch"))
    if "r" not in q["sp"] or ("sip" in q and q["sip"] != CLIENT_IP):
        code = "AuthorizationPermissionMismatch" if "r" not in q["sp"] else "AuthorizationSourceIPMismatch"
        what = "permission" if "r" not in q["sp"] else "source IP"
        return reject_integrity(403, _failed(f"This request is not authorized to perform this operation using this "
                                             f"{what}.", code))
    if wrong_resource:
        return reject_integrity(404, {"Error": {"Code": "BlobNotFound", "Message": "The specified blob does not "
                                                "exist."}})
    return accept({"Content-Length": 48213, "Content-MD5": "q8vT0lXoJ8kP2mC6f2b4Yw=="})


@register
class AzureSas(Family["ContractEnv"]):
    name = "azure-sas"
    title = "Azure Storage service SAS (azure-storage-blob generate_blob_sas; sv/sr/spr honoured)"
    catalogue = (6,)
    labels = {"EXPIRED_BEFORE_USE": None, "NOT_YET_VALID": "start_delay"}
    final_tool = "download"
    tools = (tool("generate_sas", "Create a read SAS URL for the invoice blob.", cost=1.0),
             tool("download", "HTTP GET a URL and return the blob's digest.", cost=2.0, url={"type": "string"}))

    def setup(self, env: ContractEnv, rng: Any) -> dict[str, Any]:
        return {"key": base64.b64encode(random_bytes(rng, 64)).decode()}

    def instruction(self, p: Any) -> str:
        start = f" The SAS starts {p['start_delay']} s after it is issued (st)." if p.get("start_delay") else ""
        return f"Call generate_sas, then download(url). The SAS expires {p['ttl']} s after issue (se).{start}"

    def plan(self, p: Any) -> list[Step]:
        return [Step("generate_sas", produces=("url", "not_before"), ttl="ttl"),
                Step("download", {"url": Ref("url")}, wait_for="not_before")]

    def tool_generate_sas(self, env: ContractEnv) -> Any:
        now = env.clock.now()
        start = now + env.p.get("start_delay", 0)
        url = blob_url(ACCOUNT + HOST_SUFFIX, issue_token(env.fam["key"], start, now + env.p["ttl"]))
        return env.ok({"url": env.link("url", url), "not_before": start})

    def tool_download(self, env: ContractEnv, url: str) -> Any:
        return env.present({"url": "url"}, verify_sas(url, env.fam["key"], env.clock.now()), final=True)
