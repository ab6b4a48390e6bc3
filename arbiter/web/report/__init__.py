"""``arbiter report``: one self-contained HTML page about a tournament.

The page shows, from the results database and the match logs it points to:

* the **standings**, the very numbers of ``arbiter standings`` (:func:`arbiter.tournament.ratings.standings`);
* the **rating history**: μ of every entrant after each rated game (the ``rating_history``
  table), as an inline SVG line chart;
* the **average deal score per contract** of each entrant (who is good at what), over all deals
  and over the deals it declared, from the match logs (the database keeps no per-deal data);
* **doubling**: per entrant, the doubles and redoubles it made and the net settlement those
  pairs brought it;
* **faults** by kind per entrant (the ``faults`` table) and forfeits;
* **every match**: seats, totals, status, and a link to its replay page. With ``--replays``
  (the default) each match's page is written next to the report, in ``OUT_replays/``, by the
  replay viewer (:mod:`arbiter.web.viewer`), and linked relatively, so the folder can be moved or
  served as it is. A log that is missing, unreadable, invalid or changed since it was recorded is
  said so in the list (and left out of the per-deal statistics); it never stops the report.

One module per job: :mod:`.gather` reads the database (through
:class:`~arbiter.storage.Repo` only), :mod:`.logs` the match logs, :mod:`.stats`
computes, :mod:`.render` fills ``templates/report.html``, and :mod:`.build` runs them in turn
and writes the files. The page holds its CSS, JavaScript, SVG and data inline and makes no
network request; its data are also embedded as JSON (``<script id="report-data">``) for tools
and tests. Everything here only reads the database.
"""

from __future__ import annotations

from arbiter.web.report.build import ReportResult, build_report

__all__ = ["ReportResult", "build_report"]
