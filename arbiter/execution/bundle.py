"""Entrants' files for cluster workers: content-addressed bundles and the workers' cache.

``arbiter run --cluster`` packs each entrant's folder (the folder of its script, else of its
program, else the tournament file's folder) into a *bundle*: a deterministic tar (sorted names,
no owners, no times, modes reduced to 0644/0755) whose SHA-256 is its name, compressed with zlib.
The same files give the same digest on every machine, so a worker that already holds a bundle
never receives it again, and a worker never plays with files that differ from the coordinator's.

A worker unpacks a bundle into its cache (``$BARBU_BUNDLE_CACHE``, else
``~/.cache/barbu-arena/bundles``) as ``<digest>/files``: into a temporary folder first, checked
member by member (no absolute paths, no ``..``, no device or link leaving the bundle), made
read-only, then renamed into place (atomic: a reader sees a whole bundle or none). Before every
match the worker compares the folder with the manifest written at unpacking (names, sizes,
modification times; then it watches it with inotify, so later matches pay nothing until something
in it changes); a bundle a bot or a person changed is unpacked again.

Caps: :data:`MAX_BUNDLE_BYTES` of files and :data:`MAX_BUNDLE_FILES` files per entrant; over
them the run stops before anything is played, naming the entrant. Version-control folders and
Python's byte-code caches are left out (:data:`SKIPPED`).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import posixpath
import shutil
import stat
import struct
import tarfile
import tempfile
import threading
import uuid
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arbiter.errors import ConfigError, TournamentError
from arbiter.files import human_size
from arbiter.text import printable

MAX_BUNDLE_BYTES = 256 << 20  # the files of one entrant's folder, before compression
MAX_BUNDLE_FILES = 50_000
SKIPPED = frozenset({"__pycache__", ".git", ".hg", ".svn", ".mypy_cache", ".pytest_cache", ".ruff_cache"})
MANIFEST = "manifest.json"
FILES = "files"


@dataclass(frozen=True)
class Bundle:
    digest: str  # SHA-256 of the uncompressed tar
    data: bytes  # the tar, zlib-compressed
    size: int  # bytes of files
    files: int
    folder: str  # the folder it was packed from (the coordinator's path)


# ---- the coordinator: packing ---------------------------------------------------------------
def pack(folder: str | os.PathLike[str], entrant: str, *, max_bytes: int = MAX_BUNDLE_BYTES) -> Bundle:
    """The bundle of ``folder``; a ConfigError naming ``entrant`` if it is over the caps."""
    root = Path(folder).resolve()
    shown = printable(str(root))
    if not root.is_dir():
        raise ConfigError(f"entrant {entrant!r}: its folder {shown} is not a folder")
    members, total = _members(root, entrant, max_bytes)
    raw = _tar(members, entrant, max_bytes)
    return Bundle(hashlib.sha256(raw).hexdigest(), zlib.compress(raw, 1), total, len(members), str(root))


Member = tuple[str, Path | None, str | None]
"""A bundle's entry: its name, the file to read (None for a folder or a link), the link's text."""


def _over(entrant: str, root: Path, max_bytes: int, what: str) -> ConfigError:
    return ConfigError(
        f"entrant {entrant!r}: its folder {printable(str(root))} holds {what}; a bundle for the cluster holds at "
        f"most {human_size(max_bytes)} in {MAX_BUNDLE_FILES} files: keep the bot in a folder of its own"
    )


def _members(root: Path, entrant: str, max_bytes: int) -> tuple[list[Member], int]:
    """What the folder ships, sorted by name, and the files' total size (over the caps: ConfigError)."""
    members: list[Member] = []
    total = 0
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        rel_dir = here.relative_to(root).as_posix()
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED)
        for d in list(dirnames):
            path = here / d
            if path.is_symlink():
                dirnames.remove(d)
                members.append(_link_member(root, path, entrant) or (_name(rel_dir, d), None, None))
            else:
                members.append((_name(rel_dir, d), None, None))
        for f in sorted(filenames):
            if f.endswith((".pyc", ".pyo")):
                continue
            path = here / f
            name = _name(rel_dir, f)
            if path.is_symlink():
                link = _link_member(root, path, entrant)
                if link is not None:
                    members.append(link)
                    continue
                if not path.exists():
                    continue  # a dangling link: nothing to ship
            try:
                st = path.stat()
            except OSError as e:
                raise ConfigError(f"entrant {entrant!r}: cannot read {printable(str(path))}: {e.strerror}") from None
            if not stat.S_ISREG(st.st_mode):
                continue  # sockets, pipes, devices: not part of a bot
            total += st.st_size
            if total > max_bytes:
                raise _over(entrant, root, max_bytes, f"more than {human_size(max_bytes)} of files")
            members.append((name, path, None))
            if len(members) > MAX_BUNDLE_FILES:
                raise _over(entrant, root, max_bytes, f"more than {MAX_BUNDLE_FILES} files")
    members.sort(key=lambda m: m[0])
    return members, total


def _tar(members: list[Member], entrant: str, max_bytes: int) -> bytes:
    """The members as a reproducible tar: no times, owners or modes other than executable or not."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for member_name, source, link_text in members:
            info = tarfile.TarInfo(member_name)
            info.mtime = 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            if link_text is not None:
                info.type, info.linkname, info.mode = tarfile.SYMTYPE, link_text, 0o777
                tar.addfile(info)
            elif source is None:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            else:
                try:
                    with open(source, "rb") as stream:
                        content = stream.read(max_bytes + 1)
                    executable = os.stat(source).st_mode & 0o111
                except OSError as e:
                    raise ConfigError(
                        f"entrant {entrant!r}: cannot read {printable(str(source))}: {e.strerror}"
                    ) from None
                info.size, info.mode = len(content), 0o755 if executable else 0o644
                tar.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def _name(rel_dir: str, name: str) -> str:
    return name if rel_dir == "." else f"{rel_dir}/{name}"


def _link_member(root: Path, path: Path, entrant: str) -> tuple[str, None, str] | None:
    """A symbolic link that stays inside the bundle, kept as a link; None for one that leaves it
    (a file it points to is then packed as a copy; a folder outside is refused)."""
    target = os.readlink(path)
    name = path.relative_to(root).as_posix()
    resolved = (path.parent / target).resolve()
    inside = resolved == root or root in resolved.parents
    if inside and not os.path.isabs(target):
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(name), target))
        if not joined.startswith("../") and joined != "..":
            return name, None, target
    if inside:  # an absolute link into the folder: make it relative
        rel = os.path.relpath(resolved, path.parent.resolve())
        return name, None, Path(rel).as_posix()
    if resolved.is_dir():
        raise ConfigError(
            f"entrant {entrant!r}: {printable(str(path))} links to the folder {printable(str(resolved))}, outside the "
            "entrant's folder; a bundle for the cluster does not follow it: copy what the bot needs into its folder"
        )
    return None


# ---- a worker: the cache --------------------------------------------------------------------
def cache_root() -> Path:
    """Where this machine keeps unpacked bundles."""
    configured = os.environ.get("BARBU_BUNDLE_CACHE")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "barbu-arena" / "bundles"


def cached(digest: str, root: Path | None = None) -> Path | None:
    """The files of bundle ``digest`` if this machine holds them unchanged, else None.

    The first call in a process compares the folder with its manifest and then watches it
    (inotify); later calls compare again only if something in it changed since. Without inotify,
    every call compares."""
    _check_digest(digest)
    home = (root or cache_root()) / digest
    with _watches_lock:
        return _cached(home)


def _cached(home: Path) -> Path | None:
    files = home / FILES
    key = str(files)
    watch = _watches.pop(key, None)
    if watch is not None:
        if watch.quiet():
            _watches[key] = watch
            return files
        watch.close()
    manifest = _manifest(home / MANIFEST)
    if manifest is None:
        return None
    watch = _Watch.start(files)  # before the comparison: a change during it is seen next time
    if _scan(files) != manifest:
        if watch is not None:
            watch.close()
        return None
    if watch is not None:
        _watches[key] = watch
    return files


class _Watch:
    """inotify watches on every folder of an unpacked bundle: ``quiet()`` is False once anything
    in it was written, created, removed, renamed or had its attributes changed (Python's
    ``__pycache__`` folders aside)."""

    MASK = (
        0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800
    )  # modify, attrib, close_write, moves, create, delete, *_self
    DONT_FOLLOW, OVERFLOW, IGNORED = 0x02000000, 0x4000, 0x8000

    def __init__(self, fd: int):
        self.fd = fd
        self.changed = False

    @classmethod
    def start(cls, files: Path) -> _Watch | None:
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        except (OSError, AttributeError):
            return None
        if fd < 0:
            return None
        watch = cls(fd)
        try:
            folders = [str(files)]
            for dirpath, dirnames, _ in os.walk(files):
                dirnames[:] = [d for d in dirnames if d != "__pycache__"]
                folders += [os.path.join(dirpath, d) for d in dirnames]
            for folder in folders:
                if libc.inotify_add_watch(fd, os.fsencode(folder), cls.MASK | cls.DONT_FOLLOW) < 0:
                    raise OSError(ctypes.get_errno(), "inotify_add_watch")
        except OSError:  # no more watches allowed (fs.inotify.max_user_watches): compare every time
            watch.close()
            return None
        return watch

    def quiet(self) -> bool:
        while not self.changed:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                break
            except OSError:
                self.changed = True
                break
            offset = 0
            while offset + 16 <= len(data):
                _, mask, _, size = struct.unpack_from("iIII", data, offset)
                name = data[offset + 16 : offset + 16 + size].rstrip(b"\0")
                offset += 16 + size
                if mask & self.IGNORED and not mask & ~self.IGNORED:
                    continue  # a watch removed with its folder: the folder's own event says so
                if name != b"__pycache__" or mask & self.OVERFLOW:
                    self.changed = True
        return not self.changed

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


_watches: dict[str, _Watch] = {}
_watches_lock = threading.Lock()


_manifests: dict[str, tuple[int, dict[str, Any]]] = {}  # path -> (its mtime_ns, its content)


def _manifest(path: Path) -> dict[str, Any] | None:
    try:
        mtime = os.stat(path).st_mtime_ns
        known = _manifests.get(str(path))
        if known is not None and known[0] == mtime:
            return known[1]
        manifest = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict):
        return None
    _manifests[str(path)] = (mtime, manifest)
    return manifest


def unpack(digest: str, data: bytes, root: Path | None = None, *, max_bytes: int = MAX_BUNDLE_BYTES) -> Path:
    """Put bundle ``digest`` (``data``: the compressed tar) in the cache; its files' folder.

    The data must hash to the digest (else TournamentError: the worker does not play with it).
    A changed copy already there is moved aside and replaced."""
    _check_digest(digest)
    root = root or cache_root()
    raw = _inflate(data, max_bytes + (64 << 20))  # tar headers on top of the files
    if hashlib.sha256(raw).hexdigest() != digest:
        raise TournamentError(f"bundle {digest[:12]} arrived damaged (its content does not match its digest)")
    root.mkdir(parents=True, exist_ok=True)
    home = root / digest
    if os.path.lexists(home):
        if cached(digest, root) is not None:
            return home / FILES
        _remove(home, root)  # changed since it was unpacked: start again
    work = Path(tempfile.mkdtemp(prefix=f".unpack-{digest[:12]}-", dir=root))
    os.chmod(work, 0o755)  # bots run as another user (limits.user) reach their files through it
    try:
        _extract(raw, work / FILES, max_bytes)
        _read_only(work / FILES)
        (work / MANIFEST).write_text(json.dumps(_scan(work / FILES)))
        try:
            os.rename(work, home)
        except OSError:
            if cached(digest, root) is None:  # somebody else's copy, but not a sound one
                raise
        return home / FILES
    finally:
        if work.exists():
            _remove(work, root)


def _check_digest(digest: str) -> None:
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise TournamentError(f"not a bundle digest: {printable(digest[:80])!r}")


def _inflate(data: bytes, limit: int) -> bytes:
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(data, limit + 1)
    except zlib.error as e:
        raise TournamentError(f"a bundle arrived damaged: {e}") from None
    if len(raw) > limit or inflater.unconsumed_tail:
        raise TournamentError(f"a bundle unpacks to more than {human_size(limit)}")
    return raw


def _extract(raw: bytes, dest: Path, max_bytes: int) -> None:
    """Unpack a bundle's tar into ``dest``: regular files, folders and links inside it only."""
    dest.mkdir()
    total = 0
    names: set[str] = set()
    links: set[str] = set()
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tar:
        members = tar.getmembers()
        if len(members) > MAX_BUNDLE_FILES:
            raise TournamentError(f"a bundle holds more than {MAX_BUNDLE_FILES} files")
        for m in members:
            name = m.name
            shown = printable(name[:200])
            parts = name.split("/")
            if not name or name.startswith("/") or "\\" in name or any(p in ("", ".", "..") for p in parts):
                raise TournamentError(f"a bundle holds the unsafe path {shown!r}: not unpacked")
            if name in names:
                raise TournamentError(f"a bundle holds {shown!r} twice: not unpacked")
            if any("/".join(parts[:k]) in links for k in range(1, len(parts))):
                raise TournamentError(f"a bundle writes {shown!r} through a link: not unpacked")
            names.add(name)
            if m.issym():
                target = posixpath.normpath(posixpath.join(posixpath.dirname(name), m.linkname))
                if m.linkname.startswith("/") or target == ".." or target.startswith("../"):
                    raise TournamentError(f"a bundle's link {shown!r} leaves the bundle: not unpacked")
                links.add(name)
            elif not (m.isreg() or m.isdir()):
                raise TournamentError(f"a bundle holds {shown!r}, neither a file nor a folder")
            total += m.size if m.isreg() else 0
            if total > max_bytes:
                raise TournamentError(f"a bundle holds more than {human_size(max_bytes)} of files")
        made = {""}
        for m in members:  # in order: a folder comes before what it holds (pack sorts names)
            parent = m.name.rpartition("/")[0]
            if parent not in made:
                os.makedirs(os.path.join(dest, parent), exist_ok=True)
                made.add(parent)
            path = os.path.join(dest, m.name)
            if m.isdir():
                os.makedirs(path, exist_ok=True)
                made.add(m.name)
            elif m.issym():
                os.symlink(m.linkname, path)
            else:
                source = tar.extractfile(m)
                assert source is not None
                fd = os.open(
                    path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o755 if m.mode & 0o111 else 0o644
                )
                with os.fdopen(fd, "wb") as out:
                    shutil.copyfileobj(source, out)


def _scan(files: Path) -> dict[str, list[int]] | None:
    """What the manifest records of a bundle's folder: per entry, [kind, size, mode, mtime_ns]
    (kind 0 a file, 1 a folder, 2 a link); None if it cannot be read."""
    out: dict[str, list[int]] = {}
    todo = [("", str(files))]
    try:
        while todo:
            prefix, folder = todo.pop()
            with os.scandir(folder) as entries:
                for entry in entries:
                    st = entry.stat(follow_symlinks=False)
                    mode = st.st_mode
                    name = prefix + entry.name
                    if stat.S_ISDIR(mode):
                        if entry.name == "__pycache__":
                            continue  # Python's byte-code caches (a bot run as root writes them): derived
                        out[name] = [1, 0, stat.S_IMODE(mode), 0]
                        todo.append((name + "/", entry.path))
                    elif stat.S_ISLNK(mode):
                        out[name] = [2, 0, 0, 0]
                    else:
                        out[name] = [0, st.st_size, stat.S_IMODE(mode), st.st_mtime_ns]
    except OSError:
        return None
    return out


def _read_only(files: Path) -> None:
    for dirpath, _, filenames in os.walk(files, topdown=False):
        for name in filenames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                os.chmod(path, 0o555 if os.stat(path).st_mode & 0o111 else 0o444)
        os.chmod(dirpath, 0o555)


def _remove(path: Path, root: Path) -> None:
    """Remove a (read-only) cache entry: renamed aside first, so nobody starts using half of it."""
    aside = root / f".trash-{uuid.uuid4().hex}"
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return
    for dirpath, _, _ in os.walk(aside):
        os.chmod(dirpath, 0o755)
    shutil.rmtree(aside, ignore_errors=True)
