"""Entrant keys: the format, the store on a real SQLite file and a real PostgreSQL server, and
``arbiter key new/revoke`` end to end in a subprocess."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import text

from arbiter.errors import KeyRefused, StorageError
from arbiter.lobby.keys import MALFORMED, MAX_KEY_CHARS, UNKNOWN, new_key, parse_key, secret_matches, secret_sha256
from arbiter.storage import open_database
from arbiter.storage.credentials import EntrantKeys
from tests.tournament.conftest import pg_url, postgres_server  # noqa: F401 - fixtures reused here

KEY_RE = re.compile(r"bk1\.[0-9a-f]{16}\.[A-Za-z0-9_-]{43}")


# ---- the format -------------------------------------------------------------------------------
def test_a_new_key_holds_256_random_bits_and_parses_back():
    keys = [new_key() for _ in range(200)]
    assert len({k[2] for k in keys}) == len({k[0] for k in keys}) == 200
    for key_id, digest, whole in keys:
        assert KEY_RE.fullmatch(whole)
        assert parse_key(whole) == parse_key(f"  {whole}\n") == (key_id, whole.split(".")[2])
        secret = parse_key(whole)[1]
        assert digest == secret_sha256(secret) and secret not in digest
        assert secret_matches(secret, digest)
    secret_chars = {c for _, _, whole in keys for c in whole.split(".")[2]}
    assert len(secret_chars) > 60  # the whole URL-safe alphabet shows up: 6 bits a character, 43 characters


def test_a_secret_that_differs_anywhere_does_not_match():
    _, digest, whole = new_key()
    secret = parse_key(whole)[1]
    for i in (0, 21, 42):
        other = secret[:i] + ("A" if secret[i] != "A" else "B") + secret[i + 1 :]
        assert not secret_matches(other, digest)
    assert not secret_matches(secret, digest.upper()) and not secret_matches(secret, "")
    assert not secret_matches(secret, "é" * 64)  # a row edited to text that is not hex: no match, no error


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "bk1",
        "bk2.0123456789abcdef.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "bk1.0123456789ABCDEF.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",  # upper-case hex
        "bk1.0123456789abcde.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "bk1.0123456789abcdef.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",  # 42 characters
        "bk1.0123456789abcdef.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        "bk1.0123456789abcdef.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAÀ",
        "bk1.0123456789abcdef.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.x",
        "bk1.0123456789abcdef.AAAAAAAAAAAAAAAAAAAA\nAAAAAAAAAAAAAAAAAAAAAAA",
        "bk1.\u0660123456789abcdef.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",  # an Arabic-Indic digit
        "x" * (MAX_KEY_CHARS + 1),
        "bk1.0123456789abcdef." + "A" * 43 + " " * MAX_KEY_CHARS,  # a valid key padded past the bound
        "bk1.0123456789abcdef.sEcReT" + "x" * 1_000_000,  # a 1 MB "key": refused before any work
    ],
)
def test_a_malformed_key_is_refused_without_repeating_it(bad):
    with pytest.raises(KeyRefused) as e:
        parse_key(bad)
    assert str(e.value) == MALFORMED and "sEcReT" not in str(e.value)


# ---- the store ----------------------------------------------------------------------------------
@pytest.fixture(params=["sqlite", "postgresql"])
def database(request, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'keys.db'}"
    return request.getfixturevalue("pg_url")


def test_issue_check_and_revoke(database):
    engine = open_database(database)
    try:
        store = EntrantKeys(engine)
        first, second, bob = store.issue("alice"), store.issue("alice"), store.issue("bob")
        assert all(KEY_RE.fullmatch(k) for k in (first, second, bob))
        assert store.holder_of(first) == store.holder_of(second) == "alice"  # two live keys: rotation
        assert store.holder_of(bob + "\n") == "bob"

        key_id, secret = parse_key(first)
        wrong_secret = f"bk1.{key_id}.{'A' * 43 if secret != 'A' * 43 else 'B' * 43}"
        unknown_id = f"bk1.{'0' * 16 if key_id != '0' * 16 else '1' * 16}.{secret}"
        for refused in (wrong_secret, unknown_id):  # the same answer: no telling which key ids exist
            with pytest.raises(KeyRefused) as e:
                store.holder_of(refused)
            assert str(e.value) == UNKNOWN
        with pytest.raises(KeyRefused, match="^malformed key"):
            store.holder_of("alice")

        with open_database(database).connect() as other:  # another process's view: read afresh
            assert other.execute(text("SELECT count(*) FROM entrant_keys WHERE revoked_at IS NULL")).scalar() == 3
        assert EntrantKeys(open_database(database)).revoke("alice") == 2  # another engine, as `arbiter key revoke`
        for revoked in (first, second):
            with pytest.raises(KeyRefused) as e:
                store.holder_of(revoked)
            message = str(e.value)
            assert re.fullmatch(
                r"this key was revoked on \d{4}-\d\d-\d\d \d\d:\d\d UTC: ask the organiser for a new one", message
            )
            assert parse_key(revoked)[1] not in message
        assert store.holder_of(bob) == "bob"  # the others' keys are untouched
        assert store.revoke("alice") == 0
        with pytest.raises(KeyRefused) as e:  # a wrong secret for a revoked key id: unknown, not revoked
            store.holder_of(f"bk1.{key_id}.{'C' * 43}")
        assert str(e.value) == UNKNOWN
        third = store.issue("alice")  # a new key after a revocation works
        assert store.holder_of(third) == "alice"
    finally:
        engine.dispose()


def test_the_database_never_holds_a_key_in_clear(tmp_path):
    engine = open_database(f"sqlite:///{tmp_path / 'keys.db'}")
    try:
        keys = [EntrantKeys(engine).issue(f"entrant{i}") for i in range(5)]
        with engine.connect() as conn:
            digests = conn.execute(text("SELECT secret_sha256 FROM entrant_keys ORDER BY id")).scalars().all()
    finally:
        engine.dispose()
    stored = b"".join(f.read_bytes() for f in tmp_path.iterdir())  # the database file, its WAL and shared memory
    for key, digest in zip(keys, digests, strict=True):
        key_id, secret = parse_key(key)
        assert digest == secret_sha256(secret)
        assert secret.encode() not in stored and secret[:20].encode() not in stored and key.encode() not in stored
        assert key_id.encode() in stored and digest.encode() in stored  # the search does see what is there


def test_a_row_changed_outside_the_arbiter_is_refused_with_one_line(tmp_path):
    url = f"sqlite:///{tmp_path / 'keys.db'}"
    engine = open_database(url)
    try:
        key = EntrantKeys(engine).issue("alice")
        with engine.begin() as conn:
            conn.execute(text("UPDATE entrant_keys SET secret_sha256 = X'0102'"))  # bytes, not text
        with pytest.raises(
            StorageError, match="table entrant_keys, row id 1, column secret_sha256: b'.x01.x02' is not a text"
        ):
            EntrantKeys(engine).holder_of(key)
        with engine.begin() as conn:
            conn.execute(text(f"UPDATE entrant_keys SET secret_sha256 = '{secret_sha256(parse_key(key)[1])}'"))
            conn.execute(text("UPDATE entrant_keys SET revoked_at = 'yesterday'"))
        with pytest.raises(
            StorageError, match="table entrant_keys, row id 1, column revoked_at: 'yesterday' is not a date"
        ):
            EntrantKeys(engine).holder_of(key)
    finally:
        engine.dispose()


# ---- the command line ---------------------------------------------------------------------------
def arbiter(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arbiter", *args], capture_output=True, text=True, cwd=cwd, timeout=120
    )


def assert_one_error_line(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == 2, result
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


def entrant_of(database: str, key: str) -> str:
    engine = open_database(database)
    try:
        return EntrantKeys(engine).holder_of(key)
    finally:
        engine.dispose()


def test_key_new_prints_the_key_alone_on_its_last_line_and_revoke_revokes_it(tmp_path):
    db = tmp_path / "results.db"
    made = arbiter("key", "new", "alice", "--db", str(db), cwd=tmp_path)
    assert made.returncode == 0 and made.stderr == "", made
    lines = made.stdout.splitlines()
    assert len(lines) > 2 and KEY_RE.fullmatch(lines[-1])
    assert "--key-file" in made.stdout and "arbiter connect" in made.stdout
    assert "--key-file FILE --ca CA.pem -- BOT COMMAND" in made.stdout  # the docs' private CA works as printed
    assert made.stdout.count(lines[-1]) == 1  # printed once
    assert entrant_of(str(db), lines[-1]) == "alice"

    as_json = arbiter("key", "new", "alice", "--db", str(db), "--json", cwd=tmp_path)
    made_json = json.loads(as_json.stdout)
    assert made_json["entrant"] == "alice" and parse_key(made_json["key"])[0] == made_json["key_id"]
    assert entrant_of(str(db), made_json["key"]) == "alice"

    revoked = arbiter("key", "revoke", "alice", "--db", str(db), cwd=tmp_path)
    assert revoked.returncode == 0 and revoked.stdout.startswith("revoked 2 keys of entrant alice"), revoked
    for key in (lines[-1], made_json["key"]):
        with pytest.raises(KeyRefused, match="was revoked on"):
            entrant_of(str(db), key)
    assert_one_error_line(arbiter("key", "revoke", "alice", "--db", str(db), cwd=tmp_path), "no live key", "nothing")


def test_key_new_finds_the_database_of_a_tournament_file(tmp_path):
    (tmp_path / "league.yaml").write_text(
        "name: remote\ndatabase: results/league.db\n"
        "entrants:\n  - {name: alice, command: python alice.py}\n  - {name: bob, command: python bob.py}\n"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    made = arbiter("key", "new", "alice", str(tmp_path / "league.yaml"), cwd=elsewhere)
    assert made.returncode == 0, made
    assert entrant_of(str(tmp_path / "results" / "league.db"), made.stdout.splitlines()[-1]) == "alice"
    assert_one_error_line(
        arbiter("key", "new", "carol", str(tmp_path / "league.yaml"), cwd=elsewhere),
        "'carol' is not an entrant of",
        "alice, bob",
    )
    assert not (elsewhere / "logs").exists()  # nothing made at the default place


def test_key_commands_take_an_arena_file_as_author_commands_do(tmp_path):
    """An arena file names its remote entrants as a tournament file does: `key new` finds its
    database and its entrants, with or without the arena's own keys, and one house entrant."""
    lobby = "lobby: {listen: 127.0.0.1:0}\n"
    (tmp_path / "arena.yaml").write_text(
        "name: ladder\ndatabase: results/arena.db\nweb: 127.0.0.1:0\nmatchmaking: {provisional: 4}\n" + lobby
        + "entrants:\n  - {name: alice, remote: true}\n  - {name: house, command: python house.py}\n"
    )  # fmt: skip
    (tmp_path / "small.yaml").write_text(
        "name: small\ndatabase: results/small.db\n" + lobby + "entrants:\n  - {name: zoe, remote: true}\n"
    )
    made = arbiter("key", "new", "alice", "arena.yaml", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert entrant_of(str(tmp_path / "results" / "arena.db"), made.stdout.splitlines()[-1]) == "alice"
    assert_one_error_line(arbiter("key", "new", "carol", "arena.yaml", cwd=tmp_path), "'carol' is not an entrant of")
    made = arbiter("key", "new", "zoe", "small.yaml", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert entrant_of(str(tmp_path / "results" / "small.db"), made.stdout.splitlines()[-1]) == "zoe"
    revoked = arbiter("key", "revoke", "alice", "arena.yaml", cwd=tmp_path)
    assert revoked.returncode == 0 and revoked.stdout.startswith("revoked 1 key of entrant alice"), revoked
    (tmp_path / "broken.yaml").write_text("name: b\nweb: nowhere\nentrants: []\n")
    assert_one_error_line(arbiter("key", "new", "x", "broken.yaml", cwd=tmp_path), "web")


def test_key_commands_say_what_is_wrong_in_one_line(tmp_path):
    assert_one_error_line(arbiter("key", "new", "bad name", "--db", "k.db", cwd=tmp_path), "entrant name 'bad name'")
    assert_one_error_line(arbiter("key", "new", "-x", "--db", "k.db", cwd=tmp_path))
    assert_one_error_line(arbiter("key", "new", "x" * 65, "--db", "k.db", cwd=tmp_path), "at most 64")
    assert not (tmp_path / "k.db").exists()
    assert_one_error_line(arbiter("key", "revoke", "alice", "--db", "none.db", cwd=tmp_path), "no such database")
    assert not (tmp_path / "none.db").exists()
    assert_one_error_line(
        arbiter("key", "new", "alice", "--db", "postgresql://arena:pw@127.0.0.1:1/arena", cwd=tmp_path),
        "cannot reach database postgresql+psycopg://arena:***@127.0.0.1:1/arena",
    )
    assert_one_error_line(arbiter("key", "new", "alice", "--db", "mysql://h/d", cwd=tmp_path), "unsupported database")
    assert_one_error_line(arbiter("key", "new", "alice", "--db", str(tmp_path), cwd=tmp_path), "is a folder")
    assert_one_error_line(arbiter("key", "new", "alice", str(tmp_path / "no.yaml"), cwd=tmp_path), "no.yaml")
    assert_one_error_line(arbiter("key", "new", cwd=tmp_path), "Missing argument 'NAME'")
