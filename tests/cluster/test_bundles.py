"""Bundles and the checks a cluster run makes before and on a worker (no cluster needed):
content-addressed packing, the size cap naming the entrant, a safe and atomic cache, a changed
cache unpacked again, commands rewritten into the bundle, system programs checked by path and
version, the ``cluster`` key and ``--cluster`` option, an unreachable scheduler."""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
import tarfile
import zlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arbiter.errors import ConfigError, TournamentError
from arbiter.execution import bundle
from arbiter.execution.cluster import executor, shipping
from arbiter.execution.cluster.plugin import check_program
from arbiter.tournament.config import load_config, parse_config
from tests.tournament.conftest import SMOKE, cli_app


def make_bot(folder: Path) -> Path:
    (folder / "lib").mkdir(parents=True)
    (folder / "bot.py").write_text("print('hi')\n")
    (folder / "lib" / "strategy.py").write_text("X = 1\n")
    (folder / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(folder / "run.sh", 0o755)
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "bot.cpython-311.pyc").write_bytes(b"junk")
    os.symlink("lib/strategy.py", folder / "alias.py")
    return folder


def test_a_bundle_is_named_by_its_content_and_unpacks_read_only(tmp_path):
    a = make_bot(tmp_path / "a")
    b = pack = bundle.pack(a, "bot")
    os.utime(a / "bot.py", (1, 1))  # times, owners, byte-code caches do not count
    shutil.rmtree(a / "__pycache__")
    assert bundle.pack(a, "bot").digest == pack.digest
    copy = tmp_path / "copy"
    shutil.copytree(a, copy, symlinks=True)
    assert bundle.pack(copy, "bot").digest == pack.digest
    (copy / "bot.py").write_text("print('changed')\n")
    assert bundle.pack(copy, "bot").digest != pack.digest

    cache = tmp_path / "cache"
    files = bundle.unpack(b.digest, b.data, cache)
    assert files == cache / b.digest / "files"
    assert (files / "bot.py").read_text() == "print('hi')\n"
    assert os.readlink(files / "alias.py") == "lib/strategy.py"
    assert os.access(files / "run.sh", os.X_OK) and not (files / "__pycache__").exists()
    assert not os.stat(files / "bot.py").st_mode & 0o222 and not os.stat(files).st_mode & 0o222
    assert bundle.cached(b.digest, cache) == files
    assert not [p for p in cache.iterdir() if p.name.startswith(".")]  # no temporary left


def test_a_changed_cache_is_noticed_and_unpacked_again(tmp_path):
    b = bundle.pack(make_bot(tmp_path / "a"), "bot")
    cache = tmp_path / "cache"
    files = bundle.unpack(b.digest, b.data, cache)
    os.chmod(files, 0o755)
    os.chmod(files / "bot.py", 0o644)
    (files / "bot.py").write_text("print('tampered')\n")
    assert bundle.cached(b.digest, cache) is None
    files = bundle.unpack(b.digest, b.data, cache)
    assert (files / "bot.py").read_text() == "print('hi')\n" and bundle.cached(b.digest, cache) == files
    os.chmod(files / "lib", 0o755)  # (as root the read-only modes stop nothing; the manifest still notices)
    assert bundle.cached(b.digest, cache) is None
    files = bundle.unpack(b.digest, b.data, cache)
    os.chmod(files, 0o755)
    (files / "__pycache__").mkdir()  # Python's byte-code cache (bots run as root write it): not a change
    (files / "__pycache__" / "bot.cpython-311.pyc").write_bytes(b"derived")
    assert bundle.cached(b.digest, cache) == files
    (files / "extra.txt").write_text("a file a bot left")
    assert bundle.cached(b.digest, cache) is None


def test_a_folder_over_the_cap_is_refused_naming_the_entrant(tmp_path):
    folder = make_bot(tmp_path / "big")
    (folder / "weights.bin").write_bytes(b"\0" * 5000)
    with pytest.raises(
        ConfigError, match=r"entrant 'bigbot': its folder .*big holds more than .*keep the bot in a folder"
    ):
        bundle.pack(folder, "bigbot", max_bytes=4096)


def _tar(members: list[tuple[tarfile.TarInfo, bytes]]) -> tuple[str, bytes]:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for info, content in members:
            info.size = len(content) if info.isreg() else 0
            tar.addfile(info, io.BytesIO(content) if info.isreg() else None)
    raw = buffer.getvalue()
    import hashlib

    return hashlib.sha256(raw).hexdigest(), zlib.compress(raw)


def _member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, link, 0o644
    return info


@pytest.mark.parametrize(
    "members",
    [
        [(_member("../evil.py"), b"x")],
        [(_member("/etc/evil"), b"x")],
        [(_member("a/../../evil"), b"x")],
        [(_member("out", tarfile.SYMTYPE, "../../etc"), b"")],
        [(_member("abs", tarfile.SYMTYPE, "/etc"), b"")],
        [(_member("d", tarfile.SYMTYPE, "sub"), b""), (_member("sub", tarfile.DIRTYPE), b""), (_member("d/x"), b"x")],
        [(_member("dev", tarfile.CHRTYPE), b"")],
        [(_member("hard", tarfile.LNKTYPE, "x"), b"")],
    ],
    ids=["dotdot", "absolute", "inner-dotdot", "link-out", "link-absolute", "through-link", "device", "hardlink"],
)
def test_an_unsafe_bundle_is_refused_and_leaves_nothing(tmp_path, members):
    digest, data = _tar(members)
    cache = tmp_path / "cache"
    with pytest.raises(TournamentError, match="not unpacked|neither a file nor a folder"):
        bundle.unpack(digest, data, cache)
    assert not (tmp_path / "evil.py").exists() and not list(cache.iterdir())


def test_a_bundle_that_does_not_match_its_digest_is_refused(tmp_path):
    b = bundle.pack(make_bot(tmp_path / "a"), "bot")
    other = bundle.pack(tmp_path / "a" / "lib", "bot")
    with pytest.raises(TournamentError, match="damaged"):
        bundle.unpack(b.digest, other.data, tmp_path / "cache")
    with pytest.raises(TournamentError, match="damaged"):
        bundle.unpack(b.digest, b"not zlib", tmp_path / "cache")
    with pytest.raises(TournamentError, match="not a bundle digest"):
        bundle.cached("../../etc", tmp_path / "cache")


def write_league(folder: Path, command: str) -> Path:
    path = folder / "league.yaml"
    path.write_text(f"entrants:\n  - name: a\n    command: {command}\n  - name: b\n    command: python bots/bot.py\n")
    return path


def test_commands_are_rewritten_into_their_bundle(tmp_path):
    make_bot(tmp_path / "bots")
    (tmp_path / "data.txt").write_text("outside")
    config = load_config(write_league(tmp_path, "env SEED=1 python bots/bot.py --level 3 bots/lib/strategy.py"))
    bots, packs = shipping.entrant_bots(e.spec for e in config.entrants)
    assert len(packs) == 1  # both entrants' scripts live in bots/: one bundle
    a = bots["a"]
    assert a.bundle == bots["b"].bundle and a.program is None
    assert [(w.text, w.kind) for w in a.argv] == [
        ("env", "text"), ("SEED=1", "text"), ("python", "python"), ("bot.py", "file"),
        ("--level", "text"), ("3", "text"), ("lib/strategy.py", "file"),
    ]  # fmt: skip

    config = load_config(write_league(tmp_path, "python bots/bot.py ../" + tmp_path.name + "/data.txt"))
    with pytest.raises(ConfigError, match=r"entrant 'a': its command names .*data.txt, outside its folder"):
        shipping.entrant_bots(e.spec for e in config.entrants)


def test_a_system_program_is_checked_by_path_and_version_on_the_worker(tmp_path):
    make_bot(tmp_path / "bots")
    (tmp_path / "bots" / "bot.sh").write_text("exit 0\n")
    sh = shutil.which("sh")
    config = load_config(write_league(tmp_path, "sh bots/bot.sh"))
    bots, _ = shipping.entrant_bots(e.spec for e in config.entrants)
    program = bots["a"].program
    assert program is not None and program.path == os.path.abspath(sh) and program.version
    check_program(bots["a"], program, "tcp://w:1")  # the same machine: accepted
    with pytest.raises(ConfigError, match=r"entrant 'a' runs .*sh: version .*bogus.* on the coordinator"):
        check_program(bots["a"], shipping.Program("sh", program.path, "sha256:bogus"), "tcp://w:1")
    with pytest.raises(ConfigError, match=r"entrant 'a' runs no-such-prog, which Dask worker tcp://w:1 does not have"):
        check_program(bots["a"], shipping.Program("no-such-prog", "/opt/x", "1"), "tcp://w:1")
    assert shipping.program_version(sys.executable).startswith("Python 3.")


def test_the_cluster_key_is_checked():
    assert (
        parse_config(
            "cluster: tcp://10.0.0.5:8786\nentrants: [{name: a, command: sh}, {name: b, command: sh}]\n"
        ).cluster
        == "tcp://10.0.0.5:8786"
    )
    with pytest.raises(ConfigError, match=r"^t.yaml:1: cluster: expected a Dask scheduler address such as tcp://"):
        parse_config("cluster: 10.0.0.5:8786\nentrants: []\n", display="t.yaml")


def test_the_cluster_option_is_checked_and_an_unreachable_scheduler_is_one_error_line(tmp_path, monkeypatch):
    runner = CliRunner()
    r = runner.invoke(cli_app(), ["run", str(SMOKE), "--db", f"sqlite:///{tmp_path}/x.db", "--cluster", "nowhere"])
    assert r.exit_code == 2 and r.stderr.startswith("error: --cluster: expected a Dask scheduler address")

    monkeypatch.setattr(executor, "CONNECT_SECONDS", 1.0)
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(
        cli_app(), ["run", str(SMOKE), "--db", f"sqlite:///{tmp_path}/x.db", "--json", "--cluster", "tcp://127.0.0.1:1"]
    )
    assert r.exit_code == 1, r.output
    assert r.stderr.strip().splitlines() == [r.stderr.strip()] and r.stderr.startswith(
        "error: cannot reach the Dask scheduler at tcp://127.0.0.1:1"
    )
    assert (
        json.loads(CliRunner().invoke(cli_app(), ["standings", "--db", f"sqlite:///{tmp_path}/x.db", "--json"]).stdout)[
            0
        ]["matches"]
        == 0
    )  # nothing was played; a rerun starts where this one stopped
