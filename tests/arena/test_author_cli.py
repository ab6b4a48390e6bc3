"""``arbiter author add/revoke`` end to end in a subprocess, on a real SQLite file and a real
PostgreSQL server: the token alone on the last line, printed once, only its hash kept; one
``error:`` line for every mistake."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from arbiter.errors import TokenRefused
from arbiter.lobby.keys import AUTHOR_PREFIX, parse_key
from arbiter.storage import open_database
from arbiter.storage.credentials import AuthorTokens
from tests.tournament.conftest import pg_url, postgres_server  # noqa: F401 - fixtures reused here

TOKEN_RE = re.compile(r"ba1\.[0-9a-f]{16}\.[A-Za-z0-9_-]{43}")


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


def author_of(database: str, token: str) -> str:
    engine = open_database(database)
    try:
        return AuthorTokens(engine).holder_of(token)
    finally:
        engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "arena.db")  # a plain file name, as an organiser types it
    return request.getfixturevalue("pg_url")


def test_author_add_prints_the_token_alone_on_its_last_line_and_revoke_revokes_it(database, tmp_path):
    made = arbiter("author", "add", "alice", "--db", database, cwd=tmp_path)
    assert made.returncode == 0 and made.stderr == "", made
    lines = made.stdout.splitlines()
    token = lines[-1]
    assert len(lines) > 2 and TOKEN_RE.fullmatch(token)
    assert "arbiter submit DIR --arena" in made.stdout and "--token-file FILE" in made.stdout
    assert "save it in a file" in made.stdout
    assert made.stdout.count(token) == 1 and parse_key(token, AUTHOR_PREFIX)[1] not in "\n".join(lines[:-1])
    assert "pw@" not in made.stdout  # the database is shown without its password
    assert author_of(database, token) == "alice"

    assert_one_error_line(
        arbiter("author", "add", "alice", "--db", database, cwd=tmp_path),
        "author 'alice' already has a live token",
        "arbiter author revoke alice",
    )
    bob = json.loads(arbiter("author", "add", "bob", "--db", database, "--json", cwd=tmp_path).stdout)
    assert bob["author"] == "bob" and parse_key(bob["token"], AUTHOR_PREFIX)[0] == bob["token_id"]
    assert author_of(database, bob["token"]) == "bob"

    revoked = arbiter("author", "revoke", "alice", "--db", database, "--json", cwd=tmp_path)
    assert revoked.returncode == 0 and json.loads(revoked.stdout)["revoked"] == 1, revoked
    with pytest.raises(TokenRefused, match="was revoked on"):
        author_of(database, token)
    assert author_of(database, bob["token"]) == "bob"
    assert_one_error_line(
        arbiter("author", "revoke", "alice", "--db", database, cwd=tmp_path),
        "author alice has no live token",
        "nothing",
    )
    again = arbiter("author", "add", "alice", "--db", database, cwd=tmp_path)  # a new token after a revocation
    assert again.returncode == 0 and author_of(database, again.stdout.splitlines()[-1]) == "alice"
    plain = arbiter("author", "revoke", "bob", "--db", database, cwd=tmp_path)
    assert plain.returncode == 0 and plain.stdout.startswith("revoked 1 token of author bob in database "), plain


def test_author_add_finds_the_database_of_an_arena_file(tmp_path):
    (tmp_path / "league.yaml").write_text(
        "name: ladder\ndatabase: results/ladder.db\n"
        "entrants:\n  - {name: random, command: python random.py}\n  - {name: greedy, command: python greedy.py}\n"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    made = arbiter("author", "add", "alice", str(tmp_path / "league.yaml"), cwd=elsewhere)
    assert made.returncode == 0, made
    assert author_of(str(tmp_path / "results" / "ladder.db"), made.stdout.splitlines()[-1]) == "alice"
    revoked = arbiter("author", "revoke", "alice", str(tmp_path / "league.yaml"), cwd=elsewhere)
    assert revoked.returncode == 0, revoked
    assert not (elsewhere / "logs").exists()  # nothing made at the default place
    assert "http://127.0.0.1:8080/me" in made.stdout  # an arena file without web: the default one


def test_author_add_names_the_arenas_pages_from_its_web_address(tmp_path):
    """The token comes with the arena's own addresses: the corner, the site, the submit command."""
    (tmp_path / "arena.yaml").write_text(
        "name: ladder\ndatabase: ladder.db\nweb: 127.0.0.1:8087\n"
        "entrants:\n  - {name: random, command: python random.py}\n  - {name: greedy, command: python greedy.py}\n"
    )
    made = arbiter("author", "add", "alice", str(tmp_path / "arena.yaml"), cwd=tmp_path)
    assert made.returncode == 0, made
    assert "arbiter submit DIR --arena http://127.0.0.1:8087 --token-file FILE --wait" in made.stdout
    assert "http://127.0.0.1:8087/me" in made.stdout and "(the site: http://127.0.0.1:8087/)" in made.stdout


def test_author_commands_say_what_is_wrong_in_one_line(tmp_path):
    assert_one_error_line(arbiter("author", "add", "bad name", "--db", "a.db", cwd=tmp_path), "author name 'bad name'")
    assert_one_error_line(arbiter("author", "add", "x@2", "--db", "a.db", cwd=tmp_path), "author name 'x@2'")
    assert_one_error_line(arbiter("author", "add", "x" * 65, "--db", "a.db", cwd=tmp_path), "at most 64")
    assert not (tmp_path / "a.db").exists()
    assert_one_error_line(arbiter("author", "revoke", "alice", "--db", "none.db", cwd=tmp_path), "no such database")
    assert not (tmp_path / "none.db").exists()
    assert_one_error_line(
        arbiter("author", "add", "alice", "--db", "postgresql://arena:pw@127.0.0.1:1/arena", cwd=tmp_path),
        "cannot reach database postgresql+psycopg://arena:***@127.0.0.1:1/arena",
    )
    assert_one_error_line(arbiter("author", "add", "alice", "--db", "", cwd=tmp_path), "database name is empty")
    assert_one_error_line(arbiter("author", "add", "alice", "--db", str(tmp_path), cwd=tmp_path), "is a folder")
    assert_one_error_line(arbiter("author", "add", "alice", str(tmp_path / "no.yaml"), cwd=tmp_path), "no.yaml")
    assert_one_error_line(arbiter("author", "add", cwd=tmp_path), "Missing argument 'NAME'")
