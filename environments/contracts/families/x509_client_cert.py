"""Short-lived X.509 client certificates for mutual TLS (published pattern
"certificate-pinning-handshake"; Vault PKI / SPIFFE-style certificates that live minutes).

Issuer: a test CA signs a client certificate with cryptography's x509 builder (RSA PKCS#1 v1.5,
SHA-256, so the same seed gives the same PEM) valid from virtual now for ``ttl`` seconds. Verifier:
parse the PEM, check it was issued by the CA (``verify_directly_issued_by``) and that virtual now is
inside [not_valid_before, not_valid_after], as a TLS server does; errors use OpenSSL's verify
messages ("certificate has expired", "certificate signature failure", RFC 5280 6.1.3).
"""

from __future__ import annotations

import datetime as dt
import functools
from typing import TYPE_CHECKING, Any

from agentbed.tools import tool
from environments.contracts.families.keys import private_key
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
    from cryptography import x509

    from environments.contracts.env import ContractEnv

CA_KEY, CLIENT_KEY = "jwt-issuer", "gcs-service-account"  # test-only keys (keys.py)
EPOCH = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)


@functools.cache
def ca_certificate() -> x509.Certificate:
    from cryptography import x509  # cryptography loads with the first certificate, not with the catalog
    from cryptography.hazmat.primitives import hashes
    from cryptography.x509.oid import NameOID

    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "agentbed test CA")])
    key = private_key(CA_KEY)
    return (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(EPOCH).not_valid_after(EPOCH + dt.timedelta(days=3650))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .sign(key, hashes.SHA256()))


def _tls_error(reason: str) -> dict[str, Any]:
    return {"error": "tls_handshake_failed", "message": f"SSL: CERTIFICATE_VERIFY_FAILED certificate verify failed: "
            f"{reason}"}


@register
class X509ClientCert(Family["ContractEnv"]):
    name = "x509-client-certificate"
    title = "Short-lived X.509 client certificates for mTLS (cryptography)"
    catalogue = ()
    labels = {"EXPIRED_BEFORE_USE": None}
    final_tool = "connect_mtls"
    tools = (tool("issue_client_certificate", "Ask the internal CA for a client certificate (PEM).", cost=1.0),
             tool("connect_mtls", "Open a mutual-TLS connection to the payments gateway presenting a client "
                  "certificate (PEM).", cost=1.0, certificate_pem={"type": "string"}))

    def instruction(self, p: Any) -> str:
        return (f"issue_client_certificate, then connect_mtls(certificate_pem) with the PEM exactly as issued. "
                f"Certificates are valid for {p['ttl']} s.")

    def plan(self, p: Any) -> list[Step]:
        return [Step("issue_client_certificate", produces=("certificate_pem",), ttl="ttl"),
                Step("connect_mtls", {"certificate_pem": Ref("certificate_pem")})]

    def tool_issue_client_certificate(self, env: ContractEnv) -> Any:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.x509.oid import NameOID

        now = env.clock.datetime()
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "svc-payments-client")])
        cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(ca_certificate().subject)
                .public_key(private_key(CLIENT_KEY).public_key())
                .serial_number(int(env.np_random.integers(1, 2**62)))
                .not_valid_before(now).not_valid_after(now + dt.timedelta(seconds=env.p["ttl"]))
                .sign(private_key(CA_KEY), hashes.SHA256()))
        pem = cert.public_bytes(serialization.Encoding.PEM).decode()
        return env.ok({"certificate_pem": env.issue("certificate_pem", pem),
                       "not_after": cert.not_valid_after_utc.strftime("%Y-%m-%dT%H:%M:%SZ")})

    def tool_connect_mtls(self, env: ContractEnv, certificate_pem: str) -> Any:
        from cryptography import x509
        from cryptography.exceptions import InvalidSignature

        try:
            cert = x509.load_pem_x509_certificate(certificate_pem.encode("utf-8", "surrogatepass"))
            cert.verify_directly_issued_by(ca_certificate())
        except (ValueError, TypeError, InvalidSignature):
            verdict = reject_integrity(495, _tls_error("certificate signature failure"))
        else:
            now = env.clock.datetime()
            if now < cert.not_valid_before_utc:
                verdict = reject_validity("NOT_YET_VALID", 495, _tls_error("certificate is not yet valid"))
            elif now > cert.not_valid_after_utc:
                verdict = reject_validity("EXPIRED_BEFORE_USE", 495, _tls_error("certificate has expired"))
            else:
                verdict = accept({"connected": True, "peer": "payments-gateway.internal", "tls": "TLSv1.3"})
        return env.present({"certificate_pem": "certificate_pem"}, verdict, final=True)
