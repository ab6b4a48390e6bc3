"""Where a run's matches are played, chosen in one place from the run's :class:`Venue`."""

from __future__ import annotations

from arbiter.execution.executors import Executor, LocalExecutor, Venue
from arbiter.execution.remote import RemoteExecutor, RoutedExecutor


def default_executor(venue: Venue) -> Executor:
    """Worker processes of this machine, or the Dask cluster's; matches with a remote seat played
    here, where the lobby listens (docs/remote.md), the others routed as usual."""

    def local() -> Executor:
        if venue.cluster:  # arbiter run --cluster: the matches are Dask tasks (docs/cluster.md)
            from arbiter.execution.cluster import DaskExecutor

            return DaskExecutor(venue.entrants, venue.cluster, venue.log_folder)
        return LocalExecutor(venue.workers, venue.log_folder / "arbiter.log")

    if not any(e.remote for e in venue.entrants):
        return local()
    return RoutedExecutor(RemoteExecutor(venue), local, venue.workers)
