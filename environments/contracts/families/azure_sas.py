"""Azure Storage service SAS (catalogue row 6).

String-to-sign and signature as in learn.microsoft.com "Create a service SAS" (version
2020-12-06): sig = Base64(HMAC-SHA256(account key, string-to-sign)), %-encoded in the URL. The
service decodes the query (so an unencoded '+' in sig becomes a space) and recomputes. Errors:
403 AuthenticationFailed with "Signature did not match. String to sign used was ..." or
"Signature not valid in the specified time frame: Start [..] - Expiry [..] - Current [..]"
(github.com/Azure/azure-storage-ruby/issues/217, github.com/microsoft/AzureStorageExplorer/issues/3219).
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote, urlencode, urlsplit

from agentbed.tools import tool
from environments.contracts.families.common import equal, random_bytes
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

ACCOUNT, CONTAINER, BLOB = "agentbedstore", "exports", "invoices/2026-01.pdf"
VERSION = "2020-12-06"
FMT = "%Y-%m-%dT%H:%M:%SZ"


def _string_to_sign(sp: str, st: str, se: str) -> str:
    resource = f"/blob/{ACCOUNT}/{CONTAINER}/{BLOB}"
    return "\n".join([sp, st, se, resource, "", "", "https", VERSION, "b", "", "", "", "", "", "", ""])


def _sign(key: bytes, sp: str, st: str, se: str) -> str:
    return base64.b64encode(hmac.new(key, _string_to_sign(sp, st, se).encode(), hashlib.sha256).digest()).decode()


def _http_date(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%a, %d %b %Y %H:%M:%S GMT")


def _failed(detail: str) -> dict[str, Any]:
    return {"Error": {"Code": "AuthenticationFailed", "Message": "Server failed to authenticate the request. Make "
                      "sure the value of Authorization header is formed correctly including the signature.",
                      "AuthenticationErrorDetail": detail}}


@register
class AzureSas(Family):
    name = "azure-sas"
    title = "Azure Storage service SAS (HMAC-SHA256, st/se window)"
    catalogue = (6,)
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
        st, se = (dt.datetime.fromtimestamp(t, dt.UTC).strftime(FMT) for t in (start, now + env.p["ttl"]))
        sig = _sign(base64.b64decode(env.fam["key"]), "r", st, se)
        query = urlencode({"sv": VERSION, "st": st, "se": se, "sr": "b", "sp": "r", "spr": "https", "sig": sig},
                          quote_via=quote, safe="")
        url = f"https://{ACCOUNT}.blob.core.windows.net/{CONTAINER}/{BLOB}?{query}"
        return env.ok({"url": env.link("url", url), "not_before": start})

    def tool_download(self, env: ContractEnv, url: str) -> Any:
        try:
            q = {k: v[0] for k, v in parse_qs(urlsplit(url).query, keep_blank_values=True).items()}
            sp, st, se, sig = q["sp"], q["st"], q["se"], q["sig"]
            start, expiry = (dt.datetime.strptime(x, FMT).replace(tzinfo=dt.UTC).timestamp() for x in (st, se))
            path_ok = urlsplit(url).path == f"/{CONTAINER}/{BLOB}"
        except (KeyError, ValueError):
            return env.present({"url": "url"}, reject_integrity(403, _failed("sv, st, se, sp or sig is missing or "
                                                                             "malformed.")), final=True)
        expected = _sign(base64.b64decode(env.fam["key"]), sp, st, se)
        now = env.clock.now()
        if not (equal(expected, sig) and path_ok):
            verdict = reject_integrity(403, _failed("Signature did not match. String to sign used was "
                                                    + _string_to_sign(sp, st, se)))
        elif not start <= now < expiry:
            label = "NOT_YET_VALID" if now < start else "EXPIRED_BEFORE_USE"
            verdict = reject_validity(label, 403, _failed(
                f"Signature not valid in the specified time frame: Start [{_http_date(start)}] - "
                f"Expiry [{_http_date(expiry)}] - Current [{_http_date(now)}]"))
        else:
            verdict = accept({"Content-Length": 48213, "Content-MD5": "q8vT0lXoJ8kP2mC6f2b4Yw=="})
        return env.present({"url": "url"}, verdict, final=True)
