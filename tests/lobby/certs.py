"""Certificates made in the test: a CA, a server certificate it signed for 127.0.0.1 and
localhost, and a second CA that signed nothing of ours (a bot trusting it must refuse the lobby).

Keys are ECDSA P-256 (fast to make, and what gRPC's TLS takes as well as RSA). Each certificate
is valid from an hour ago (clocks that differ a little) for a day.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

SERVER_NAMES = ("127.0.0.1", "localhost")  # what a bot on this machine dials


@dataclass(frozen=True)
class TestCerts:
    """The files (in one folder) and their PEM bytes."""

    __test__ = False  # not a test class, whatever pytest thinks of its name

    ca_cert: Path  # the CA a bot trusts (``arbiter connect --ca``)
    server_cert: Path  # the lobby's certificate, signed by that CA (``lobby.tls.cert``)
    server_key: Path  # its private key (``lobby.tls.key``)
    other_ca_cert: Path  # an unrelated CA: a bot trusting only it must fail the handshake
    ca_pem: bytes
    server_cert_pem: bytes
    server_key_pem: bytes
    other_ca_pem: bytes


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _validity(builder: x509.CertificateBuilder) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return builder.not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))


def _ca(common_name: str) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = _key()
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(_name(common_name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )  # fmt: skip
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    )
    return key, _validity(builder).sign(key, hashes.SHA256())


def _server(
    ca_key: ec.EllipticCurvePrivateKey, ca: x509.Certificate, names: tuple[str, ...]
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = _key()
    alt: list[x509.GeneralName] = []
    for name in names:
        try:
            alt.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            alt.append(x509.DNSName(name))
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(names[0]))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .add_extension(x509.SubjectAlternativeName(alt), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
    )
    return key, _validity(builder).sign(ca_key, hashes.SHA256())


def _cert_pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def make_certs(folder: Path, names: tuple[str, ...] = SERVER_NAMES) -> TestCerts:
    """A CA, a server certificate and key it signed for ``names`` (IP addresses and DNS names,
    each a subjectAltName entry), and an unrelated CA, written to ``folder`` (made if missing)."""
    folder.mkdir(parents=True, exist_ok=True)
    ca_key, ca = _ca("Barbu Arena test CA")
    server_key, server = _server(ca_key, ca, names)
    _, other_ca = _ca("Some other CA")
    pems = {
        "ca.pem": _cert_pem(ca),
        "server.pem": _cert_pem(server),
        "server.key": _key_pem(server_key),
        "other-ca.pem": _cert_pem(other_ca),
    }
    for file, pem in pems.items():
        (folder / file).write_bytes(pem)
    (folder / "server.key").chmod(0o600)
    return TestCerts(
        ca_cert=folder / "ca.pem",
        server_cert=folder / "server.pem",
        server_key=folder / "server.key",
        other_ca_cert=folder / "other-ca.pem",
        ca_pem=pems["ca.pem"],
        server_cert_pem=pems["server.pem"],
        server_key_pem=pems["server.key"],
        other_ca_pem=pems["other-ca.pem"],
    )
