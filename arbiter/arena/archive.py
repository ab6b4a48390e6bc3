"""Bots uploaded to an arena: the .tar.gz (or .zip) an author sends, checked, then kept by its content.

The archive holds the bot's folder: its files at the top (what ``arbiter submit`` sends), or one
folder holding them (what ``tar czf lowbot.tar.gz lowbot`` or a zip of the folder makes): when
the top holds no ``entrant.yaml`` but one folder that does, that folder is the bot's.

:func:`open_archive` reads the upload as a stream and refuses it, with one line for its author
(:class:`~arbiter.errors.SubmissionRefused`), as soon as it breaks a rule, before writing what
breaks it:

* caps (:class:`UploadLimits`): bytes of upload, bytes of files (a member's size counts as its
  header declares it, before any of it is written, so a forged or sparse 1 GB member costs
  nothing), entries (files and folders); the decompressed stream is capped too (the files plus
  an allowance per entry for its headers), so a gzip bomb stops at the cap, whatever it hides;
* paths: absolute, ``..``, empty or ``.`` parts, backslashes, control characters, a name twice,
  more than :data:`MAX_DEPTH` levels or :data:`MAX_PATH_BYTES` bytes;
* kinds: symbolic and hard links, devices, named pipes, sparse files: only files and folders;
* the gzip stream's CRC and length, read to its end once the archive's entries are in.

The files land in a temporary folder inside the store, where ``entrant.yaml`` must give the
entrant's ``name`` and ``command``, checked as a tournament file's entrants are (the name's
form; the program in the bot's folder or on PATH, the script it names in the folder). The folder
is then packed as a cluster bundle (:func:`arbiter.execution.bundle.pack`: a deterministic tar
whose SHA-256 is the bundle's digest) and unpacked by that digest
(:func:`arbiter.execution.bundle.unpack`: checked against the digest, made read-only, renamed
into place at once) as ``STORE/<digest>/files``. Nothing is written outside the store; the same
files sent again, by anyone, reuse the same folder. A store whose disk fills meanwhile is
:class:`~arbiter.arena.disk.DiskFull` (the arena's trouble, not the author's), and no message
shows the server's folders.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import shutil
import stat
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Annotated, cast

from pydantic import BeforeValidator, ValidationError

from arbiter.arena.config import MAX_ARCHIVE_BYTES, MAX_UNPACKED_BYTES, MAX_UPLOAD_FILES, UploadLimits
from arbiter.arena.disk import DiskFull, disk_full
from arbiter.errors import ConfigError, SubmissionRefused, TournamentError
from arbiter.execution.bundle import MAX_BUNDLE_BYTES, SKIPPED, pack, unpack
from arbiter.files import human_size, read_text
from arbiter.process.command import BotCommand
from arbiter.text import printable
from arbiter.tournament.config.environment import check_launch, launch_command
from arbiter.tournament.config.schema import EntrantFile, command_text, config_error
from arbiter.tournament.config.yamltree import read_tree

ENTRANT_FILE = "entrant.yaml"
MAX_ENTRANT_FILE = 64 << 10
HEADER_ALLOWANCE = 8 << 10  # decompressed bytes an entry may take beyond its data (headers, long names)
MAX_DEPTH = 64  # folders in a path: deeper ones would outgrow the recursion of os.walk and rmtree
MAX_PATH_BYTES = 1024
UPLOAD_PREFIX = ".upload-"  # the folder an upload is unpacked into, inside the store, while it is checked


DEFAULT_UPLOADS = UploadLimits()


@dataclass(frozen=True)
class Unpacked:
    """An accepted upload: its bundle's digest, its files' folder in the store (read-only), and
    what its entrant.yaml says (the command as written there)."""

    digest: str
    folder: Path
    name: str
    command: str


def open_archive(data: bytes | IO[bytes], store: Path, limits: UploadLimits) -> Unpacked:
    """Check the uploaded .tar.gz ``data`` (its bytes, or a stream read only up to the cap) and
    keep its files in ``store``; a SubmissionRefused saying why not, or DiskFull when the store's
    disk has no room for them. No message names a folder of the server's."""
    if isinstance(data, bytes) and len(data) > limits.archive:
        raise _archive_too_large(limits)
    source = io.BytesIO(data) if isinstance(data, bytes) else data
    store = store.resolve()
    work = store
    try:
        store.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=UPLOAD_PREFIX, dir=store))
        _extract_zip(source, work, limits) if _is_zip(source) else _extract(source, work, limits)
        root = _bot_folder(work)
        entrant = entrant_file(root)
        name, command = entrant.name, entrant.command or ""
        _check_command(command, root, built=entrant.build is not None)
        if entrant.build is not None:
            _inside(entrant.build, "build")
        bundle = pack(root, name, max_bytes=limits.unpacked)
        folder = unpack(bundle.digest, bundle.data, store, max_bytes=limits.unpacked)
    except SubmissionRefused as e:
        raise SubmissionRefused(_hidden(str(e), work, store)) from None
    except (OSError, ConfigError, TournamentError) as e:
        if disk_full(e):
            raise DiskFull("the arena's disk has no room for this upload now: try again later") from None
        reason = e.strerror or str(e) if isinstance(e, OSError) else str(e)
        raise SubmissionRefused(f"the upload cannot be stored: {_hidden(reason, work, store)}") from None
    finally:
        if work != store:
            shutil.rmtree(work, ignore_errors=True)
    return Unpacked(bundle.digest, folder, name, command)


def _is_zip(source: IO[bytes]) -> bool:
    """Whether the upload starts as a zip archive does (its stream left where it was)."""
    where = source.tell()
    head = source.read(4)
    source.seek(where)
    return head == b"PK\x03\x04"


def _bot_folder(work: Path) -> Path:
    """The bot's folder in what was unpacked: the top, or the one folder there that holds an
    entrant.yaml when the top holds none (an archive of the folder itself)."""
    if (work / ENTRANT_FILE).exists():
        return work
    entries = [p for p in work.iterdir() if p.name not in ("__MACOSX", ".DS_Store")]  # what a Mac's zip adds
    if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink():
        inner = entries[0]
        if (inner / ENTRANT_FILE).is_file():
            return inner
    return work


def _hidden(message: str, work: Path, store: Path) -> str:
    """``message`` without the server's folders: the upload's own is the bot's folder."""
    for folder, shown in ((work, "the bot's folder"), (store, "the arena's store")):
        message = message.replace(f"{folder}/", "").replace(str(folder), shown)
    return message


LARGEST_UPLOAD = UploadLimits(MAX_ARCHIVE_BYTES, MAX_UNPACKED_BYTES, MAX_UPLOAD_FILES)
"""The caps no arena goes beyond: ``arbiter submit`` packs within them and the arena says its own."""


def pack_folder(folder: Path, limits: UploadLimits = DEFAULT_UPLOADS) -> bytes:
    """The .tar.gz of a bot's folder that an arena takes (``arbiter submit`` uploads it): its
    files as a cluster bundle packs them (no .git, __pycache__ or byte code; sorted, no owners
    or times); a SubmissionRefused for what the arena would refuse anyway."""
    shown = printable(str(folder))
    if not folder.is_dir():
        raise SubmissionRefused(f"{shown} is not a folder: give the bot's folder")
    entrant_of(folder)
    try:
        bundle = pack(folder, folder.name, max_bytes=min(limits.unpacked, MAX_BUNDLE_BYTES))
    except ConfigError as e:
        raise SubmissionRefused(str(e)) from None
    if bundle.files > limits.files:
        raise SubmissionRefused(
            f"{shown} holds {bundle.files} files and folders; an arena takes at most {limits.files}"
        )
    raw = zlib.decompress(bundle.data)
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tar:
        links = [m.name for m in tar.getmembers() if m.issym()]
    if links:
        raise SubmissionRefused(
            f"{printable(str(folder / links[0]))} is a symbolic link; an arena takes files and folders only: "
            "put a copy of what it points to in its place"
        )
    archive = gzip.compress(raw, compresslevel=9, mtime=0)
    if len(archive) > limits.archive:
        raise SubmissionRefused(
            f"{shown} packs to {len(archive)} bytes, over the {human_size(limits.archive)} an arena takes: "
            "leave out what the bot does not need to run"
        )
    return archive


def entrant_of(folder: Path) -> tuple[str, str]:
    """The entrant's name and command from ``folder``'s entrant.yaml, checked as a tournament
    file's entrant is (the command's words; not yet whether its program exists)."""
    entrant = entrant_file(folder)
    assert entrant.command is not None  # not remote: EntrantFile requires one
    return entrant.name, entrant.command


class SubmittedEntrant(EntrantFile):
    """An entrant.yaml: a tournament file's entrant, and the build step of a bot sent as sources."""

    build: Annotated[str | None, BeforeValidator(command_text)] = None


def entrant_file(folder: Path) -> SubmittedEntrant:
    """``folder``'s entrant.yaml as read and checked (:func:`entrant_of`): its name, command,
    and the keys that say how it runs (``transport``)."""
    path = folder / ENTRANT_FILE
    if not path.is_file() or path.is_symlink():
        raise SubmissionRefused(
            f"no {ENTRANT_FILE} at the top of the bot's folder (or of the one folder the archive holds): write one "
            "with the entrant's name and command (arbiter new-bot writes one)"
        )
    text = read_text(path, MAX_ENTRANT_FILE, ENTRANT_FILE, SubmissionRefused)
    try:
        data, lines = read_tree(text, ENTRANT_FILE)
    except ConfigError as e:
        raise SubmissionRefused(str(e)) from None
    if isinstance(data, dict) and "remote" in data:
        message = "a submitted bot runs here from its command: remove 'remote' (remote bots join through the lobby)"
        raise SubmissionRefused(str(lines.error(("remote",), message, at_key=True)))
    if isinstance(data, dict) and "name" in data and "command" not in data:
        message = "the key 'command' is missing: say how to start the bot from its folder, e.g. python bot.py"
        raise SubmissionRefused(str(lines.error((), message)))
    try:
        entrant = SubmittedEntrant.model_validate(data)
    except ValidationError as e:
        raise SubmissionRefused(str(config_error(e, lines))) from None
    return entrant


def _inside(command: str, key: str) -> None:
    """No word of ``command`` names a path outside the bot's folder (see :func:`_check_command`)."""
    for word in BotCommand.parse(command).words:
        value = word.split("=", 1)[-1]
        if value.startswith(("/", "~")) or ".." in value.split("/"):
            raise SubmissionRefused(
                f"{ENTRANT_FILE}: {key}: {printable(word)!r} names a path outside the bot's folder: "
                "an uploaded bot names only its own files (relative to its folder) and programs on PATH"
            )


def _check_command(command: str, folder: Path, *, built: bool = False) -> None:
    """The command's program in the bot's folder or on PATH, and its script in the folder, as a
    tournament file's commands are checked (the store's own path is not shown); and no word
    naming a path outside the folder: the sandbox shows a bot the folders of the files its
    command names, so ``env X=/root/.ssh/id_rsa`` would show it that folder. A bot with a
    ``build`` step may name files its build makes: their existence is the check's to find out."""
    _inside(command, "command")
    if built:
        return
    try:
        check_launch(launch_command(command), folder)
    except ValueError as e:
        message = re.sub(rf" \(looked for {re.escape(str(folder))}(/.*)?\)$", " in the bot's folder", str(e))
        raise SubmissionRefused(f"{ENTRANT_FILE}: command: {message}") from None


# ---- reading the upload ---------------------------------------------------------------------
class _Capped(io.RawIOBase):
    """A reader of ``source`` that refuses (``refusal``) to give more than ``limit`` bytes in all:
    it never asks its source for more than one byte past the cap."""

    def __init__(self, source: IO[bytes], limit: int, refusal: SubmissionRefused):
        super().__init__()
        self.source, self.limit, self.refusal, self.total = source, limit, refusal, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]  # io's buffer type
        room = self.limit + 1 - self.total
        chunk = self.source.read(min(len(buffer), room))
        self.total += len(chunk)
        if self.total > self.limit:
            raise self.refusal
        buffer[: len(chunk)] = chunk
        return len(chunk)


def _archive_too_large(limits: UploadLimits) -> SubmissionRefused:
    return SubmissionRefused(
        f"the archive is larger than {human_size(limits.archive)}: leave out what the bot does not need to run"
    )


def _extract_zip(source: IO[bytes], dest: Path, limits: UploadLimits) -> None:
    """A zip upload's files and folders into ``dest``, checked as a .tar.gz's are (the same
    caps, paths and kinds); a member is read only up to the size it declares, CRC checked."""
    data = _Capped(source, limits.archive, _archive_too_large(limits)).read()
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
            if len(infos) > limits.files:
                raise SubmissionRefused(
                    f"the archive holds more than {limits.files} files and folders: keep the bot's folder smaller"
                )
            names: set[str] = set()
            total = 0
            for info in infos:
                member = _as_tar_member(info)
                name = _member_name(member)
                if name is None:
                    continue
                total = _counted(name, names, total + member.size, limits)
                if not _left_out(name):
                    _write(member, dest / name, lambda info=info: archive.open(info))  # type: ignore[misc]
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error, NotImplementedError, ValueError) as e:
        raise SubmissionRefused(f"the upload is not a readable .tar.gz or .zip archive ({printable(str(e))})") from None


def _as_tar_member(info: zipfile.ZipInfo) -> tarfile.TarInfo:
    """A zip member as the tar member it stands for, so both kinds are checked alike."""
    member = tarfile.TarInfo(info.filename)
    mode = info.external_attr >> 16
    member.type = (
        tarfile.DIRTYPE
        if info.is_dir()
        else tarfile.SYMTYPE
        if stat.S_ISLNK(mode)
        else tarfile.REGTYPE
        if not stat.S_IFMT(mode) or stat.S_ISREG(mode)  # no kind said: a file
        else tarfile.FIFOTYPE
    )
    member.size = 0 if info.is_dir() else info.file_size
    member.mode = stat.S_IMODE(mode) or 0o644
    return member


def _counted(name: str, names: set[str], total: int, limits: UploadLimits) -> int:
    """The files' bytes so far with ``name``'s; a refusal for a name twice or too many bytes."""
    if name in names:
        raise SubmissionRefused(f"the archive holds {printable(name)!r} twice: not unpacked")
    names.add(name)
    if total > limits.unpacked:
        raise SubmissionRefused(
            f"the archive's files come to more than {human_size(limits.unpacked)} "
            f"(at {printable(name)!r}): leave out what the bot does not need to run"
        )
    return total


def _extract(source: IO[bytes], dest: Path, limits: UploadLimits) -> None:
    """The upload's files and folders into ``dest``, each checked before it is written."""
    upload = _Capped(source, limits.archive, _archive_too_large(limits))
    inflated_cap = limits.unpacked + (limits.files + 1) * HEADER_ALLOWANCE
    bomb = SubmissionRefused(f"the archive unpacks to more than {human_size(inflated_cap)}: not unpacked")
    inflated = _Capped(cast(IO[bytes], gzip.GzipFile(fileobj=upload, mode="rb")), inflated_cap, bomb)
    names: set[str] = set()
    total = 0
    try:
        with tarfile.open(fileobj=cast(IO[bytes], inflated), mode="r|") as tar:
            for count, member in enumerate(tar, start=1):
                if count > limits.files:
                    raise SubmissionRefused(
                        f"the archive holds more than {limits.files} files and folders: keep the bot's folder smaller"
                    )
                name = _member_name(member)
                if name is None:
                    continue  # the top folder itself ("./")
                total = _counted(name, names, total + (member.size if member.isreg() else 0), limits)
                if not _left_out(name):
                    _write(member, dest / name, lambda member=member: tar.extractfile(member))  # type: ignore[misc]
            while inflated.read(1 << 16):  # to the gzip stream's end, where its CRC is checked
                pass
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise SubmissionRefused(f"the upload is not a readable .tar.gz or .zip archive ({printable(str(e))})") from None


def _left_out(name: str) -> bool:
    """What a bundle leaves out (version control, byte-code caches): counted, checked, not kept,
    so the command is checked against the files that will be stored."""
    parts = name.split("/")
    return any(p in SKIPPED for p in parts) or name.endswith((".pyc", ".pyo"))


def _member_name(member: tarfile.TarInfo) -> str | None:
    """The member's path inside the bot's folder (None for the folder itself); a refusal for a
    path or a kind the arena does not take."""
    raw = member.name
    shown = printable(raw[:200])
    name = raw
    while name.startswith("./"):
        name = name[2:]
    name = name.rstrip("/")
    if raw.startswith("/"):
        raise SubmissionRefused(f"the archive holds the absolute path {shown!r}: pack paths relative to the folder")
    parts = name.split("/")
    if ".." in parts:
        raise SubmissionRefused(f"the archive holds the path {shown!r}, which leaves the folder ('..'): not unpacked")
    if name in ("", ".") and member.isdir():
        return None
    if any(p in ("", ".") for p in parts) or "\\" in name or any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise SubmissionRefused(f"the archive holds the unusual path {shown!r}: rename it")
    if len(parts) > MAX_DEPTH or len(name.encode("utf-8", "replace")) > MAX_PATH_BYTES:
        raise SubmissionRefused(
            f"the archive holds a path {len(parts)} levels deep, {len(name)} characters long ({shown[:40]!r}…): "
            f"an arena takes paths at most {MAX_DEPTH} levels deep and {MAX_PATH_BYTES} bytes long"
        )
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise SubmissionRefused(f"the archive holds a path that is not UTF-8 ({shown!r}): rename it") from None
    _check_kind(member, printable(name[:200]))
    return name


def _check_kind(member: tarfile.TarInfo, shown: str) -> None:
    kind = (
        "a sparse file"
        if member.issparse()
        else f"a symbolic link (to {printable(member.linkname[:200])!r})"
        if member.issym()
        else f"a hard link (to {printable(member.linkname[:200])!r})"
        if member.islnk()
        else "a device file"
        if member.ischr() or member.isblk()
        else "a named pipe (fifo)"
        if member.isfifo()
        else None
        if member.isreg() or member.isdir()
        else "neither a file nor a folder"
    )
    if kind is not None:
        raise SubmissionRefused(
            f"the archive holds {shown!r}, {kind}; an arena takes files and folders only: put a plain file in its place"
        )


def _write(member: tarfile.TarInfo, path: Path, content_of: Callable[[], IO[bytes] | None]) -> None:
    """Make the folder or file ``member`` at ``path`` (its folders first); an OSError is a
    refusal. The folder holds no links, so nothing made here can leave it."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if member.isdir():
            path.mkdir(exist_ok=True)
            return
        mode = 0o755 if member.mode & 0o111 else 0o644
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
        with os.fdopen(fd, "wb") as out:
            content = content_of()
            if content is not None:
                with content:
                    shutil.copyfileobj(content, out)
    except OSError as e:
        if disk_full(e):
            raise  # the arena's trouble, not the upload's
        shown = printable(member.name[:200])
        raise SubmissionRefused(f"the archive's {shown!r} cannot be unpacked: {e.strerror or e}") from None
