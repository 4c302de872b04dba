"""Test-only RSA keys for the RSA issuers (GCS V4 service account, CloudFront, RS256 JWTs).

Key generation cannot be seeded, so the keys are generated once and stored in rsa_keys.json:
the same seed then gives the same signatures, byte for byte. ``python -m
environments.contracts.families.keys --regenerate`` writes a new set.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # cryptography loads with the first key, not with the families
    from cryptography.hazmat.primitives.asymmetric import rsa

_PATH = Path(__file__).with_name("rsa_keys.json")
NAMES = ("gcs-service-account", "cloudfront-key-pair", "jwt-issuer")


@functools.cache
def private_key(name: str) -> rsa.RSAPrivateKey:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    pem = json.loads(_PATH.read_text(encoding="utf-8"))["keys"][name]
    key = serialization.load_pem_private_key(pem.encode(), password=None)
    assert isinstance(key, rsa.RSAPrivateKey)
    return key


def public_key(name: str) -> rsa.RSAPublicKey:
    return private_key(name).public_key()


def service_account_info(name: str, email: str) -> dict[str, str]:
    """A Google service-account key file's fields around one of the stored keys (what
    ``google.oauth2.service_account.Credentials.from_service_account_info`` reads). The token URI
    is never contacted: signing a URL uses only the private key."""
    pem = json.loads(_PATH.read_text(encoding="utf-8"))["keys"][name]
    return {"type": "service_account", "project_id": "agentbed-demo", "private_key_id": name, "private_key": pem,
            "client_email": email, "client_id": "0", "token_uri": "https://oauth2.googleapis.com/token"}


def regenerate() -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    keys = {}
    for name in NAMES:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        keys[name] = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()).decode()
    note = json.loads(_PATH.read_text(encoding="utf-8"))["note"] if _PATH.exists() else ""
    _PATH.write_text(json.dumps({"note": note, "keys": keys}, indent=1), encoding="utf-8")


if __name__ == "__main__":
    if "--regenerate" in sys.argv:
        regenerate()
