"""``arbiter serve``: a standing arena until stopped (arbiter/arena/serve.py); registered in
arbiter/cli/__init__.py.

A mistake in the arena file, a database another server holds, a web address in use: one
``error: ...`` line, exit 2. SIGTERM or Ctrl-C drains (no new match; the matches in play end),
then exits 0; a second signal stops at once (the matches in play are played again at the next
start), exit 0 as well: nothing recorded is lost either way.
"""

from __future__ import annotations

from typing import Annotated

import typer

from arbiter.cli.common import ClusterOption, DatabaseOption, JobsOption, cluster_address, user_errors


def serve_command(
    arena: Annotated[str, typer.Argument(metavar="ARENA", help="An arena file (YAML), e.g. tournaments/arena.yaml.")],
    db: DatabaseOption = None,
    web: Annotated[
        str | None,
        typer.Option(
            "--web",
            metavar="HOST:PORT",
            help="Where the API listens (default: the file's 'web'; port 0: any free one).",
        ),
    ] = None,
    jobs: JobsOption = None,
    cluster: ClusterOption = None,
    api_only: Annotated[
        bool,
        typer.Option(
            "--api-only",
            help="Serve only the API and the pages from the arena's PostgreSQL database; the ladder runs in "
            "another 'arbiter serve' (several such processes may run at once).",
        ),
    ] = False,
) -> None:
    """Run a standing arena: submissions, a continuous ladder, its API; until stopped."""
    from arbiter.arena.config import load_arena
    from arbiter.arena.serve import serve
    from arbiter.errors import ConfigError

    with user_errors():
        if not arena.strip():
            raise ConfigError("the arena file name is empty")
        config = load_arena(arena)
        if api_only:
            from arbiter.arena.replicas import serve_api

            served = serve_api(config, database=db, web=web, announce=lambda line: typer.echo(line, err=True))
            typer.echo(f"arena {served.arena!r}: the API at {served.web} stopped; {served.wall_seconds:.1f}s", err=True)
            return
        result = serve(
            config,
            database=db,
            web=web,
            jobs=jobs,
            cluster=cluster_address(cluster) if cluster else None,
            announce=lambda line: typer.echo(line, err=True),
        )
    how = "stopped (the matches in play are played again at the next start)" if result.abandoned else "drained"
    typer.echo(
        f"arena {result.arena!r} {how}: {result.played} matches recorded now, {result.recorded_before} before; "
        f"{result.wall_seconds:.1f}s",
        err=True,
    )
