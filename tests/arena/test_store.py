"""The arena's authors and submissions (ArenaStore) on a real SQLite file and a real PostgreSQL
server: tokens, name ownership, versions, check decisions and retirement, rows changed outside
the arbiter, and submissions of one name from several threads at once."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from typing import TypeVar

import pytest
from sqlalchemy import text
from sqlalchemy.engine import Engine

from arbiter.errors import NameTaken, StorageError, TokenRefused
from arbiter.lobby.keys import AUTHOR_PREFIX, new_key, parse_key, secret_sha256
from arbiter.storage import open_database
from arbiter.storage.arena import ACTIVE, CHECKING, REJECTED, RETIRED, ArenaStore, SubmissionRow
from arbiter.storage.credentials import AuthorTokens
from tests.tournament.conftest import pg_url, postgres_server  # noqa: F401 - fixtures reused here

TOKEN_RE = re.compile(r"ba1\.[0-9a-f]{16}\.[A-Za-z0-9_-]{43}")
UNKNOWN = "unknown token: check the token file, or ask the organiser for a token"
BUNDLE = "0" * 64
T = TypeVar("T")


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'arena.db'}"
    return request.getfixturevalue("pg_url")


@pytest.fixture
def engine(database) -> Iterator[Engine]:
    engine = open_database(database)
    yield engine
    engine.dispose()


def submit(store: ArenaStore, author: str, entrant: str, arena: str = "ladder", house: tuple[str, ...] = ()):
    return store.open_submission(arena, author, entrant, BUNDLE, f"python {entrant}.py", house=house)


# ---- authors and their tokens --------------------------------------------------------------------
def test_add_check_revoke_and_add_again(database, engine):
    store = ArenaStore(engine)
    alice, bob = AuthorTokens(store.engine).issue("alice"), AuthorTokens(store.engine).issue("bob")
    assert TOKEN_RE.fullmatch(alice) and TOKEN_RE.fullmatch(bob)
    assert (
        AuthorTokens(store.engine).holder_of(alice) == "alice"
        and AuthorTokens(store.engine).holder_of(bob + "\n") == "bob"
    )

    token_id, secret = parse_key(alice, AUTHOR_PREFIX)
    wrong_secret = f"ba1.{token_id}.{'A' * 43 if secret != 'A' * 43 else 'B' * 43}"
    unknown_id = f"ba1.{'0' * 16 if token_id != '0' * 16 else '1' * 16}.{secret}"
    for refused in (wrong_secret, unknown_id):  # the same answer: no telling which token ids exist
        with pytest.raises(TokenRefused) as e:
            AuthorTokens(store.engine).holder_of(refused)
        assert str(e.value) == UNKNOWN
    entrant_key = new_key()[2]  # an entrant key is not an author token, even with a known id
    for malformed in ("alice", entrant_key, alice.replace("ba1", "bk1"), "ba1." + "x" * 1_000_000):
        with pytest.raises(TokenRefused, match=r"^malformed token: an author token looks like ba1\.<16 hex") as e:
            AuthorTokens(store.engine).holder_of(malformed)
        assert secret not in str(e.value)

    with pytest.raises(NameTaken, match="author 'alice' already has a live token: `arbiter author revoke alice`"):
        AuthorTokens(store.engine).issue("alice")
    assert AuthorTokens(open_database(database)).revoke("alice") == 1  # another engine, as the CLI
    with pytest.raises(TokenRefused) as e:
        AuthorTokens(store.engine).holder_of(alice)
    assert re.fullmatch(
        r"this token was revoked on \d{4}-\d\d-\d\d \d\d:\d\d UTC: ask the organiser for a new one", str(e.value)
    )
    assert AuthorTokens(store.engine).holder_of(bob) == "bob" and AuthorTokens(store.engine).revoke("alice") == 0

    again = AuthorTokens(store.engine).issue("alice")  # a new token for a revoked author; the old one stays refused
    assert AuthorTokens(store.engine).holder_of(again) == "alice" and again != alice
    with pytest.raises(TokenRefused, match="^unknown token"):
        AuthorTokens(store.engine).holder_of(alice)


def test_the_database_never_holds_a_token_in_clear(tmp_path):
    engine = open_database(f"sqlite:///{tmp_path / 'arena.db'}")
    try:
        tokens = [AuthorTokens(engine).issue(f"author{i}") for i in range(5)]
        with engine.connect() as conn:
            digests = conn.execute(text("SELECT token_sha256 FROM authors ORDER BY id")).scalars().all()
    finally:
        engine.dispose()
    stored = b"".join(f.read_bytes() for f in tmp_path.iterdir())  # the database file, its WAL and shared memory
    for token, digest in zip(tokens, digests, strict=True):
        token_id, secret = parse_key(token, AUTHOR_PREFIX)
        assert digest == secret_sha256(secret)
        assert secret.encode() not in stored and secret[:20].encode() not in stored and token.encode() not in stored
        assert token_id.encode() in stored and digest.encode() in stored  # the search does see what is there


# ---- names, versions, decisions ------------------------------------------------------------------
def test_a_name_belongs_to_the_author_who_used_it_first(engine):
    store = ArenaStore(engine)
    for name in ("alice", "bob", "carol"):
        AuthorTokens(store.engine).issue(name)
    first = submit(store, "alice", "wolf")
    store.decide(first.id, False, '{"passed": false}')  # a rejected first submission still takes the name
    with pytest.raises(NameTaken, match="the name 'wolf' belongs to another author in arena 'ladder': give your bot"):
        submit(store, "bob", "wolf")
    with pytest.raises(NameTaken, match="the name 'random' is a house entrant's in arena 'ladder'"):
        submit(store, "bob", "random", house=("random", "heuristic"))
    assert submit(store, "bob", "wolf", arena="other").author == "bob"  # names are per arena
    assert submit(store, "alice", "wolf").version == 2
    assert [r.author for r in store.versions("ladder", "wolf")] == ["alice", "alice"]

    AuthorTokens(store.engine).revoke("carol")  # a revoked author submits nothing, even with a name of their own
    with pytest.raises(TokenRefused, match="author 'carol' has no live token"):
        submit(store, "carol", "fox")
    assert store.versions("ladder", "fox") == []


def test_names_are_one_name_in_any_case(engine):
    """``Heuristic`` beside the house's ``heuristic``, ``WOLF`` beside another author's ``wolf``:
    refused, on SQLite and PostgreSQL alike; a name's own author keeps its spelling."""
    store = ArenaStore(engine)
    for name in ("alice", "bob"):
        AuthorTokens(store.engine).issue(name)
    with pytest.raises(
        NameTaken, match="the name 'Heuristic' is a house entrant's in arena 'ladder' .spelt 'heuristic'"
    ):
        submit(store, "bob", "Heuristic", house=("random", "heuristic"))
    submit(store, "alice", "wolf")
    with pytest.raises(NameTaken, match="'WOLF' is another author's entrant in arena 'ladder', spelt 'wolf'"):
        submit(store, "bob", "WOLF")
    with pytest.raises(NameTaken, match="'Wolf' is one of your entrants in arena 'ladder', spelt 'wolf'.*its spelling"):
        submit(store, "alice", "Wolf")
    assert [r.entrant for r in store.every()] == ["wolf"]
    assert submit(store, "bob", "Wolf", arena="other").entrant == "Wolf"  # names are per arena
    assert submit(store, "alice", "wolf").version == 2


def test_versions_statuses_and_retirement(engine):
    store = ArenaStore(engine)
    AuthorTokens(store.engine).issue("alice")
    AuthorTokens(store.engine).issue("bob")
    v1 = submit(store, "alice", "wolf")
    assert (v1.version, v1.status, v1.versioned_name, v1.report, v1.decided_at) == (1, CHECKING, "wolf@1", "", None)
    assert v1.created_at.tzinfo is not None and isinstance(v1, SubmissionRow)
    with pytest.raises(AttributeError):
        v1.status = ACTIVE  # type: ignore[misc]  # a plain frozen value, not the ORM row
    assert store.checking("ladder") == [v1] and store.active("ladder") == []

    active1 = store.decide(v1.id, True, '{"passed": true}')
    assert (active1.status, active1.report, active1.retired_at) == (ACTIVE, '{"passed": true}', None)
    assert active1.decided_at is not None and active1.decided_at >= v1.created_at
    with pytest.raises(StorageError, match=r"submission \d+ \(wolf@1\) was decided already: it is active"):
        store.decide(v1.id, False, "{}")
    with pytest.raises(StorageError, match="no submission 9999"):
        store.decide(9999, True, "{}")

    v2 = submit(store, "alice", "wolf")
    assert store.decide(v2.id, False, '{"passed": false}').status == REJECTED  # a failing version: v1 plays on
    assert [r.versioned_name for r in store.active("ladder")] == ["wolf@1"]

    v3 = submit(store, "alice", "wolf")
    assert store.decide(v3.id, True, "{}").status == ACTIVE  # a passing version: the previous one retires
    statuses = [(r.version, r.status) for r in store.versions("ladder", "wolf")]
    assert statuses == [(1, RETIRED), (2, REJECTED), (3, ACTIVE)]
    retired1 = store.submission(v1.id)
    assert retired1 is not None and retired1.retired_at is not None and retired1.report == '{"passed": true}'

    v4, v5 = submit(store, "alice", "wolf"), submit(store, "alice", "wolf")
    assert store.checking("ladder") == [v4, v5]
    assert store.decide(v5.id, True, "{}").status == ACTIVE
    late = store.decide(v4.id, True, "{}")  # passed after a newer version: retired at once, the newest plays
    assert late.status == RETIRED and late.retired_at is not None
    assert [r.versioned_name for r in store.active("ladder")] == ["wolf@5"]

    fox = submit(store, "bob", "fox")
    store.decide(fox.id, True, "{}")
    assert [r.versioned_name for r in store.active("ladder")] == ["fox@1", "wolf@5"]
    assert store.retire("ladder", "bob", "wolf") is None  # not bob's: nothing retired, nothing told
    retired = store.retire("ladder", "alice", "wolf")
    assert retired is not None and (retired.version, retired.status) == (5, RETIRED)
    assert store.retire("ladder", "alice", "wolf") is None
    assert [r.versioned_name for r in store.active("ladder")] == ["fox@1"]
    assert store.submission(12345) is None
    assert [r.version for r in store.versions("ladder", "wolf")] == [1, 2, 3, 4, 5]  # every version kept


def test_a_row_changed_outside_the_arbiter_is_refused_with_one_line(tmp_path):
    engine = open_database(f"sqlite:///{tmp_path / 'arena.db'}")
    try:
        store = ArenaStore(engine)
        token = AuthorTokens(store.engine).issue("alice")
        row = submit(store, "alice", "wolf")
        with engine.begin() as conn:
            conn.execute(text("UPDATE submissions SET version = 'two'"))
        with pytest.raises(StorageError, match="table submissions, row id 1, column version: 'two' is not a whole"):
            store.versions("ladder", "wolf")
        with pytest.raises(StorageError, match="table submissions, row id 1, column version"):
            submit(store, "alice", "wolf")
        with engine.begin() as conn:
            conn.execute(text("UPDATE submissions SET version = 1, decided_at = 'yesterday'"))
        with pytest.raises(
            StorageError, match="table submissions, row id 1, column decided_at: 'yesterday' is not a date"
        ):
            store.decide(row.id, True, "{}")
        with engine.begin() as conn:
            conn.execute(text("UPDATE authors SET token_sha256 = X'0102'"))
        with pytest.raises(
            StorageError, match=r"table authors, row id 1, column token_sha256: b'.x01.x02' is not a text"
        ):
            AuthorTokens(store.engine).holder_of(token)
    finally:
        engine.dispose()


# ---- at the same moment --------------------------------------------------------------------------
def at_once(count: int, work: Callable[[int], T]) -> list[T | BaseException]:
    """``work(i)`` in ``count`` threads released together; each one's result or error."""
    start = threading.Barrier(count)
    results: list[T | BaseException] = [RuntimeError("did not run")] * count

    def run(i: int) -> None:
        start.wait()
        try:
            results[i] = work(i)
        except BaseException as e:
            results[i] = e

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return results


def test_submissions_of_one_name_at_the_same_moment_get_distinct_versions(database):
    engines = [open_database(database) for _ in range(8)]  # as from 8 processes: each its own connections
    try:
        store = ArenaStore(engines[0])
        AuthorTokens(store.engine).issue("alice")
        results = at_once(8, lambda i: submit(ArenaStore(engines[i]), "alice", "wolf"))
        assert all(isinstance(r, SubmissionRow) for r in results), results
        assert sorted(r.version for r in results if isinstance(r, SubmissionRow)) == list(range(1, 9))
        assert [r.version for r in store.versions("ladder", "wolf")] == list(range(1, 9))

        for name in ("bob", "carol", "dave"):
            AuthorTokens(store.engine).issue(name)
        claims = ["bob", "carol", "dave", "bob", "carol", "dave"]
        results = at_once(6, lambda i: submit(ArenaStore(engines[i]), claims[i], "fox"))  # a new name, claimed at once
        won = [r for r in results if isinstance(r, SubmissionRow)]
        lost = [r for r in results if not isinstance(r, SubmissionRow)]
        assert len({r.author for r in won}) == 1 and all(isinstance(e, NameTaken) for e in lost), results
        assert sorted(r.version for r in won) == list(range(1, len(won) + 1))
        owner = won[0].author
        assert len(won) == claims.count(owner) and {r.author for r in store.versions("ladder", "fox")} == {owner}

        ids = [r.id for r in store.versions("ladder", "wolf")]  # (PostgreSQL's ids have gaps: inserts that lost)
        passed = at_once(8, lambda i: ArenaStore(engines[i]).decide(ids[i], True, "{}"))  # every version passes at once
        assert all(isinstance(r, SubmissionRow) for r in passed), passed
        wolves = store.versions("ladder", "wolf")
        assert [r.version for r in wolves if r.status == ACTIVE] == [8]  # the newest plays, only it
        assert all(r.status == RETIRED and r.retired_at is not None for r in wolves[:-1])
    finally:
        for engine in engines:
            engine.dispose()
