/* The arena's leaderboard (arbiter/arena/pages.py): sorting by a column, and live updates. On each
 * server-sent event of /api/events (a match was recorded) the page is fetched again from the
 * arena and its table and figures are swapped in: the server renders, this only places. */
(function () {
  "use strict";
  const table = document.getElementById("leaderboard");
  const live = document.getElementById("live");
  let sortBy = 0;
  let ascending = true;

  function value(row, col) {
    const cell = row.cells[col];
    return cell ? cell.dataset.value || "" : "";
  }
  function sort() {
    const th = table.tHead.rows[0].cells[sortBy];
    const numeric = th.dataset.sort === "num";
    const body = table.tBodies[0];
    const rows = Array.from(body.rows).filter((r) => !r.classList.contains("empty"));
    rows.sort((a, b) => {
      const x = value(a, sortBy), y = value(b, sortBy);
      let c;
      if (numeric) {
        const nx = x === "" ? -Infinity : Number(x), ny = y === "" ? -Infinity : Number(y);
        c = nx - ny;
      } else {
        c = x.localeCompare(y);
      }
      return ascending ? c : -c;
    });
    rows.forEach((r) => body.appendChild(r));
    Array.from(table.tHead.rows[0].cells).forEach((h, i) => {
      if (i === sortBy) h.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      else h.removeAttribute("aria-sort");
    });
  }
  Array.from(table.tHead.rows[0].cells).forEach((th, i) => {
    if (!th.dataset.sort) return;
    th.tabIndex = 0;
    const pick = () => {
      if (sortBy === i) ascending = !ascending;
      else { sortBy = i; ascending = th.dataset.sort === "text" || i === 0; }
      sort();
    };
    th.addEventListener("click", pick);
    th.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); pick(); } });
  });

  const FIGURES = ["played", "in-flight", "per-hour", "active"];
  let fetching = false;
  let again = false;
  function refresh() {
    if (fetching) { again = true; return; }
    fetching = true;
    fetch("/", { headers: { Accept: "text/html" }, cache: "no-store" })
      .then((r) => { if (!r.ok) throw new Error("the leaderboard answered " + r.status); return r.text(); })
      .then((html) => {
        const fresh = new DOMParser().parseFromString(html, "text/html");
        const before = {};
        Array.from(table.tBodies[0].rows).forEach((r) => { before[r.dataset.entrant] = r.textContent; });
        const body = fresh.querySelector("#leaderboard tbody");
        const changed = body ? Array.from(body.rows).filter((r) => before[r.dataset.entrant] !== r.textContent) : [];
        // A refresh that finds the table as it was (two events, one fetch) leaves it alone: the
        // rows the last change marked stay marked.
        if (body && (changed.length || body.rows.length !== table.tBodies[0].rows.length)) {
          changed.forEach((r) => r.classList.add("fresh"));
          table.replaceChild(document.importNode(body, true), table.tBodies[0]);
          sort();
        }
        FIGURES.forEach((id) => {
          const f = fresh.getElementById(id);
          if (f) document.getElementById(id).textContent = f.textContent;
        });
        document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
      })
      .catch(() => { live.classList.add("off"); })
      .finally(() => {
        fetching = false;
        if (again) { again = false; refresh(); }
      });
  }

  if (window.EventSource) {
    const events = new EventSource("/api/events");
    events.onopen = () => { live.hidden = false; live.classList.remove("off"); document.body.dataset.live = "1"; };
    events.onerror = () => { live.classList.add("off"); };
    events.onmessage = (e) => {
      let event = null;
      try { event = JSON.parse(e.data); } catch (err) { return; }
      if (event && event.type === "match") refresh();
    };
  }
  window.barbuArena = { refresh: refresh };
})();
