"""Uploaded bots (arbiter/arena/archive.py): real .tar.gz files, built here byte by byte where an
attacker would forge them, checked into a real store on disk.

Every refusal is one line for the author, and leaves the filesystem as it was: nothing outside
the store, nothing left inside it."""

from __future__ import annotations

import gzip
import io
import os
import stat
import subprocess
import tarfile
import uuid
import zipfile
import zlib
from pathlib import Path

import pytest

from arbiter.arena.archive import open_archive, pack_folder
from arbiter.arena.config import UploadLimits
from arbiter.errors import SubmissionRefused

ROOT = Path(__file__).resolve().parents[2]
RANDOM_BOT = (ROOT / "sample_bots" / "random_bot.py").read_bytes()
ENTRANT = b"name: alice\ncommand: python random_bot.py\n"
LIMITS = UploadLimits()
GOOD = [("entrant.yaml", ENTRANT), ("random_bot.py", RANDOM_BOT)]


def member(name: str, data: bytes | None = None, **fields) -> tuple[tarfile.TarInfo, bytes | None]:
    info = tarfile.TarInfo(name)
    if data is not None:
        info.size = len(data)
    for key, value in fields.items():
        setattr(info, key, value)
    return info, data


def tar_gz(*entries, fmt: int = tarfile.PAX_FORMAT) -> bytes:
    """A .tar.gz of ``entries``: (name, bytes) pairs for plain files, or (TarInfo, bytes | None)."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=1) as gz, tarfile.open(
        fileobj=gz, mode="w|", format=fmt
    ) as tar:  # fmt: skip
        for entry in entries:
            info, data = entry if isinstance(entry[0], tarfile.TarInfo) else member(*entry)
            tar.addfile(info, None if data is None else io.BytesIO(data))
    return buffer.getvalue()


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under ``root`` with its mode and size (links not followed)."""
    seen = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            seen[os.path.relpath(path, root)] = (st.st_mode, st.st_size)
    return seen


@pytest.fixture
def arena(tmp_path):
    """A store inside a folder of other files; ``refused(data, fragment)`` checks a refusal and
    that the filesystem around the store, and the store, are as they were."""
    (tmp_path / "neighbour.txt").write_text("keep me")
    store = tmp_path / "arena" / "store"
    store.mkdir(parents=True)

    def refused(data, fragment: str, limits: UploadLimits = LIMITS) -> str:
        before = snapshot(tmp_path)
        with pytest.raises(SubmissionRefused) as caught:
            open_archive(data, store, limits)
        message = str(caught.value)
        assert fragment in message, message
        assert "\n" not in message and str(store) not in message
        assert snapshot(tmp_path) == before, "something was written"
        assert list(store.iterdir()) == []
        return message

    class Arena:
        pass

    a = Arena()
    a.store, a.refused, a.root = store, refused, tmp_path
    return a


# ---- the good case ----------------------------------------------------------------------------
def test_a_good_bot_is_stored_read_only_by_its_digest_and_reused(arena):
    unpacked = open_archive(tar_gz(*GOOD), arena.store, LIMITS)
    assert (unpacked.name, unpacked.command) == ("alice", "python random_bot.py")
    assert unpacked.folder == arena.store / unpacked.digest / "files"
    assert (unpacked.folder / "random_bot.py").read_bytes() == RANDOM_BOT
    for path in [unpacked.folder, *unpacked.folder.iterdir()]:
        assert stat.S_IMODE(path.stat().st_mode) & 0o222 == 0, path  # nobody may write
    assert stat.S_IMODE((arena.store / unpacked.digest).stat().st_mode) == 0o755  # bots of other users reach it
    # The same files, in another order, with other times and owners, in a tar made by GNU tar
    # (`./` names): the same bundle, the same folder, nothing more in the store.
    source = arena.root / "bot"
    source.mkdir()
    for name, data in GOOD:
        (source / name).write_bytes(data)
    made = subprocess.run(["tar", "-czf", "-", "-C", str(source), "."], capture_output=True, check=True).stdout
    again = open_archive(made, arena.store, LIMITS)
    assert again == unpacked
    assert open_archive(pack_folder(source), arena.store, LIMITS) == unpacked
    assert sorted(p.name for p in arena.store.iterdir()) == [unpacked.digest]


def test_a_stream_is_read_only_up_to_the_cap(arena):
    limits = UploadLimits(archive=1 << 20)
    data = tar_gz(*GOOD, ("noise.bin", os.urandom(4 << 20)))  # random bytes do not compress
    stream = io.BytesIO(data)
    arena.refused(stream, "the archive is larger than 1 MiB", limits)
    assert stream.tell() <= (1 << 20) + 1
    arena.refused(b"\0" * ((1 << 20) + 1), "the archive is larger than 1 MiB", limits)


# ---- paths and kinds that leave the folder ---------------------------------------------------
OUTSIDE = f"/tmp/barbu-absolute-{uuid.uuid4().hex}"

UNSAFE = {
    "dotdot": ([("../escaped.txt", b"x")], "which leaves the folder ('..')"),
    "dotdot-nested": ([("src/../../escaped.txt", b"x")], "which leaves the folder ('..')"),
    "absolute": ([(f"{OUTSIDE}/x", b"x")], "the absolute path"),
    "symlink": ([member("evil", type=tarfile.SYMTYPE, linkname="/etc")], "a symbolic link (to '/etc')"),
    "symlink-then-write": (
        [member("evil", type=tarfile.SYMTYPE, linkname=".."), ("evil/escaped.txt", b"x")],
        "a symbolic link (to '..')",
    ),
    "hard-link": ([member("hard", type=tarfile.LNKTYPE, linkname="/etc/passwd")], "a hard link"),
    "char-device": ([member("null", type=tarfile.CHRTYPE, devmajor=1, devminor=3)], "a device file"),
    "block-device": ([member("disk", type=tarfile.BLKTYPE, devmajor=8, devminor=0)], "a device file"),
    "fifo": ([member("pipe", type=tarfile.FIFOTYPE)], "a named pipe (fifo)"),
    "twice": ([("random_bot.py", b"one"), ("random_bot.py", b"two")], "twice"),
    "control-characters": ([("bot\x1b[2J.py", b"x")], "the unusual path"),
    # os.walk and rmtree recurse per level: 1000 levels were a RecursionError (HTTP 500) and left the upload's folder
    "1000-deep": ([("/".join(["a"] * 1000) + "/x.py", b"x")], "1001 levels deep, 2004 characters long"),
    "65-deep": ([("/".join(["a"] * 64) + "/x.py", b"x")], "an arena takes paths at most 64 levels deep"),
    "long": ([("a" * 200 + "/" + "b" * 200 + "/" + "c" * 200 + "/" + "d" * 200 + "/" + "e" * 240, b"x")], "1024 bytes"),
}


@pytest.mark.parametrize("case", sorted(UNSAFE))
def test_an_unsafe_member_is_refused_before_anything_is_written(arena, case):
    entries, fragment = UNSAFE[case]
    arena.refused(tar_gz(*GOOD, *entries), fragment)
    assert not os.path.lexists(OUTSIDE)
    assert not (arena.root / "arena" / "escaped.txt").exists()


def test_what_is_not_a_tar_gz_is_refused(arena):
    plain_tar = zlib.decompress(tar_gz(*GOOD), wbits=31)
    arena.refused(plain_tar, "not a readable .tar.gz")
    arena.refused(b"PK\x03\x04 a zip file", "not a readable .tar.gz or .zip")
    arena.refused(tar_gz(*GOOD)[:200], "not a readable .tar.gz")  # cut short


def test_a_gzip_stream_whose_crc_or_length_is_wrong_is_refused(arena):
    """The gzip trailer (CRC-32, then the length) is read: tar stops reading at its last entry,
    before it, so a damaged stream was taken as it was."""
    good = tar_gz(*GOOD)
    for offset, words in ((-8, "CRC check failed"), (-4, "Incorrect length")):
        damaged = bytearray(good)
        damaged[offset] ^= 0xFF
        arena.refused(bytes(damaged), words)
    assert open_archive(good, arena.store, LIMITS).name == "alice"


# ---- caps: sizes declared, sizes real, counts ---------------------------------------------------
def test_a_forged_1_gb_member_is_refused_at_its_header(arena):
    header = tarfile.TarInfo("huge.bin")
    header.size = 1 << 30
    raw = header.tobuf(tarfile.USTAR_FORMAT) + b"\0" * 4096  # the header says 1 GB; the data is not there
    arena.refused(gzip.compress(raw), "more than 100 MiB (at 'huge.bin')")


def test_a_sparse_1_gb_file_is_refused(arena):
    source = arena.root / "sparse"
    source.mkdir()
    (source / "entrant.yaml").write_bytes(ENTRANT)
    with open(source / "hole.bin", "wb") as f:
        f.truncate(1 << 30)
    made = subprocess.run(["tar", "-S", "-czf", "-", "-C", str(source), "."], capture_output=True, check=True).stdout
    assert len(made) < 1 << 20
    arena.refused(made, "'hole.bin', a sparse file")


def test_a_gzip_bomb_of_1_gb_is_refused_without_unpacking_it(arena):
    header = tarfile.TarInfo("bomb.bin")
    header.size = 1 << 30
    # A gzip file may be many gzip members, read as one stream: 64 of 16 MiB of zeros each.
    zeros = gzip.compress(bytes(16 << 20), 9)
    chunks = [gzip.compress(header.tobuf(tarfile.USTAR_FORMAT)), *[zeros] * 64]
    bomb = b"".join(chunks)
    assert len(bomb) < 2 << 20  # 1 GiB of zeros in ~1 MiB
    arena.refused(bomb, "more than 100 MiB (at 'bomb.bin')")


def test_headers_that_inflate_past_the_cap_are_refused(arena):
    """A pax header holding 50 MiB: no file is large, but the stream is: refused at its cap."""
    value = "a" * (50 << 20)
    body = f" comment={value}\n"
    record = f"{len(body) + len(str(len(body) + 8))}{body}".encode()  # "LENGTH comment=...\n", LENGTH counting itself
    assert int(record.split(b" ")[0]) == len(record)
    pax = member("././@PaxHeader", record, type=tarfile.XHDTYPE)
    data = tar_gz(("entrant.yaml", ENTRANT), pax, ("random_bot.py", RANDOM_BOT), fmt=tarfile.USTAR_FORMAT)
    limits = UploadLimits(unpacked=1 << 20, files=100)
    arena.refused(data, "the archive unpacks to more than", limits)


def test_files_over_the_unpacked_cap_are_refused_at_the_first_one_over(arena):
    limits = UploadLimits(unpacked=1 << 20)
    chunk = os.urandom(400 << 10)
    arena.refused(tar_gz(*GOOD, ("a.bin", chunk), ("b.bin", chunk), ("c.bin", chunk)), "(at 'c.bin')", limits)


def test_100_000_files_are_refused_at_the_cap(arena):
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=1) as gz, tarfile.open(
        fileobj=gz, mode="w|", format=tarfile.USTAR_FORMAT
    ) as tar:  # fmt: skip
        for info, data in [member(n, d) for n, d in GOOD] + [member(f"f{i:06d}", b"") for i in range(100_000)]:
            tar.addfile(info, None if data is None else io.BytesIO(data))
    stream = io.BytesIO(buffer.getvalue())
    arena.refused(stream, "more than 2000 files and folders")
    assert stream.tell() < len(buffer.getvalue()) / 10  # stopped at the cap, not at the end


# ---- entrant.yaml ------------------------------------------------------------------------------
ENTRANT_CASES = {
    "missing": ([("random_bot.py", RANDOM_BOT)], "no entrant.yaml at the top of the bot's folder"),
    "not-yaml": ([("entrant.yaml", b"name: [alice\n")], "entrant.yaml:"),
    "no-name": ([("entrant.yaml", b"command: python random_bot.py\n")], "the key 'name' is missing"),
    "bad-name": ([("entrant.yaml", b"name: alice@2\ncommand: python random_bot.py\n")], "entrant.yaml:1: name:"),
    "no-command": ([("entrant.yaml", b"name: alice\n")], "the key 'command' is missing: say how to start"),
    "remote": ([("entrant.yaml", b"name: alice\nremote: true\n")], "entrant.yaml:2: remote: a submitted bot"),
    "unknown-key": ([("entrant.yaml", ENTRANT + b"colour: red\n")], "entrant.yaml:3: colour: unknown key"),
    "no-script": (
        [("entrant.yaml", b"name: alice\ncommand: python missing.py\n")],
        "no such file: missing.py in the bot's folder",
    ),
    "no-program": ([("entrant.yaml", b"name: alice\ncommand: ./alice-bot\n")], "no such file: ./alice-bot"),
    "left-out": (
        [("entrant.yaml", b"name: alice\ncommand: python .git/bot.py\n"), (".git/bot.py", RANDOM_BOT)],
        "no such file: .git/bot.py in the bot's folder",
    ),
    "not-on-path": ([("entrant.yaml", b"name: alice\ncommand: no-such-program-x\n")], "is not on PATH"),
    "host-file": (
        [("entrant.yaml", b"name: alice\ncommand: env KEY=/root/.ssh/id_rsa python random_bot.py\n")],
        "'KEY=/root/.ssh/id_rsa' names a path outside the bot's folder",
    ),
    "absolute-script": ([("entrant.yaml", b"name: alice\ncommand: python /etc/passwd\n")], "outside the bot's folder"),
    "home": ([("entrant.yaml", b"name: alice\ncommand: python ~/bot.py\n")], "outside the bot's folder"),
    "dotdot-script": ([("entrant.yaml", b"name: alice\ncommand: python ../bot.py\n")], "outside the bot's folder"),
    "two-folders": ([("alice/entrant.yaml", ENTRANT), ("bob/random_bot.py", RANDOM_BOT)], "no entrant.yaml"),
    # the folder itself as the script or the program: the message once named the store's folder
    "script-is-the-folder": ([("entrant.yaml", b"name: alice\ncommand: python .\n")], "no such file: . in the bot's"),
    "program-is-the-folder": ([("entrant.yaml", b"name: alice\ncommand: ./\n")], "no such file: ./ in the bot's"),
    "parenthesis": (
        [("entrant.yaml", b"name: alice\ncommand: python 'a)b.py'\n")],
        "command: no such file: a)b.py in the bot's folder",
    ),
}


@pytest.mark.parametrize("case", sorted(ENTRANT_CASES))
def test_an_entrant_file_without_a_valid_name_and_command_is_refused(arena, case):
    entries, fragment = ENTRANT_CASES[case]
    bot = [] if case in ("missing", "two-folders") else [("random_bot.py", RANDOM_BOT)]
    message = arena.refused(tar_gz(*bot, *entries), fragment)
    assert ".upload-" not in message
    if "in the bot's" in fragment:
        assert message.endswith("in the bot's folder"), message


def test_a_program_in_the_bundle_must_be_executable(arena):
    script = b"#!/bin/sh\nexec python3 random_bot.py\n"
    entrant = b"name: alice\ncommand: ./run.sh\n"
    arena.refused(tar_gz(("entrant.yaml", entrant), ("random_bot.py", RANDOM_BOT), ("run.sh", script)),
                  "./run.sh is not executable")  # fmt: skip
    unpacked = open_archive(
        tar_gz(("entrant.yaml", entrant), ("random_bot.py", RANDOM_BOT), member("run.sh", script, mode=0o755)),
        arena.store, LIMITS,
    )  # fmt: skip
    assert os.access(unpacked.folder / "run.sh", os.X_OK) and unpacked.command == "./run.sh"


# ---- packing a folder (arbiter submit) ---------------------------------------------------------
def test_packing_a_folder_leaves_out_caches_and_refuses_what_the_arena_would(tmp_path):
    bot = tmp_path / "bot"
    (bot / ".git").mkdir(parents=True)
    (bot / "__pycache__").mkdir()
    (bot / ".git" / "HEAD").write_text("ref")
    (bot / "__pycache__" / "random_bot.cpython-311.pyc").write_bytes(b"\0")
    (bot / "old.pyc").write_bytes(b"\0")
    with pytest.raises(SubmissionRefused, match="no entrant.yaml at the top"):
        pack_folder(bot)
    for name, data in GOOD:
        (bot / name).write_bytes(data)
    with tarfile.open(fileobj=io.BytesIO(pack_folder(bot)), mode="r:gz") as tar:
        assert tar.getnames() == ["entrant.yaml", "random_bot.py"]
    (bot / "data.bin").write_bytes(os.urandom(2 << 20))
    with pytest.raises(SubmissionRefused, match="packs to .* bytes, over the 1 MiB an arena takes"):
        pack_folder(bot, UploadLimits(archive=1 << 20))
    (bot / "data.bin").unlink()
    (bot / "link.py").symlink_to("random_bot.py")
    with pytest.raises(SubmissionRefused, match="link.py is a symbolic link"):
        pack_folder(bot)


# ---- the archives people make ------------------------------------------------------------------
def zip_of(*entries: tuple[str, bytes], links: tuple[tuple[str, str], ...] = ()) -> bytes:
    """A .zip of (name, bytes) files, and symbolic links (name, target) as zip(1) -y stores them."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            z.writestr(name, data)
        for name, target in links:
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            z.writestr(info, target)
    return buffer.getvalue()


def test_an_archive_of_the_folder_itself_and_a_zip_are_taken_as_the_bot(arena):
    """`tar czf alice.tar.gz alice` (one top folder), and a zip of the folder or of its files, by
    tar(1) and zip(1) as people make them: the same bot, the same bundle, as `arbiter submit`'s."""
    source = arena.root / "alice"
    source.mkdir()
    for name, data in GOOD:
        (source / name).write_bytes(data)
    first = open_archive(pack_folder(source), arena.store, LIMITS)
    made = subprocess.run(["tar", "-czf", "-", "-C", str(arena.root), "alice"], capture_output=True, check=True).stdout
    assert open_archive(made, arena.store, LIMITS) == first
    assert open_archive(zip_of(*[(f"alice/{n}", d) for n, d in GOOD]), arena.store, LIMITS) == first
    mac = zip_of(*[(f"alice/{n}", d) for n, d in GOOD], ("__MACOSX/alice/._random_bot.py", b""))
    assert open_archive(mac, arena.store, LIMITS) == first  # what a Mac adds beside the folder is not the bot's
    assert open_archive(io.BytesIO(zip_of(*GOOD)), arena.store, LIMITS) == first  # as a stream, too
    assert sorted(p.name for p in arena.store.iterdir()) == [first.digest]


@pytest.mark.parametrize(
    "entries, links, fragment",
    [
        ([("../escaped.txt", b"x")], (), "which leaves the folder ('..')"),
        ([], (("evil", "/etc"),), "a symbolic link"),
        ([("random_bot.py", b"two")], (), "twice"),
    ],
    ids=["dotdot", "symlink", "twice"],
)
def test_a_zip_is_checked_as_a_tar_gz_is(arena, entries, links, fragment):
    arena.refused(zip_of(*GOOD, *entries, links=links), fragment)
    assert not (arena.root / "arena" / "escaped.txt").exists()
