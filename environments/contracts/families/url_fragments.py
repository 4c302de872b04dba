"""An S3 presigned URL handed out in four fragments (the published scattered-url-assembly pattern).

Issuer and verifier are the S3 SigV4 ones (s3_presign.py). The URL is split into fragments that
must be fetched in order (each answer names the next part) and concatenated byte for byte;
the download deadline is the URL's own X-Amz-Expires. The assembled URL is the byte-strict
reference, so a fragment altered, dropped or reordered is graded like a damaged URL.
Task params: ``ttl`` (X-Amz-Expires of the URL), ``parts`` (fragments, default 4).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentbed.tools import tool
from environments.contracts.families.common import token
from environments.contracts.families.s3_presign import credentials, presign, verify_presigned
from environments.contracts.family import Family, Join, Step, accept, register

if TYPE_CHECKING:
    from environments.contracts.env import ContractEnv

KEY = "exports/2026/ledger-q3.parquet"


def split(text: str, parts: int) -> list[str]:
    """``parts`` consecutive fragments of ``text`` whose concatenation is ``text``."""
    size = -(-len(text) // parts)
    return [text[i * size:(i + 1) * size] for i in range(parts)]


@register
class UrlFragments(Family["ContractEnv"]):
    name = "url-fragments"
    title = "S3 presigned URL delivered in fragments, assembled by the agent (botocore SigV4)"
    catalogue = (1,)
    labels = {"EXPIRED_BEFORE_USE": None}
    final_tool = "download"
    tools = (
        tool("request_link", "Ask for a download link; it is delivered in numbered fragments.", cost=1.0),
        tool("get_fragment", "Fetch fragment `part` (1-based, in order) of the current link.", cost=1.0,
             part={"type": "integer", "minimum": 1, "maximum": 16}),
        tool("download", "GET the assembled presigned URL.", cost=2.0, url={"type": "string"}),
    )

    def setup(self, env: ContractEnv, rng: Any) -> dict[str, Any]:
        return {"access_key": "AKIA" + token(rng, 12).upper().replace("-", "A").replace("_", "B")[:16],
                "secret": token(rng, 30), "fragments": [], "next": 1}

    def instruction(self, p: Any) -> str:
        return (f"request_link, then get_fragment for parts 1..{p.get('parts', 4)} in order, concatenate the "
                f"fragments exactly (no separators) and download the resulting URL before it expires "
                f"({p['ttl']} s after request_link).")

    def plan(self, p: Any) -> list[Step]:
        parts = p.get("parts", 4)
        slots = tuple(f"fragment_{i}" for i in range(1, parts + 1))
        return ([Step("request_link", produces=("parts",))]
                + [Step("get_fragment", {"part": i}, produces=(slot,), ttl="ttl", renew=0)
                   for i, slot in enumerate(slots, 1)]
                + [Step("download", {"url": Join(slots)})])

    def tool_request_link(self, env: ContractEnv) -> Any:
        creds = credentials(env.fam["access_key"], env.fam["secret"])
        url = env.issue("url", presign(env.clock, creds, "GET", KEY, int(env.p["ttl"])))
        env.fam.update(fragments=split(url, env.p.get("parts", 4)), next=1)
        return env.ok({"parts": len(env.fam["fragments"]), "expires_in": env.p["ttl"]})

    def tool_get_fragment(self, env: ContractEnv, part: int) -> Any:
        fragments = env.fam["fragments"]
        if not fragments:
            return env.respond(409, {"error": "no_link", "message": "Call request_link first."})
        if part != env.fam["next"]:
            return env.respond(409, {"error": "out_of_order", "message": f"Fetch part {env.fam['next']} next."})
        env.fam["next"] = part % len(fragments) + 1
        return env.ok({"part": part, "parts": len(fragments), f"fragment_{part}": fragments[part - 1]})

    def tool_download(self, env: ContractEnv, url: str) -> Any:
        verdict = verify_presigned(url, "GET", {}, {env.fam["access_key"]: env.fam["secret"]}, env.clock.now())
        if verdict.accepted:
            verdict = accept({"Key": KEY, "ContentLength": 48213})
        return env.present({"url": "url"}, verdict, final=True)
