import pytest

from .certs import TestCerts, make_certs


@pytest.fixture
def certs(tmp_path) -> TestCerts:
    """A CA, a server certificate it signed for 127.0.0.1 and localhost, and an unrelated CA
    (tests.lobby.certs), in ``tmp_path / "certs"``."""
    return make_certs(tmp_path / "certs")
