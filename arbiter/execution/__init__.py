"""Where matches are played: one task played the one way (``play``), by executors that run it in
worker processes (``executors``, ``processes``, ``worker``), on a Dask cluster (``cluster``), or
where the lobby listens when a seat is played from elsewhere (``remote``); the entrants' folders
as bundles that travel (``bundle``). Plain values in (a MatchTask), plain values out (a
MatchOutcome): it knows nothing of tournaments, schedules or storage."""
