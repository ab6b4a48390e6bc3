"""The pages to find one's way in an arena: every match (``/matches``, filtered by entrant,
version and time, paged by keyset), the matches in play now (``/live``) and the API's own
documentation (``/docs``), read from the app's OpenAPI schema and rendered here, so it loads
nothing from anywhere else (FastAPI's interactive pages fetch their scripts from a CDN).

The matches page pages as ``GET /api/matches`` does: ``before=ID`` shows the matches below that
id, newest first, so a page never shifts when matches are recorded meanwhile. ``/live`` and
``/matches`` refresh themselves on the arena's events (``static/arena.js``), as the leaderboard.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import FastAPI, Query
from fastapi.responses import HTMLResponse

from arbiter.errors import ArbiterError

from .service import MAX_PAGE, ArenaService
from .views import MAX_ID

PAGE = 50  # matches a page of /matches shows
NAME_FILTER = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
METHODS = ("get", "post", "put", "patch", "delete")


def arena_title(arena: str) -> str:
    """How the arena is called for people: its name, with what it is unless the name says it."""
    return arena if "arena" in arena.lower() else f"{arena} arena"


def _when(text: str | None) -> datetime | None:
    """A time typed in the filter form (``2026-12-02``, ``2026-12-02T10:30``), read as UTC."""
    if not text:
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ArbiterError(f"{text!r} is not a time: write it as 2026-12-02 or 2026-12-02T10:30") from None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when


def _schema_name(schema: dict[str, Any]) -> str:
    """A JSON schema as a short type: ``MatchPage``, ``integer``, ``string | null``."""
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if "anyOf" in schema:
        return " | ".join(_schema_name(s) for s in schema["anyOf"])
    if schema.get("type") == "array":
        return f"list of {_schema_name(schema.get('items', {}))}"
    return str(schema.get("type", "any"))


def api_reference(openapi: dict[str, Any]) -> list[dict[str, Any]]:
    """The API's operations as the docs page lists them, in the schema's order: method, path,
    summary, description, parameters and the shape of a success."""
    out = []
    for path, item in openapi.get("paths", {}).items():
        for method in METHODS:
            op = item.get(method)
            if op is None:
                continue
            params = [
                {
                    "name": p["name"],
                    "in": p["in"],
                    "type": _schema_name(p.get("schema", {})),
                    "required": p.get("required", False),
                    "description": p.get("description") or p.get("schema", {}).get("description", ""),
                }
                for p in op.get("parameters", [])
            ]
            if "requestBody" in op:
                params.append(
                    {
                        "name": "body",
                        "in": "body",
                        "type": "multipart/form-data",
                        "required": True,
                        "description": "the bot's folder as an archive, in the field `bundle`",
                    }
                )
            ok: dict[str, Any] = next((r for code, r in op.get("responses", {}).items() if code.startswith("2")), {})
            content = ok.get("content", {})
            returns = ", ".join(
                _schema_name(c.get("schema", {})) if c.get("schema") else kind for kind, c in content.items()
            )
            out.append(
                {
                    "method": method.upper(),
                    "path": path,
                    "summary": op.get("summary", ""),
                    "description": op.get("description", ""),
                    "params": params,
                    "returns": returns,
                    "tag": (op.get("tags") or ["other"])[0],
                    "auth": bool(op.get("security")),
                    "anchor": f"{method}-{path}".replace("/", "-").replace("{", "").replace("}", ""),
                }
            )
    return out


def add_browse(
    app: FastAPI,
    service: ArenaService,
    page: Callable[..., HTMLResponse],
    missing: Callable[[ArbiterError, int], HTMLResponse],
) -> None:
    """``/matches``, ``/live`` and ``/docs`` on ``app``; ``page(template, **context)`` renders
    one of the arena's pages and ``missing(error, status)`` says what is wrong."""
    arena = service.arena

    @app.get("/matches", response_class=HTMLResponse, include_in_schema=False)
    def matches(
        entrant: Annotated[str | None, Query(max_length=64)] = None,
        version: Annotated[int | None, Query(ge=1, le=10**9)] = None,
        since: Annotated[str | None, Query(max_length=40)] = None,
        until: Annotated[str | None, Query(max_length=40)] = None,
        before: Annotated[int | None, Query(ge=1, le=MAX_ID)] = None,
        limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = PAGE,
    ) -> HTMLResponse:
        filters = {"entrant": entrant or "", "version": version or "", "since": since or "", "until": until or ""}
        try:
            if version is not None and not entrant:
                raise ArbiterError("a version is a version of an entrant: name the entrant too")
            who = f"{entrant}@{version}" if entrant and version else entrant or None
            found = service.matches(entrant=who, since=_when(since), until=_when(until), before=before, limit=limit)
        except ArbiterError as e:
            return missing(e, 404 if "no entrant" in str(e) else 400)
        kept: dict[str, Any] = {k: v for k, v in filters.items() if v != ""}
        if limit != PAGE:
            kept["limit"] = limit
        older = None
        if found.next_before is not None:
            older = "/matches?" + urlencode({**kept, "before": found.next_before})
        newest = "/matches" + ("?" + urlencode(kept) if kept else "")
        names = sorted({*service.house, *(row.entrant for row in service.store.active(arena))})
        return page(
            "arena_matches.html",
            title=f"Matches — {arena_title(arena)}",
            found=found,
            filters=filters,
            older=older,
            newest=newest if before is not None else None,
            names=names,
            paged=before is not None,
        )

    @app.get("/live", response_class=HTMLResponse, include_in_schema=False)
    def live() -> HTMLResponse:
        return page(
            "arena_live.html",
            title=f"Live — {arena_title(arena)}",
            live=service.live(),
            state=service.state(),
            recent=service.matches(limit=10).matches,
        )

    @app.get("/docs", response_class=HTMLResponse, include_in_schema=False)
    def docs() -> HTMLResponse:
        operations = api_reference(app.openapi())
        tags = list(dict.fromkeys(op["tag"] for op in operations))
        return page("arena_docs.html", title=f"API — {arena_title(arena)}", operations=operations, tags=tags)
