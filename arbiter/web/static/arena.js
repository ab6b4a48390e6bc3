/* The arena's pages (arbiter/arena/pages.py, browse.py, corner.py): the leaderboard's sorting by a
 * column, and live updates on every page that loads this. On each server-sent event of
 * /api/events (a match recorded, a check over) the page is fetched again from the arena and its
 * leaderboard, figures and every [data-refresh] region are swapped in: the server renders, this
 * only places. */
(function () {
  "use strict";
  const table = document.getElementById("leaderboard");
  const live = document.getElementById("live") || document.createElement("span");
  let sortBy = 0;
  let ascending = true;

  function value(row, col) {
    const cell = row.cells[col];
    return cell ? cell.dataset.value || "" : "";
  }
  function sort() {
    if (!table) return;
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
  Array.from(table ? table.tHead.rows[0].cells : []).forEach((th, i) => {
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
    fetch(location.pathname + location.search, { headers: { Accept: "text/html" }, cache: "no-store", credentials: "same-origin" })
      .then((r) => { if (!r.ok) throw new Error("the page answered " + r.status); return r.text(); })
      .then((html) => {
        const fresh = new DOMParser().parseFromString(html, "text/html");
        document.querySelectorAll("[data-refresh]").forEach((old) => {
          const now = fresh.querySelector('[data-refresh="' + old.dataset.refresh + '"]');
          if (now && now.innerHTML !== old.innerHTML) old.replaceWith(document.importNode(now, true));
        });
        FIGURES.forEach((id) => {
          const f = fresh.getElementById(id), here = document.getElementById(id);
          if (f && here) here.textContent = f.textContent;
        });
        document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
        if (!table) return;
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
      if (event && (event.type === "match" || event.type === "submission")) refresh();
    };
  }
  window.barbuArena = { refresh: refresh };
})();
