"""Playing a tournament's matches on a Dask cluster (``arbiter run --cluster tcp://HOST:PORT``).

The coordinator (the ``arbiter run`` process) keeps everything a local run keeps: the schedule,
the lease, the log folder, the database and the ratings; only the playing moves, to the
:class:`~.executor.DaskExecutor`. :mod:`.shipping` is what travels between the two sides and
what both must share; :mod:`.executor` the coordinator's side; :mod:`.plugin` a worker's.
docs/cluster.md says how to set a cluster up.
"""

from arbiter.execution.cluster.executor import DaskExecutor

__all__ = ["DaskExecutor"]
