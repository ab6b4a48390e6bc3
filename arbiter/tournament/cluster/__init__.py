"""Playing a tournament's matches on a Dask cluster (``arbiter run --cluster tcp://HOST:PORT``).

The coordinator (the ``arbiter run`` process) keeps everything a local run keeps: the schedule,
the lease, the log folder, the database and the ratings. Only the playing moves, to the
:class:`~arbiter.tournament.cluster.executor.DaskExecutor`: every match becomes one Dask task
that asks for one unit of the worker resource ``arena`` (``dask worker ... --resources arena=N``:
N matches at once on that worker). docs/cluster.md says how to set a cluster up.

* :mod:`.shipping`: what travels (entrants' commands rewritten into their bundles, a match's job
  and result) and what both sides must share (the project's identity, programs' versions).
* :mod:`.executor`: the coordinator's side: submitting, and receiving a result: the log checked
  (its digest, :func:`barbu.matchlog.verify`, that it is this match and says what the outcome
  says) and written to the log folder atomically, the outcome handed to the tournament loop.
* :mod:`.plugin`: a worker's side: the arena's :class:`distributed.WorkerPlugin` playing each
  match in a match process of the worker, set up and playing as a local pool worker does
  (:mod:`arbiter.tournament.worker`); a cancelled match is stopped, bots and all; idle match
  processes are retired.

The entrants' files travel as content-addressed bundles (:mod:`arbiter.tournament.bundle`),
held by the scheduler as Dask variables while the run lasts; a worker unpacks each into its
cache once. A program that is not in the entrant's folder (``node``, ``/usr/bin/java``) must be
on the worker at the same path with the same version, and the worker's Barbu Arena must be the
coordinator's; else the match is refused with a message naming the entrant and the worker.
"""

from arbiter.tournament.cluster.executor import DaskExecutor, run_on_cluster

__all__ = ["DaskExecutor", "run_on_cluster"]
