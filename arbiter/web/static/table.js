// The table page of `arbiter play`: draws the person's table from the table's JSON state
// (a long poll of api/state) and sends the chosen action to api/choose. It decides nothing:
// the legal choices are those of the arbiter's decision request, and only they are clickable.
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const RED = { "♥": true, "♦": true };
  let S = null; // the last state
  let sending = false;

  function esc(s) {
    return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  }
  function suitify(s) { return esc(s).replace(/[♥♦]/g, (m) => '<span class="t-red">' + m + "</span>"); }
  function name(seat) { return seat === S.seat ? "You" : S.names[seat]; }
  function cardInner(c) {
    return '<span class="idx"><b>' + esc(c.rank) + "</b><i>" + c.suit + '</i></span><span class="pip">' + c.suit + "</span>";
  }
  function cardDiv(c) {
    return '<div class="card ' + (RED[c.suit] ? "red" : "black") + '" title="' + esc(c.label) + '">' + cardInner(c) + "</div>";
  }
  function played(p, won) {
    return '<div class="t-played' + (won ? " won" : "") + '">' + cardDiv(p) + '<span class="who">' + esc(name(p.seat)) + "</span></div>";
  }
  function signed(v) { return (v > 0 ? "+" : "") + v; }

  function drawOpponents(v) {
    let html = "";
    for (let k = 1; k < 4; k++) {
      const s = (S.seat + k) % 4;
      const toAct = v && v.turn === s;
      const meta = v ? v.hand_sizes[s] + " cards · " + v.tricks_won[s] + " tricks · total " + v.totals[s] : "";
      html += '<div class="t-opp' + (toAct ? " to-act" : "") + '" data-seat="' + s + '"><div class="nm" title="' + esc(S.names[s]) + '">S' + s + " " + esc(S.names[s]) +
        (v && v.declarer === s ? " · declares" : "") + '</div><div class="meta">' + meta + "</div></div>";
    }
    $("t-opponents").innerHTML = html;
  }

  function drawMiddle(v) {
    if (!v) { $("t-middle").innerHTML = '<div class="t-trick">Waiting for the match to start…</div>'; return; }
    let html = "";
    if (v.layout) {
      html += '<div class="t-layout"><h2>Domino layout</h2>';
      for (const row of v.layout) html += '<div class="lrow">' + row.map(cardDiv).join("") + "</div>";
      html += "</div>";
    } else {
      html += '<div class="t-trick" id="t-trick"><h2>Trick in progress</h2><div class="t-row">' +
        (v.trick.length ? v.trick.map((p) => played(p, false)).join("") : "<span>no card yet</span>") + "</div></div>";
      if (v.last_trick) {
        html += '<div class="t-last" id="t-last"><h2>Last trick: ' + esc(name(v.last_trick.winner)) + " took it</h2>" +
          '<div class="t-row">' + v.last_trick.cards.map((p) => played(p, p.seat === v.last_trick.winner)).join("") + "</div></div>";
      }
    }
    $("t-middle").innerHTML = html;
  }

  const ASK = { declare: "Your turn: choose the contract", double: "Doubling: whom do you double?", play: "Your turn: play a card", domino: "Your turn: play a card or pass" };

  function drawPrompt(v, req) {
    const p = $("t-prompt");
    if (S.ended) { p.className = "t-prompt"; p.textContent = "The match is over."; return; }
    if (req) { p.className = "t-prompt mine"; p.textContent = ASK[req.kind] || "Your turn"; return; }
    p.className = "t-prompt";
    p.textContent = v && v.turn >= 0 ? name(v.turn) + (v.turn === S.seat ? " (you)" : "") + " to play…" : "";
  }

  function drawChoices(req) {
    // everything but cards (declarations, doubles, a Domino pass) is a button here
    const box = $("t-choices");
    const others = req ? req.choices.filter((c) => c.key[0] !== "c") : [];
    box.innerHTML = others.map((c) => '<button type="button" class="t-choice" data-key="' + esc(c.key) + '">' + suitify(c.label) + "</button>").join("");
  }

  function drawHand(v, req) {
    const legal = new Set(req ? req.choices.map((c) => c.key) : []);
    const cards = v ? v.hand : [];
    const playing = req && (req.kind === "play" || req.kind === "domino");
    $("t-hand").innerHTML = cards.map((c) => {
      const key = "c" + c.id;
      const ok = legal.has(key);
      return '<button type="button" class="card ' + (RED[c.suit] ? "red" : "black") + (ok ? " legal" : playing ? " dim" : "") + '" data-key="' + key +
        '"' + (ok ? "" : " disabled") + ' aria-label="' + esc(c.label) + (ok ? "" : " (not playable now)") + '">' + cardInner(c) + "</button>";
    }).join("");
  }

  function drawDeal(v) {
    if (!v) { $("t-deal").innerHTML = ""; return; }
    let html = "<h2>Deal " + v.deal + " of " + v.deals + "</h2>" +
      '<div class="contract">' + (v.contract ? suitify(v.contract) : "not declared yet") + "</div>" +
      "<div>" + esc(name(v.declarer)) + (v.declarer === S.seat ? " declare" : " declares") + "</div>";
    if (v.doubles.length) {
      const said = (d) => d.targets.length ? "doubles " + d.targets.map((t) => esc(t === S.seat ? "you" : S.names[t])).join(", ") : "no double";
      html += '<div class="t-doubles">Doubling: ' + v.doubles.map((d) => esc(name(d.seat)) + ": " + said(d)).join("; ") + "</div>";
    }
    $("t-deal").innerHTML = html;
  }

  function drawScores(v) {
    if (!v) { $("t-scores").innerHTML = ""; return; }
    let html = "";
    const last = v.results[v.results.length - 1];
    if (last) {
      html += '<div class="t-deal-end" id="t-deal-end"><b>Deal ' + last.deal + " scored</b> (" + suitify(last.contract) + ", " + esc(last.reason) + "): " +
        last.scores.map((x, s) => esc(name(s)) + " " + signed(x)).join(", ") + "</div>";
    }
    const order = [0, 1, 2, 3];
    html += "<h2>Scores</h2><table class=\"t-scores\"><tr><th>Deal</th>" + order.map((s) => '<th class="' + (s === S.seat ? "me" : "") + '" title="' + esc(name(s)) + '">' + (s === S.seat ? "You" : "S" + s) + "</th>").join("") + "</tr>";
    for (const r of v.results) {
      html += "<tr><td>" + r.deal + " " + suitify(r.contract) + "</td>" + r.scores.map((x, s) => '<td class="' + (s === S.seat ? "me" : "") + '">' + signed(x) + "</td>").join("") + "</tr>";
    }
    html += '<tr class="total"><td>Total</td>' + v.totals.map((x, s) => '<td class="' + (s === S.seat ? "me" : "") + '">' + x + "</td>").join("") + "</tr></table>";
    $("t-scores").innerHTML = html;
  }

  function drawEnd() {
    const box = $("t-end");
    const e = S.ended;
    if (!e) { box.hidden = true; return; }
    box.hidden = false;
    if (e.error) { box.innerHTML = '<div class="big">The match stopped</div><div>' + esc(e.error) + "</div>"; return; }
    const rank = e.places[S.seat];
    const words = ["", "1st", "2nd", "3rd", "4th"];
    let html = '<div class="big" id="t-place">Match ' + esc(e.status) + ": you finished " + words[rank] + "</div>";
    html += "<div>" + [0, 1, 2, 3].map((s) => esc(name(s)) + " " + e.totals[s] + " (" + words[e.places[s]] + ")").join(" · ") + "</div>";
    if (e.forfeits.indexOf(S.seat) >= 0) html += "<div><b>Your seat forfeited</b> (it did not answer in time).</div>";
    html += '<div>Log: <span id="t-verdict">' + esc(e.verdict) + "</span></div>";
    html += '<div><a id="t-replay" href="replay">Replay this match</a></div>';
    box.innerHTML = html;
  }

  function drawNotes() {
    const notes = S.notes || [];
    $("t-notes").innerHTML = "<h2>What happened</h2>" + (notes.length ? "<ul>" + notes.map((n) => "<li>" + esc(n) + "</li>").join("") + "</ul>" : "<div>Nothing yet.</div>");
  }

  function drawHeader() {
    const tc = S.time_control;
    $("t-who").textContent = "You (seat " + S.seat + ") against " + [1, 2, 3].map((k) => S.names[(S.seat + k) % 4]).join(", ");
    $("t-rules").textContent = "Your time: " + tc.per_decision + " s a decision, then a reserve of " + tc.reserve + " s for the whole match; " +
      S.max_strikes + " timeouts and the seat forfeits (a substitute plays it out)" +
      (S.abandon ? "; so does closing this page for " + S.abandon + " s while it is your turn." : ".");
  }

  function tick() {
    const req = S && S.request;
    const el = $("t-clock");
    if (!req || S.ended) { el.textContent = ""; return; }
    const used = Date.now() / 1000 - req.asked;
    const free = req.seconds - used;
    const left = free > 0 ? free : req.reserve + free;
    el.textContent = free > 0 ? Math.ceil(free) + " s" : "reserve " + Math.max(0, Math.ceil(left)) + " s";
    el.className = free > 0 && free > 10 ? "" : "low";
  }

  function draw() {
    const v = S.view, req = S.ended ? null : S.request;
    const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.key : null;
    drawHeader(); drawOpponents(v); drawMiddle(v); drawPrompt(v, req); drawChoices(req); drawHand(v, req);
    drawDeal(v); drawScores(v); drawEnd(); drawNotes(); tick();
    document.body.dataset.version = S.version;
    document.body.dataset.request = req ? req.id : "";
    document.body.dataset.status = S.status;
    const again = focused && document.querySelector('[data-key="' + focused + '"]:not([disabled])');
    const first = document.querySelector(".t-choices button, .t-hand button.legal");
    if (again) again.focus(); else if (req && first) first.focus();
  }

  async function choose(key) {
    if (sending || !S || !S.request) return;
    sending = true;
    try {
      const r = await fetch("api/choose", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ request: S.request.id, key: key }) });
      if (!r.ok) { const e = await r.json(); S.notes = (S.notes || []).concat(["Not taken: " + e.error]); drawNotes(); }
    } finally { sending = false; }
  }

  document.addEventListener("click", (ev) => {
    const b = ev.target.closest("button[data-key]");
    if (b && !b.disabled) choose(b.dataset.key);
  });
  document.addEventListener("keydown", (ev) => {
    if (ev.key !== "ArrowLeft" && ev.key !== "ArrowRight") return;
    const all = Array.from(document.querySelectorAll(".t-choices button, .t-hand button.legal"));
    if (!all.length) return;
    const i = all.indexOf(document.activeElement);
    const j = ev.key === "ArrowRight" ? (i + 1) % all.length : (i - 1 + all.length) % all.length;
    all[i < 0 ? 0 : j].focus();
    ev.preventDefault();
  });

  async function poll() {
    let after = -1;
    for (;;) {
      try {
        const r = await fetch("api/state?after=" + after);
        if (r.ok) { S = await r.json(); after = S.version; draw(); if (S.status === "over" || S.status === "failed") return; }
        else await new Promise((ok) => setTimeout(ok, 1000));
      } catch (e) { await new Promise((ok) => setTimeout(ok, 1000)); }
    }
  }
  setInterval(tick, 500);
  poll();
})();
