/* Barbu replay viewer. All data are embedded in #replay-data (see arbiter/web/viewer.py):
 * one precomputed snapshot per step, so drawing a step is only string building. */
(function () {
  "use strict";
  const D = JSON.parse(document.getElementById("replay-data").textContent);
  const STEPS = D.steps;
  const N = STEPS.length;
  const RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"];
  const RK = "23456789TJQKA";
  const SU = "CDHS";
  const SYM = D.suits; // ♣♦♥♠ by suit index
  const RED = [false, true, true, false];
  const SUIT_ORDER = [3, 2, 0, 1]; // hands: ♠ ♥ ♣ ♦, colours alternate
  // per seat; from the tournament report, each seat takes its entrant's colour there
  const SEAT_COLOURS = D.match.colours || ["#2f6fdd", "#e0771b", "#1e9e55", "#8e44ad"];
  const TURN_WORDS = { declare: "to declare", double: "to double", play: "to play", domino: "to play" };
  const POSITIONS = ["bottom", "left", "top", "right"]; // from the viewer's seat, clockwise
  const DEALS = {};
  D.deals.forEach((d) => { DEALS[d.n] = d; });
  const $ = (id) => document.getElementById(id);
  const shown = {}; // id -> the HTML it now shows: unchanged regions are not touched
  function put(id, html) {
    if (shown[id] === html) return;
    shown[id] = html;
    $(id).innerHTML = html;
  }

  let cur = 0;
  let pov = -1; // -1: the all-seeing table; 0..3: that seat's information set
  let timer = null;

  // deals completed at each step (for the chart's marker)
  const doneAt = new Array(N);
  (function () {
    let done = 0;
    for (let i = 0; i < N; i++) { if (STEPS[i].k === "deal_end") done++; doneAt[i] = done; }
  })();

  function esc(s) {
    return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  }
  function suitify(s) { return esc(s).replace(/[♥♦]/g, (m) => '<span class="red">' + m + "</span>"); }
  function cardName(c) { return RK[c % 13] + SU[(c / 13) | 0]; }
  function cardLabel(c) { const s = (c / 13) | 0; return RANKS[c % 13] + SYM[s]; }
  function cardText(c) { const s = (c / 13) | 0; return RED[s] ? '<span class="red">' + cardLabel(c) + "</span>" : cardLabel(c); }
  function cardHTML(c, cls, seat) {
    const s = (c / 13) | 0;
    return '<div class="card ' + (RED[s] ? "red" : "black") + (cls ? " " + cls : "") + '" data-card="' + cardName(c) + '"' +
      (seat === undefined ? "" : ' data-seat="' + seat + '"') + ' title="' + cardLabel(c) + '">' +
      '<span class="idx"><b>' + RANKS[c % 13] + "</b><i>" + SYM[s] + '</i></span><span class="pip">' + SYM[s] + "</span></div>";
  }
  const BACK = '<div class="card back"></div>';
  function handOrder(c) { const s = (c / 13) | 0; return SUIT_ORDER.indexOf(s) * 13 + (12 - (c % 13)); }
  function seatName(s) { return "S" + s; }
  function seatFull(s) { return '<span class="seatname" style="color:' + SEAT_COLOURS[s] + '">S' + s + "</span> " + esc(D.match.seats[s]); }
  function place(n) { return n === 1 ? "1st" : n === 2 ? "2nd" : n === 3 ? "3rd" : n + "th"; }
  function signed(v) { return (v > 0 ? "+" : "") + v; }
  function numClass(v) { return v < 0 ? "neg" : v > 0 ? "pos" : ""; }
  function position(seat) { const base = pov < 0 ? 0 : pov; return POSITIONS[(seat - base + 4) % 4]; }

  // ---- drawing ---------------------------------------------------------------------
  // The hands: built once per deal and view (every dealt card, sorted), then each step only
  // switches classes: "gone" for a card played, "dim" for a card its holder may not play now.
  let handsKey = null;
  const hands = [null, null, null, null]; // per seat: {box, head, foot, empty, cards: [[card, element]], backs: [element]}

  function setClass(el, cls) {
    if (el._cls !== cls) { el._cls = cls; el.className = cls; }
  }
  function setHTML(el, html) {
    if (el._html !== html) { el._html = html; el.innerHTML = html; }
  }

  function buildHands(st, deal) {
    for (let seat = 0; seat < 4; seat++) {
      const pos = position(seat);
      const vertical = pos === "left" || pos === "right";
      const hidden = pov >= 0 && seat !== pov;
      const dealt = (deal ? deal.hands[seat] : st.h[seat]).slice().sort((a, b) => handOrder(a) - handOrder(b));
      const cards = hidden ? BACK.repeat(dealt.length) : dealt.map((c) => cardHTML(c, "")).join("");
      const slot = $("slot-" + pos);
      slot.innerHTML = '<div class="hand-box" id="hand-' + seat + '" data-seat="' + seat + '">' +
        '<div class="hand-head"></div><div class="cards' + (vertical ? " vertical" : "") + '">' + cards +
        '<span class="empty">no cards</span></div><div class="hand-foot"></div></div>';
      const box = slot.firstChild;
      const els = Array.from(box.querySelectorAll(".card"));
      hands[seat] = {
        box, head: box.querySelector(".hand-head"), foot: box.querySelector(".hand-foot"), empty: box.querySelector(".empty"),
        hidden, cards: hidden ? [] : dealt.map((c, i) => [c, els[i], els[i].className]), backs: hidden ? els : [],
      };
    }
  }

  function drawHands(st, deal) {
    const key = st.d + "/" + pov + "/" + (deal ? "d" : "s" + cur);
    if (key !== handsKey) { handsKey = key; buildHands(st, deal); }
    for (let seat = 0; seat < 4; seat++) {
      const H = hands[seat];
      const hand = st.h[seat];
      const toAct = st.turn === seat;
      const legal = toAct && st.lg.length ? new Set(st.lg) : null;
      if (H.hidden) {
        H.backs.forEach((el, i) => setClass(el, i < hand.length ? "card back" : "card back gone"));
      } else {
        const held = new Set(hand);
        for (const [c, el, base] of H.cards) {
          setClass(el, !held.has(c) ? base + " gone" : legal && !legal.has(c) ? base + " dim" : base);
        }
      }
      setClass(H.empty, hand.length ? "empty gone" : "empty");
      setClass(H.box, "hand-box" + (toAct ? " to-act" : "") + (H.hidden ? " hidden" : ""));
      H.box.dataset.count = String(hand.length);
      const badges = [];
      if (deal && deal.decl === seat) badges.push('<span class="badge decl">declarer</span>');
      if (toAct) badges.push('<span class="badge turn">' + (TURN_WORDS[st.ph] || "to act") + "</span>");
      const fin = st.fin.indexOf(seat);
      if (fin >= 0) badges.push('<span class="badge out">out ' + place(fin + 1) + "</span>");
      setHTML(H.head, '<span class="dot" style="background:' + SEAT_COLOURS[seat] + '"></span><b>S' + seat +
        '</b><span class="name">' + esc(D.match.seats[seat]) + "</span>" + badges.join(""));
      const foot = [];
      if (H.hidden) foot.push(hand.length + (hand.length === 1 ? " card" : " cards"));
      if (st.lay === null && deal && deal.contract && st.k !== "deal" && st.k !== "declare" && st.k !== "double") {
        foot.push("tricks " + st.tw[seat]);
      }
      if (st.cap[seat].length) foot.push('<span class="cap">took ' + st.cap[seat].map(cardText).join(" ") + "</span>");
      setHTML(H.foot, foot.join(" · "));
    }
  }

  // The middle of the table: a trick, the Domino layout, or an announcement. The trick and
  // layout frames are built once and only their changed cells are redrawn at each step.
  let centreMode = null;
  let centre = null;

  function drawTrick(st) {
    const t = st.tr;
    if (centreMode !== "trick") {
      centreMode = "trick";
      $("centre").innerHTML = '<div class="trick" id="trick"><div class="t-top"></div><div class="t-left"></div>' +
        '<div class="info"></div><div class="t-right"></div><div class="t-bottom"></div></div>';
      const el = $("trick");
      centre = { el, info: el.querySelector(".info"), slots: {} };
      for (const pos of POSITIONS) centre.slots[pos] = el.querySelector(".t-" + pos);
    }
    const slots = { top: "", left: "", right: "", bottom: "" };
    for (let i = 0; i < t.c.length; i++) {
      const seat = (t.ld + i) % 4;
      const c = t.c[i];
      const cls = (seat === t.w ? "winner " : "") + (c === st.pc ? "just" : "");
      let tag = "";
      if (seat === t.w) tag = '<span class="tag win">wins</span>';
      else if (i === 0) tag = '<span class="tag lead">lead</span>';
      slots[position(seat)] = '<div class="slotwrap">' + cardHTML(c, cls.trim(), seat) + tag + "</div>";
    }
    for (const pos of POSITIONS) setHTML(centre.slots[pos], slots[pos]);
    let info = "<b>Trick " + (t.i + 1) + "</b><br>" + seatName(t.ld) + " led";
    if (t.w >= 0) info += '<br><b style="color:#ffd45c">' + seatName(t.w) + " wins</b>";
    setHTML(centre.info, info);
    const ds = centre.el.dataset;
    ds.index = String(t.i);
    ds.leader = String(t.ld);
    ds.winner = String(t.w);
  }

  function drawLayout(st, deal) {
    const mode = "layout/" + st.d;
    if (centreMode !== mode) {
      centreMode = mode;
      const start = deal && deal.label ? deal.label : "";
      const m = /from (\w+)$/.exec(start);
      const startOrd = m ? RANKS.indexOf(m[1]) : -1;
      let rows = "";
      for (const s of SUIT_ORDER) {
        let cells = "";
        for (let o = 0; o < 13; o++) cells += '<div class="lslot' + (o === startOrd ? " start" : "") + '"></div>';
        rows += '<div class="lrow" data-suit="' + SU[s] + '"><span class="lsym' + (RED[s] ? " red" : "") + '">' + SYM[s] + "</span>" + cells + "</div>";
      }
      $("centre").innerHTML = '<div class="layout" id="layout"><div class="title">Domino layout · ' + suitify(start) + "</div>" +
        rows + '<div class="finish"></div></div>';
      const el = $("layout");
      const cells = [[], [], [], []];
      el.querySelectorAll(".lrow").forEach((row, k) => { cells[SUIT_ORDER[k]] = Array.from(row.querySelectorAll(".lslot")); });
      centre = { el, cells, finish: el.querySelector(".finish") };
    }
    for (let s = 0; s < 4; s++) {
      const want = new Array(13).fill("");
      for (const [c, o] of st.lay[s]) want[o] = cardHTML(c, c === st.pc ? "just" : "");
      for (let o = 0; o < 13; o++) setHTML(centre.cells[s][o], want[o]);
    }
    setHTML(centre.finish, st.fin.length ? "out: " + st.fin.map((s, i) => place(i + 1) + " " + seatName(s)).join(", ") : "");
  }

  // The match's end: every seat's total and place, best first.
  function finalResult(st) {
    const order = [0, 1, 2, 3].sort((a, b) => st.tot[b] - st.tot[a] || a - b);
    const rows = order.map((s) => {
      const place = 1 + [0, 1, 2, 3].filter((o) => st.tot[o] > st.tot[s]).length;
      return '<tr><td>' + place + '.</td><td class="who">' + seatName(s) + " " + esc(D.match.seats[s]) + '</td><td class="total ' + numClass(st.tot[s]) + '">' + signed(st.tot[s]) + "</td></tr>";
    });
    return '<div class="announce" id="announce">Final result<table class="final" id="final-result">' + rows.join("") + "</table></div>";
  }

  function drawAnnounce(st, deal) {
    if (st.k === "match_end") return finalResult(st);
    if (!deal) return '<div class="announce"><div class="big">' + suitify(st.t) + "</div></div>";
    let html = '<div class="announce" id="announce">';
    if (st.k === "deal" || !deal.label || (st.k === "stop" && !st.db.length && !st.tr && !st.lay)) {
      html += "Deal " + deal.n + '<div class="big">' + seatName(deal.decl) + " to declare</div>";
    } else {
      html += seatName(deal.decl) + " declared" + '<div class="big">' + suitify(deal.label) + "</div>";
      if (st.db.length) html += "<ul>" + st.db.map(doubleLine).join("") + "</ul>";
    }
    if (st.end) html += '<div class="big">' + esc(st.end.reason) + "</div>";
    return html + "</div>";
  }

  function doubleLine(d) {
    const [seat, targets, redo] = d;
    if (!targets.length) return "<li>" + seatName(seat) + " passes</li>";
    const parts = [];
    const fresh = targets.filter((t) => redo.indexOf(t) < 0);
    if (fresh.length) parts.push("doubles " + fresh.map(seatName).join(", "));
    if (redo.length) parts.push("<b>redoubles</b> " + redo.map(seatName).join(", "));
    return "<li>" + seatName(seat) + " " + parts.join(", ") + "</li>";
  }

  function drawCentre(st, deal) {
    if (st.k !== "match_end" && st.lay) drawLayout(st, deal);
    else if (st.k !== "match_end" && st.tr) drawTrick(st);
    else {
      const html = drawAnnounce(st, deal);
      if (centreMode !== "announce" || shown.centre !== html) {
        centreMode = "announce";
        shown.centre = html;
        $("centre").innerHTML = html;
      }
    }
  }

  function drawSide(st, deal) {
    const dealsTotal = D.match.deals_per_match;
    let info = "<h2>Deal</h2>";
    if (deal) {
      info += '<div class="deal-no">Deal ' + deal.n + ' <span style="font-size:13px;color:#66707f;font-weight:400">of 0–' + (dealsTotal - 1) + "</span></div>" +
        '<div class="who">Declarer: ' + seatFull(deal.decl) + "</div>" +
        '<div class="contract" id="contract">' + (deal.label ? suitify(deal.label) : '<span style="color:#66707f">not declared yet</span>') + "</div>";
    }
    put("deal-info", info);
    let dbl = "<h2>Doubling</h2>";
    if (st.db.length) dbl += "<ol>" + st.db.map(doubleLine).join("") + "</ol>";
    else dbl += '<div style="color:#66707f">' + (deal && deal.label ? "no doubling actions yet" : "—") + "</div>";
    if (st.lv.length) {
      dbl += '<div class="chips" id="levels">' + st.lv.map(([a, b, lv]) =>
        '<span class="chip l' + lv + '">' + seatName(a) + "–" + seatName(b) + " " + (lv === 2 ? "redoubled ×2" : "doubled ×1") + "</span>").join("") + "</div>";
    } else if (st.db.length) {
      dbl += '<div class="chips" id="levels"><span class="chip">no pair doubled</span></div>';
    }
    put("doubling", dbl);
    let ev = '<h2>Step ' + cur + " of " + (N - 1) + "</h2>" + '<div class="what" id="what">' + suitify(st.t) + "</div>";
    const meta = [];
    if (st.l) meta.push("log line " + st.l);
    if (st.s >= 0 && st.k !== "deal_end") meta.push("by " + seatFull(st.s));
    if (st.ms !== undefined) meta.push('think time <span class="ms" id="ms">' + st.ms.toFixed(3) + " ms</span>");
    if (st.a) meta.push('<span id="auto">auto (by the arbiter)</span>');
    ev += '<div class="meta">' + meta.join(" · ") + "</div>";
    for (const f of st.f) {
      ev += '<div class="fault"><b>⚠ fault ' + seatName(f.seat) + " " + esc(f.kind) + "</b>: " + esc(f.detail || "") +
        " → <b>" + esc(f.action) + '</b> <span style="color:#66707f">(line ' + f.line + ")</span></div>";
    }
    if (st.end) {
      const row = (name, vals) => "<tr><td>" + name + "</td>" + vals.map((v) => '<td class="' + numClass(v) + '">' + signed(v) + "</td>").join("") + "</tr>";
      ev += '<table class="endscores"><tr><th></th>' + [0, 1, 2, 3].map((s) => "<th>" + seatName(s) + "</th>").join("") + "</tr>" +
        row("raw", st.end.raw) + row("settled", st.end.sc) + row("total", st.end.tot) + "</table>";
    }
    if (st.k === "stop") ev += '<div class="stop">' + esc(D.verdict.text) + "</div>";
    put("event", ev);
    let line = st.l ? D.log[st.l - 1] : "";
    if (pov >= 0 && st.k === "deal") line = "(hidden in a seat's view: the deal line holds all four hands)";
    line = line === undefined ? "" : line;
    if (shown["raw-line"] !== line) { shown["raw-line"] = line; $("raw-line").textContent = line; }
  }

  function drawScores(st, deal) {
    const trickDeal = deal && deal.contract && deal.contract !== "domino";
    let html = "<h2>Scores</h2><table><thead><tr><th>Seat</th>" + (trickDeal ? "<th>Tricks</th>" : "<th>Out</th>") +
      "<th>Raw</th><th>Settled</th><th>Total</th></tr></thead><tbody>";
    for (let s = 0; s < 4; s++) {
      const fin = st.fin.indexOf(s);
      const col = trickDeal ? st.tw[s] : fin >= 0 ? place(fin + 1) : "";
      const raw = st.end ? '<span class="' + numClass(st.end.raw[s]) + '">' + signed(st.end.raw[s]) + "</span>" : "";
      const sc = st.end ? '<span class="' + numClass(st.end.sc[s]) + '">' + signed(st.end.sc[s]) + "</span>" : "";
      html += '<tr class="' + (s === pov ? "pov" : "") + '"><td class="left">' + seatFull(s) + "</td><td>" + col + "</td><td>" + raw +
        "</td><td>" + sc + '</td><td class="total ' + numClass(st.tot[s]) + '">' + signed(st.tot[s]) + "</td></tr>";
    }
    html += "</tbody></table>";
    put("scores", html);
  }

  // the totals chart: drawn once, its marker moved on each step
  let chartMarker = null;
  let chartX = null;
  function drawChart() {
    const series = D.series;
    const W = 460, H = 190, L = 44, R = 10, T = 10, B = 24;
    let lo = 0, hi = 0;
    for (const p of series) for (const v of p) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    if (hi === lo) { hi += 1; lo -= 1; }
    const span = Math.max(1, D.match.deals_per_match || series.length - 1);
    const x = (i) => L + (W - L - R) * i / span;
    const y = (v) => T + (H - T - B) * (hi - v) / (hi - lo);
    chartX = x;
    let svg = '<svg viewBox="0 0 ' + W + " " + H + '" role="img" aria-label="Running totals by deal">';
    const ticks = 4;
    for (let k = 0; k <= ticks; k++) {
      const v = Math.round(lo + (hi - lo) * k / ticks);
      svg += '<line x1="' + L + '" x2="' + (W - R) + '" y1="' + y(v) + '" y2="' + y(v) + '" stroke="#edf0f4"/>' +
        '<text x="' + (L - 6) + '" y="' + (y(v) + 4) + '" font-size="10" text-anchor="end" fill="#66707f">' + v + "</text>";
    }
    svg += '<line x1="' + L + '" x2="' + (W - R) + '" y1="' + y(0) + '" y2="' + y(0) + '" stroke="#9aa5b5"/>';
    const every = span > 14 ? 7 : 1;
    for (let i = 0; i <= span; i += every) {
      svg += '<text x="' + x(i) + '" y="' + (H - 8) + '" font-size="10" text-anchor="middle" fill="#66707f">' + i + "</text>";
    }
    svg += '<line id="chart-marker" x1="0" x2="0" y1="' + T + '" y2="' + (H - B) + '" stroke="#f5b301" stroke-width="3" opacity=".8"/>';
    for (let s = 0; s < 4; s++) {
      const pts = series.map((p, i) => x(i).toFixed(1) + "," + y(p[s]).toFixed(1)).join(" ");
      svg += '<polyline fill="none" stroke="' + SEAT_COLOURS[s] + '" stroke-width="2" points="' + pts + '"/>';
      series.forEach((p, i) => { if (i) svg += '<circle r="2.5" fill="' + SEAT_COLOURS[s] + '" cx="' + x(i).toFixed(1) + '" cy="' + y(p[s]).toFixed(1) + '"/>'; });
    }
    svg += "</svg>";
    const legend = [0, 1, 2, 3].map((s) => '<span style="color:' + SEAT_COLOURS[s] + '">S' + s + " " + esc(D.match.seats[s]) + "</span>").join("");
    $("chart").innerHTML = "<h2>Running totals (after each deal)</h2>" + svg + '<div class="legend">' + legend + "</div>";
    chartMarker = $("chart-marker");
  }
  function moveMarker(st) {
    if (!chartMarker) return;
    const done = doneAt[cur];
    const pos = st.k === "deal_end" || st.k === "match_end" || st.k === "stop" ? done : done + 0.5;
    const xx = chartX(Math.min(pos, D.match.deals_per_match || pos)).toFixed(1);
    chartMarker.setAttribute("x1", xx);
    chartMarker.setAttribute("x2", xx);
  }

  function drawFaults() {
    let html = "<h2>Faults (" + D.faults.length + ")</h2>";
    if (!D.faults.length) html += '<div class="none">No faults in this log.</div>';
    else {
      html += "<ul>" + D.faults.map((f, i) => '<li><a data-step="' + f.step + '">deal ' + f.deal + " · " + seatName(f.seat) + " " + esc(f.kind) +
        "</a> → " + esc(f.action) + (f.detail ? ": " + esc(f.detail) : "") + "</li>").join("") + "</ul>";
    }
    $("faults").innerHTML = html;
    $("faults").addEventListener("click", (ev) => {
      const a = ev.target.closest("a[data-step]");
      if (a) go(Math.min(N - 1, +a.dataset.step));
    });
    let ticks = "";
    const denom = Math.max(1, N - 1);
    D.deals.forEach((d) => { ticks += '<i class="deal" style="left:' + (100 * d.first / denom).toFixed(3) + '%"></i>'; });
    D.faults.forEach((f) => { ticks += '<i style="left:' + (100 * Math.min(f.step, N - 1) / denom).toFixed(3) + '%" title="fault"></i>'; });
    $("ticks").innerHTML = ticks;
  }

  function draw() {
    const st = STEPS[cur];
    const deal = DEALS[st.d];
    drawHands(st, deal);
    drawCentre(st, deal);
    drawSide(st, deal);
    drawScores(st, deal);
    moveMarker(st);
    $("slider").value = String(cur);
    $("step-label").textContent = "step " + cur + " / " + (N - 1);
    const sel = $("deal-select");
    if (deal && sel.value !== String(deal.n)) sel.value = String(deal.n);
    document.body.dataset.step = String(cur);
    document.body.dataset.pov = String(pov);
  }

  // ---- navigation ------------------------------------------------------------------
  function go(i) {
    cur = Math.max(0, Math.min(N - 1, i | 0));
    draw();
  }
  function step(delta) { go(cur + delta); }
  function dealStart(n) { return DEALS[n] ? DEALS[n].first : cur; }
  function jumpDeal(delta) {
    const d = STEPS[cur].d;
    if (delta < 0 && cur > dealStart(d)) { go(dealStart(d)); return; }
    const target = d + delta;
    if (DEALS[target]) go(DEALS[target].first);
    else go(delta < 0 ? 0 : N - 1);
  }
  function setSeat(s) {
    pov = s;
    $("seat-select").value = String(s);
    draw();
  }
  // Play: a step every 650 ms (1×), 160 ms (4×) or 40 ms (16×), or a deal every 1.5 s.
  function tick() {
    if (cur >= N - 1) { togglePlay(); return; }
    if ($("speed").value === "deal") jumpDeal(1); else step(1);
  }
  function startTimer() {
    const speed = $("speed").value;
    timer = setInterval(tick, speed === "deal" ? 1500 : +speed);
  }
  function togglePlay() {
    if (timer) { clearInterval(timer); timer = null; $("play").textContent = "▷ Play"; return; }
    if (cur >= N - 1) go(0);
    startTimer();
    $("play").textContent = "❚❚ Pause";
  }

  function init() {
    const m = D.match;
    const rules = Object.entries(m.rules).map(([k, v]) => k === "preset" ? v : k + "=" + (Array.isArray(v) ? v.join(",") : typeof v === "object" ? JSON.stringify(v) : v)).join(" · ");
    $("match-meta").textContent = (m.id ? m.id + " · " : "") + rules + (m.seed !== null && m.seed !== undefined ? " · seed " + m.seed : "") +
      " · " + m.seats.map((n, s) => "S" + s + " " + n).join(", ");
    const v = D.verdict;
    const verdict = $("verdict");
    const deals = D.deals.length;
    verdict.textContent = !v.valid ? "✗ invalid at line " + v.line
      : v.complete ? "✓ valid · complete · " + deals + " deals"
      : "… valid so far · incomplete · " + deals + " deals";
    verdict.className = v.valid ? (v.complete ? "ok" : "partial") : "bad";
    verdict.title = v.text;
    const slider = $("slider");
    slider.max = String(N - 1);
    slider.addEventListener("input", () => go(+slider.value));
    $("deal-select").innerHTML = D.deals.map((d) => '<option value="' + d.n + '">Deal ' + d.n + " · S" + d.decl + " · " + esc(d.label || "…") + "</option>").join("");
    $("deal-select").addEventListener("change", (e) => go(dealStart(+e.target.value)));
    $("seat-select").innerHTML = '<option value="-1">All hands (the table)</option>' +
      m.seats.map((n, s) => '<option value="' + s + '">S' + s + " " + esc(n) + " only</option>").join("");
    $("seat-select").addEventListener("change", (e) => setSeat(+e.target.value));
    $("prev").addEventListener("click", () => step(-1));
    $("next").addEventListener("click", () => step(1));
    $("prev-deal").addEventListener("click", () => jumpDeal(-1));
    $("next-deal").addEventListener("click", () => jumpDeal(1));
    $("play").addEventListener("click", togglePlay);
    $("speed").addEventListener("change", () => { if (timer) { clearInterval(timer); startTimer(); } });
    document.addEventListener("keydown", (e) => {
      const tag = e.target && e.target.tagName;
      if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || e.ctrlKey || e.metaKey || e.altKey) return;
      let handled = true;
      switch (e.key) {
        case "ArrowRight": step(e.shiftKey ? 10 : 1); break;
        case "ArrowLeft": step(e.shiftKey ? -10 : -1); break;
        case "ArrowDown": case "PageDown": jumpDeal(1); break;
        case "ArrowUp": case "PageUp": jumpDeal(-1); break;
        case "Home": go(0); break;
        case "End": go(N - 1); break;
        case " ": if (tag === "BUTTON") handled = false; else togglePlay(); break;
        case "a": case "A": setSeat(-1); break;
        case "0": case "1": case "2": case "3": setSeat(+e.key); break;
        default: handled = false;
      }
      if (handled) e.preventDefault();
    });
    drawChart();
    drawFaults();
    pov = D.start.seat;
    $("seat-select").value = String(pov);
    go(D.start.step);
  }

  // for tests and the curious: window.barbuReplay.go(123)
  window.barbuReplay = { go, step, jumpDeal, setSeat, get cur() { return cur; }, get pov() { return pov; }, count: N, data: D };
  if (N) init();
})();
