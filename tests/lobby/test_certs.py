"""The test certificates work as a real TLS server's and client's (real gRPC over a real socket
on 127.0.0.1): a client trusting the CA gets through; one trusting another CA, or speaking
plaintext to the TLS port, is refused with the error texts the bridge turns into one line."""

from __future__ import annotations

import asyncio
import subprocess

import grpc
import pytest

from .certs import TestCerts

METHOD = "/test.Echo/Echo"
TIMEOUT = 20.0  # seconds for a call on a loaded machine; a refusal comes at once


def _echo(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
    return b"echo:" + request


async def _call(certs: TestCerts, channel_for) -> tuple[bytes | None, grpc.aio.AioRpcError | None]:
    """One call to a TLS echo server on 127.0.0.1 through the channel ``channel_for(target)``."""
    server = grpc.aio.server()
    handler = grpc.method_handlers_generic_handler("test.Echo", {"Echo": grpc.unary_unary_rpc_method_handler(_echo)})
    server.add_generic_rpc_handlers((handler,))
    port = server.add_secure_port(
        "127.0.0.1:0", grpc.ssl_server_credentials([(certs.server_key_pem, certs.server_cert_pem)])
    )
    await server.start()
    try:
        async with channel_for(f"127.0.0.1:{port}") as channel:
            try:
                return await channel.unary_unary(METHOD)(b"hi", timeout=TIMEOUT), None
            except grpc.aio.AioRpcError as e:
                return None, e
    finally:
        await server.stop(None)


def _trusting(pem: bytes, name: str | None = None):
    options = [("grpc.ssl_target_name_override", name)] if name else []
    return lambda target: grpc.aio.secure_channel(target, grpc.ssl_channel_credentials(pem), options=options)


def test_the_server_certificate_names_the_loopback_address_and_localhost(certs):
    text = subprocess.run(
        ["openssl", "x509", "-noout", "-ext", "subjectAltName", "-in", str(certs.server_cert)],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "IP Address:127.0.0.1" in text and "DNS:localhost" in text
    verify = ["openssl", "verify", "-CAfile"]
    assert subprocess.run([*verify, str(certs.ca_cert), str(certs.server_cert)], capture_output=True).returncode == 0
    assert subprocess.run([*verify, str(certs.other_ca_cert), str(certs.server_cert)], capture_output=True).returncode
    assert b"PRIVATE KEY" in certs.server_key_pem and certs.server_key.read_bytes() == certs.server_key_pem


@pytest.mark.parametrize("name", [None, "localhost"])
def test_a_client_trusting_the_ca_is_served(certs, name):
    reply, error = asyncio.run(_call(certs, _trusting(certs.ca_pem, name)))
    assert error is None and reply == b"echo:hi"


def test_a_client_trusting_another_ca_is_refused(certs):
    reply, error = asyncio.run(_call(certs, _trusting(certs.other_ca_pem)))
    assert reply is None and error is not None
    print("wrong CA:", error.code(), repr(error.details()))
    assert error.code() is grpc.StatusCode.UNAVAILABLE
    assert "CERTIFICATE_VERIFY_FAILED" in error.details() or "certificate verify failed" in error.details().lower()


def test_a_plaintext_client_at_the_tls_port_is_refused(certs):
    reply, error = asyncio.run(_call(certs, grpc.aio.insecure_channel))
    assert reply is None and error is not None
    print("plaintext:", error.code(), repr(error.details()))
    assert error.code() is grpc.StatusCode.UNAVAILABLE


def test_a_client_dialing_a_name_the_certificate_does_not_hold_is_refused(certs):
    reply, error = asyncio.run(_call(certs, _trusting(certs.ca_pem, "elsewhere.example")))
    assert reply is None and error is not None
    print("wrong name:", error.code(), repr(error.details()))
    assert error.code() is grpc.StatusCode.UNAVAILABLE
