/* Barbu tournament report: everything is drawn by templates/report.html; this only adds
 * highlighting (an entrant's line in the chart), the contract table's view and the match filter.
 * The report's data are in #report-data. */
(function () {
  "use strict";
  const D = JSON.parse(document.getElementById("report-data").textContent);
  const svg = document.getElementById("rating-chart");

  function focus(name) {
    if (!svg) return;
    svg.classList.toggle("focusing", name !== null);
    svg.querySelectorAll("[data-entrant]").forEach((el) => el.classList.toggle("on", el.dataset.entrant === name));
    document.querySelectorAll("#chart .legend .key").forEach((el) => el.classList.toggle("on", el.dataset.entrant === name));
    document.querySelectorAll("tr[data-entrant]").forEach((el) => el.classList.toggle("focus", el.dataset.entrant === name));
  }
  document.querySelectorAll("#chart .legend .key, #standings tr[data-entrant], #chart polyline.mu").forEach((el) => {
    el.addEventListener("mouseenter", () => focus(el.dataset.entrant));
    el.addEventListener("mouseleave", () => focus(null));
  });

  // per-contract table: all deals / as declarer
  document.querySelectorAll("#contracts .tabs button").forEach((btn) => {
    btn.addEventListener("click", () => {
      document.querySelectorAll("#contracts .tabs button").forEach((b) => b.classList.toggle("on", b === btn));
      document.querySelectorAll("#contracts table[data-view]").forEach((t) => { t.hidden = t.dataset.view !== btn.dataset.view; });
    });
  });

  // match filter: by entrant name or match key
  const filter = document.getElementById("filter");
  const shown = document.getElementById("shown");
  const rows = Array.from(document.querySelectorAll("#match-table tbody tr[data-key]"));
  function applyFilter() {
    const q = filter.value.trim().toLowerCase();
    let n = 0;
    rows.forEach((tr) => {
      const hit = !q || tr.dataset.key.toLowerCase().includes(q) || JSON.parse(tr.dataset.entrants).some((e) => e.toLowerCase().includes(q));
      tr.hidden = !hit;
      if (hit) n++;
    });
    shown.textContent = q ? n + " of " + rows.length + " matches" : rows.length + " matches";
  }
  if (filter) { filter.addEventListener("input", applyFilter); applyFilter(); }

  window.barbuReport = { data: D, focus };
})();
