'use strict';
// The Node bot's Barbu strategy: pure functions from a decision request to one of its legal
// actions. No I/O, no clock, no global randomness, so it is easy to test
// (`node --test sample_bots/node/test/`).
//
// Messages are the objects @grpc/proto-loader gives with
// {keepCase: true, enums: String, longs: String, defaults: true, oneofs: true}: a view is
// proto/barbu/v1/arbiter.proto's View with its field names (`hand`, `trick`, `tricks`, ...),
// cards are strings such as "TH", contracts and phases enum names ("NO_QUEENS", "PLAY").
//
// The rules of thumb:
// * Declaring: the hand is scored for every contract still open and the bot names the one for
//   which this hand is best compared with a typical hand (a z-score calibrated at start-up on
//   random hands), with the best trump suit or Domino start rank.
// * Doubling: it doubles only with a hand that suits the contract (it redoubles more readily
//   than it doubles) and adds the declarer whenever the quota forces it.
// * Negative contracts: it ducks with the highest card that still loses the trick, sheds
//   dangerous cards when void (queens in No Queens, the K of hearts in Barbu, high hearts in
//   No Hearts, high cards otherwise), and leads the cards least likely to win. In No Last Two it
//   unloads high cards early and ducks at the end.
// * Trumps: it cashes sure winners, draws trumps when long, wins cheaply and ruffs low.
// * Domino: it prefers cards that release its own cards and help the others least.

const RANKS = '23456789TJQKA';
const SUITS = 'CDHS';
const NEGATIVE = new Set(['NO_TRICKS', 'NO_HEARTS', 'NO_QUEENS', 'BARBU', 'NO_LAST_TWO', 'SALAD']);

const rankOf = (card) => RANKS.indexOf(card[0]);
const suitOf = (card) => card[1];
const cardName = (rank, suit) => RANKS[rank] + suit;

// ---- small helpers ---------------------------------------------------------------------------
function bySuit(cards) {
  const out = { C: [], D: [], H: [], S: [] };
  for (const c of cards) out[suitOf(c)].push(rankOf(c));
  for (const s of SUITS) out[s].sort((a, b) => a - b);
  return out;
}

function maxBy(items, score) {
  let best = items[0];
  let bestScore = -Infinity;
  for (const item of items) {
    const v = score(item);
    if (v > bestScore) {
      best = item;
      bestScore = v;
    }
  }
  return best;
}

const highest = (cards) => maxBy(cards, (c) => rankOf(c));
const lowest = (cards) => maxBy(cards, (c) => -rankOf(c));

// A deterministic pseudo-random generator (mulberry32), for the calibration only.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---- hand evaluation (for declaring and doubling) ----------------------------------------------
// The chance-like weight that a card of this rank in a suit of this length wins a trick.
function trickRisk(rank, length, lowCount) {
  let risk = Math.max(0, rank - 5) / 7; // 2..7: none; A: 1
  if (length >= 5) risk *= 1 + 0.12 * (length - 4); // long suits outlast the others
  risk *= Math.max(0.4, 1 - 0.12 * lowCount); // low cards in the suit let it duck
  return risk;
}

function riskBySuit(suits) {
  const out = {};
  for (const s of SUITS) {
    const ranks = suits[s];
    const low = ranks.filter((r) => r <= 4).length; // 2..6
    out[s] = ranks.map((r) => trickRisk(r, ranks.length, low));
  }
  return out;
}

const sum = (xs) => xs.reduce((a, b) => a + b, 0);

// "Badness" of a hand for each negative contract: higher means more points lost.
function negativeBadness(contract, hand) {
  const suits = bySuit(hand);
  const risk = riskBySuit(suits);
  const all = sum(SUITS.split('').map((s) => sum(risk[s])));
  const hearts = suits.H;
  const lowHearts = hearts.filter((r) => r <= 5).length;
  switch (contract) {
    case 'NO_TRICKS':
      return all;
    case 'NO_HEARTS': {
      let bad = 0.5 * all + 2 * sum(risk.H);
      if (hearts.includes(12)) bad += 4 * Math.max(0.3, 1 - 0.15 * lowHearts);
      return bad + 0.3 * hearts.length;
    }
    case 'NO_QUEENS': {
      let bad = 0.3 * all;
      for (const s of SUITS) {
        const ranks = suits[s];
        const below = ranks.filter((r) => r < 10).length;
        if (ranks.includes(10)) bad += 6 * Math.max(0.15, 1 - 0.22 * below);
        else bad += 1.5 * ranks.filter((r) => r > 10).length * Math.max(0.2, 1 - 0.2 * below);
      }
      return bad;
    }
    case 'BARBU': {
      let bad = 0.2 * all;
      const shortSuits = SUITS.split('').filter((s) => s !== 'H' && suits[s].length <= 1).length;
      if (hearts.includes(11)) bad += 20 * Math.max(0.1, 1 - 0.18 * lowHearts - 0.1 * shortSuits);
      else if (hearts.includes(12)) bad += 6 * Math.max(0.1, 1 - 0.18 * lowHearts);
      return bad;
    }
    case 'NO_LAST_TWO': {
      let bad = 0;
      for (const s of SUITS) bad += (suits[s].length >= 4 ? 1.5 : 0.5) * sum(risk[s]);
      return bad;
    }
    default: // salad and anything else: every penalty at once
      return ['NO_TRICKS', 'NO_HEARTS', 'NO_QUEENS', 'BARBU', 'NO_LAST_TWO']
        .map((c) => negativeBadness(c, hand))
        .reduce((a, b) => a + b, 0);
  }
}

// Trumps: an estimate of the tricks this hand takes with `trump` as trumps.
function trumpsGoodness(hand, trump) {
  const suits = bySuit(hand);
  const trumps = suits[trump];
  let tricks = trumps.length * 0.55;
  const honours = { 12: 1, 11: 0.7, 10: 0.4, 9: 0.2 };
  for (const r of trumps) tricks += honours[r] || 0;
  for (const s of SUITS) {
    if (s === trump) continue;
    const ranks = suits[s];
    if (ranks.includes(12)) tricks += 0.8;
    if (ranks.includes(11) && ranks.length >= 2) tricks += 0.4;
    if (trumps.length >= 4 && ranks.length <= 1) tricks += 0.5 * (2 - ranks.length);
  }
  return tricks;
}

// Domino: how quickly this hand plays out from `start` (higher is better).
function dominoGoodness(hand, start) {
  let good = 0;
  for (const c of hand) {
    const r = rankOf(c);
    good -= Math.abs(r - start);
    if (r === start) good += 3;
  }
  return good;
}

function bestTrump(hand) {
  return maxBy(SUITS.split(''), (s) => trumpsGoodness(hand, s) + 0.01 * SUITS.indexOf(s));
}

function bestStart(hand) {
  const ranks = [...RANKS].map((_, i) => i);
  return maxBy(ranks, (r) => dominoGoodness(hand, r) - 0.001 * Math.abs(r - 6));
}

// Goodness (higher is better) of a hand for a declaration; the parameter is optional.
function goodness(contract, hand, param) {
  if (NEGATIVE.has(contract)) return -negativeBadness(contract, hand);
  if (contract === 'TRUMPS') return trumpsGoodness(hand, param || bestTrump(hand));
  if (contract === 'DOMINO') {
    const start = param ? RANKS.indexOf(param) : bestStart(hand);
    return dominoGoodness(hand, start);
  }
  return 0;
}

// Mean and spread of `goodness` over random hands, per contract (best parameter for the
// declarer; a random one for a defender, which is what the z-score of a defender compares).
const CALIBRATION = (() => {
  const deck = [];
  for (const s of SUITS) for (const r of RANKS) deck.push(r + s);
  const next = rng(20240601);
  const samples = {};
  const contracts = ['NO_TRICKS', 'NO_HEARTS', 'NO_QUEENS', 'BARBU', 'NO_LAST_TWO', 'TRUMPS', 'DOMINO', 'SALAD'];
  for (const c of contracts) samples[c] = [];
  samples.TRUMPS_ANY = [];
  samples.DOMINO_ANY = [];
  for (let i = 0; i < 400; i++) {
    const d = deck.slice();
    for (let j = d.length - 1; j > 0; j--) {
      const k = Math.floor(next() * (j + 1));
      [d[j], d[k]] = [d[k], d[j]];
    }
    const hand = d.slice(0, 13);
    for (const c of contracts) samples[c].push(goodness(c, hand));
    samples.TRUMPS_ANY.push(trumpsGoodness(hand, SUITS[i % 4]));
    samples.DOMINO_ANY.push(dominoGoodness(hand, i % 13));
  }
  const out = {};
  for (const [c, xs] of Object.entries(samples)) {
    const mean = sum(xs) / xs.length;
    const sd = Math.sqrt(sum(xs.map((x) => (x - mean) ** 2)) / xs.length) || 1;
    out[c] = { mean, sd };
  }
  return out;
})();

// How much better than a typical hand this one is for the contract (in standard deviations).
function zScore(contract, hand, param, asDeclarer) {
  let key = contract;
  if (!asDeclarer && (contract === 'TRUMPS' || contract === 'DOMINO')) key = `${contract}_ANY`;
  const cal = CALIBRATION[key] || { mean: 0, sd: 1 };
  return (goodness(contract, hand, param) - cal.mean) / cal.sd;
}

// ---- declaring ---------------------------------------------------------------------------------
function chooseDeclaration(view, legal) {
  const hand = view.hand;
  const trump = bestTrump(hand);
  const start = RANKS[bestStart(hand)];
  const score = (action) => {
    const d = action.declare;
    if (d.contract === 'TRUMPS' && d.trump !== trump) return -Infinity;
    if (d.contract === 'DOMINO' && d.start_rank !== start && legal.some((a) => a.declare.start_rank === start)) {
      return -Infinity;
    }
    return zScore(d.contract, hand, d.contract === 'TRUMPS' ? d.trump : d.start_rank, true);
  };
  return maxBy(legal, score);
}

// ---- doubling ------------------------------------------------------------------------------------
function chooseDouble(view, legal) {
  const seat = view.seat;
  const declarer = view.declarer;
  const decl = view.declaration || {};
  const contract = decl.contract;
  const param = contract === 'TRUMPS' ? decl.trump : contract === 'DOMINO' ? decl.start_rank : undefined;
  const z = zScore(contract, view.hand, param, seat === declarer);
  const doubledMe = new Set();
  for (const d of view.doubles) if (d.targets.includes(seat)) doubledMe.add(d.seat);
  const wanted = new Set();
  for (const t of [0, 1, 2, 3]) {
    if (t === seat) continue;
    if (doubledMe.has(t)) {
      if (z > (seat === declarer ? 1.0 : 0.8)) wanted.add(t); // redouble
    } else if (t === declarer) {
      if (z > (NEGATIVE.has(contract) ? 1.0 : 1.4)) wanted.add(t);
    } else if (NEGATIVE.has(contract) && z > 1.6) {
      wanted.add(t);
    }
  }
  // The legal action closest to what we want (the quota may force the declarer in).
  return maxBy(legal, (a) => {
    const targets = new Set(a.double.targets);
    let diff = 0;
    for (const t of targets) if (!wanted.has(t)) diff += 1;
    for (const t of wanted) if (!targets.has(t)) diff += 1;
    return -diff - 0.01 * targets.size;
  });
}

// ---- what has been played ------------------------------------------------------------------
function knowledge(view) {
  const played = new Set();
  const voids = [new Set(), new Set(), new Set(), new Set()];
  const noteTrick = (leader, cards) => {
    if (!cards.length) return;
    const led = suitOf(cards[0]);
    cards.forEach((c, i) => {
      played.add(c);
      if (suitOf(c) !== led) voids[(leader + i) % 4].add(led);
    });
  };
  for (const t of view.tricks) noteTrick(t.leader, t.cards);
  if (view.trick.length) noteTrick(view.trick_leader, view.trick);
  for (const c of view.layout) played.add(c);
  const mine = new Set(view.hand);
  const outstanding = [];
  for (const s of SUITS) for (const r of RANKS) {
    const c = r + s;
    if (!played.has(c) && !mine.has(c)) outstanding.push(c);
  }
  return { played, voids, outstanding };
}

// The card winning the trick so far (trumps beat the led suit in Trumps).
function winningCard(trick, trump) {
  let best = trick[0];
  for (const c of trick.slice(1)) {
    const beats = suitOf(c) === suitOf(best) ? rankOf(c) > rankOf(best) : trump && suitOf(c) === trump;
    if (beats) best = c;
  }
  return best;
}

function beats(card, best, trump) {
  if (suitOf(card) === suitOf(best)) return rankOf(card) > rankOf(best);
  return Boolean(trump) && suitOf(card) === trump;
}

// ---- negative contracts ----------------------------------------------------------------------
function isPenalty(contract, card) {
  if (contract === 'NO_QUEENS') return card[0] === 'Q';
  if (contract === 'NO_HEARTS') return suitOf(card) === 'H';
  if (contract === 'BARBU') return card === 'KH';
  if (contract === 'SALAD') return card[0] === 'Q' || suitOf(card) === 'H';
  return false;
}

// How much a card still in hand may cost (for discards): the higher, the sooner to shed.
function danger(contract, card, view, know) {
  const r = rankOf(card);
  const s = suitOf(card);
  const outstandingInSuit = know.outstanding.filter((c) => suitOf(c) === s);
  const lower = outstandingInSuit.filter((c) => rankOf(c) < r).length;
  const length = view.hand.filter((c) => suitOf(c) === s).length;
  let d = r + 0.6 * lower - 0.3 * length; // high cards with many lower cards out win tricks
  if (contract === 'NO_QUEENS') {
    if (card[0] === 'Q') d += 40;
    else if (r > 10 && outstandingInSuit.some((c) => c[0] === 'Q')) d += 15; // K, A may catch a queen
  } else if (contract === 'BARBU') {
    if (card === 'KH') d += 60;
    else if (card === 'AH' && outstandingInSuit.includes('KH')) d += 25;
    else if (s === 'H') d += 2;
  } else if (contract === 'NO_HEARTS') {
    // a heart costs whoever takes it; high hearts are the ones that end up taken
    if (s === 'H') d += 4 + 1.6 * r + (card === 'AH' ? 10 : 0) - (lower === 0 ? 8 : 0);
  } else if (contract === 'SALAD') {
    if (card === 'KH') d += 60;
    if (card[0] === 'Q') d += 40;
    if (s === 'H') d += 20;
  }
  return d;
}

function negativePlay(view, legal, contract) {
  const know = knowledge(view);
  const trick = view.trick;
  const trickIndex = view.tricks.length;
  const cards = legal.map((a) => a.play.card);
  // No Last Two: only the last two tricks cost; unload high cards while it is free.
  const early = contract === 'NO_LAST_TWO' && trickIndex < 8;
  if (!trick.length) return leadNegative(cards, contract, view, know, early);
  const led = suitOf(trick[0]);
  const best = winningCard(trick, null);
  const follow = cards.filter((c) => suitOf(c) === led);
  const last = trick.length === 3;
  if (!follow.length) {
    // Void: shed the most dangerous card.
    return maxBy(cards, (c) => danger(contract, c, view, know));
  }
  if (early) return highest(follow);
  const under = follow.filter((c) => rankOf(c) < rankOf(best));
  const trickHasPenalty = trick.some((c) => isPenalty(contract, c));
  if (under.length) {
    // Duck with the highest card that still loses; but when last to a clean trick, taking it
    // with a high card is cheap (except in No Tricks, where every trick costs).
    if (last && !trickHasPenalty && contract !== 'NO_TRICKS' && contract !== 'NO_LAST_TWO') {
      const over = follow.filter((c) => !under.includes(c) && !isPenalty(contract, c));
      if (over.length && trickIndex < 10) return highest(over);
    }
    return highest(under);
  }
  // Every card we can follow with beats the trick so far.
  const safe = follow.filter((c) => !isPenalty(contract, c));
  if (last) return highest(safe.length ? safe : follow); // we take it: unload the biggest
  // Others still play: the lowest may be overtaken.
  return lowest(safe.length ? safe : follow);
}

function leadNegative(cards, contract, view, know, early) {
  if (early) return maxBy(cards, (c) => danger(contract, c, view, know));
  return maxBy(cards, (c) => {
    const s = suitOf(c);
    const r = rankOf(c);
    const out = know.outstanding.filter((o) => suitOf(o) === s);
    const higher = out.filter((o) => rankOf(o) > r).length;
    const lower = out.filter((o) => rankOf(o) < r).length;
    // No higher card out: the trick is ours whatever the others do. Otherwise, the more higher
    // cards out and the fewer lower ones (which the others duck with), the safer.
    let score = higher === 0 ? -50 : 2 * higher - lower;
    if (isPenalty(contract, c)) score -= 30;
    if (contract === 'NO_QUEENS' && out.some((o) => o[0] === 'Q' && rankOf(o) > r)) score += 2; // flush a queen
    if (contract === 'BARBU' && s === 'H' && out.includes('KH') && r < 11) score += 3; // flush the king
    return score - 0.01 * r;
  });
}

// ---- Trumps --------------------------------------------------------------------------------------
function trumpsPlay(view, legal) {
  const trump = (view.declaration && view.declaration.trump) || null;
  const know = knowledge(view);
  const trick = view.trick;
  const cards = legal.map((a) => a.play.card);
  const isMaster = (c) => !know.outstanding.some((o) => suitOf(o) === suitOf(c) && rankOf(o) > rankOf(c));
  const trumpsOut = know.outstanding.filter((o) => suitOf(o) === trump).length;
  if (!trick.length) {
    const myTrumps = cards.filter((c) => suitOf(c) === trump);
    if (trumpsOut > 0 && myTrumps.length >= 3) {
      const master = myTrumps.filter(isMaster);
      if (master.length) return highest(master);
    }
    const sideMasters = cards.filter((c) => suitOf(c) !== trump && isMaster(c)).filter((c) => {
      const othersVoid = [1, 2, 3].some((i) => know.voids[(view.seat + i) % 4].has(suitOf(c)));
      return trumpsOut === 0 || !othersVoid;
    });
    if (sideMasters.length) return highest(sideMasters);
    if (trumpsOut > 0 && myTrumps.length >= 4) return lowest(myTrumps);
    const side = cards.filter((c) => suitOf(c) !== trump);
    if (!side.length) return lowest(cards);
    // Lead low from the shortest side suit, to make a void for ruffing.
    const length = (s) => view.hand.filter((c) => suitOf(c) === s).length;
    return maxBy(side, (c) => -length(suitOf(c)) * 20 - rankOf(c));
  }
  const best = winningCard(trick, trump);
  const last = trick.length === 3;
  const winners = cards.filter((c) => beats(c, best, trump));
  if (winners.length) {
    if (last) return lowest(winners);
    const led = suitOf(trick[0]);
    const laterSeats = [];
    for (let i = trick.length; i < 4; i++) laterSeats.push((view.trick_leader + i) % 4);
    const sure = winners.filter((c) => {
      if (!isMaster(c)) return false;
      if (suitOf(c) === trump) return true;
      return trumpsOut === 0 || !laterSeats.some((p) => know.voids[p].has(led));
    });
    if (sure.length) return lowest(sure);
    const ruffs = winners.filter((c) => suitOf(c) === trump && suitOf(best) !== trump);
    if (ruffs.length) return lowest(ruffs);
    return lowest(winners);
  }
  // Cannot win: keep trumps and high cards, throw the cheapest.
  const nonTrump = cards.filter((c) => suitOf(c) !== trump);
  return lowest(nonTrump.length ? nonTrump : cards);
}

// ---- Domino --------------------------------------------------------------------------------------
function dominoPlay(view, legal) {
  const cards = legal.filter((a) => !a.play.pass);
  if (!cards.length) return legal[0]; // the pass
  const start = RANKS.indexOf((view.declaration && view.declaration.start_rank) || '7');
  const know = knowledge(view);
  const mine = bySuit(view.hand);
  const outstanding = bySuit(know.outstanding);
  const score = (action) => {
    const c = action.play.card;
    const s = suitOf(c);
    const r = rankOf(c);
    let myBeyond;
    let othersBeyond;
    let next;
    if (r === start) {
      // Opening a row gives both directions to everybody.
      myBeyond = mine[s].filter((x) => x !== r).length;
      othersBeyond = outstanding[s].length;
      next = [r - 1, r + 1];
    } else if (r > start) {
      myBeyond = mine[s].filter((x) => x > r).length;
      othersBeyond = outstanding[s].filter((x) => x > r).length;
      next = [r + 1];
    } else {
      myBeyond = mine[s].filter((x) => x < r).length;
      othersBeyond = outstanding[s].filter((x) => x < r).length;
      next = [r - 1];
    }
    const chain = next.filter((x) => mine[s].includes(x)).length;
    const helps = next.filter((x) => outstanding[s].includes(x)).length;
    return 2 * myBeyond + 2 * chain - 0.5 * othersBeyond - 1.5 * helps;
  };
  return maxBy(cards, score);
}

// ---- the entry point -----------------------------------------------------------------------------
// One of `request.legal` (the very object, to be sent back as the reply's action).
// `strict` (tests): let a heuristic's exception through instead of falling back to legal[0].
function decide(request, { strict = false } = {}) {
  const legal = request.legal;
  if (legal.length === 1) return legal[0];
  const view = request.view;
  let choice;
  try {
    switch (view.phase) {
      case 'DECLARE':
        choice = chooseDeclaration(view, legal);
        break;
      case 'DOUBLE':
        choice = chooseDouble(view, legal);
        break;
      case 'PLAY': {
        const contract = view.declaration && view.declaration.contract;
        if (contract === 'TRUMPS') {
          const card = trumpsPlay(view, legal);
          choice = legal.find((a) => a.play.card === card);
        } else {
          const card = negativePlay(view, legal, contract);
          choice = legal.find((a) => a.play.card === card);
        }
        break;
      }
      case 'DOMINO_PLAY':
        choice = dominoPlay(view, legal);
        break;
      default:
        choice = legal[0];
    }
  } catch (err) {
    if (strict) throw err;
    // A bug in a heuristic must never cost a fault: fall back to a legal action.
    process.stderr.write(`strategy error (${view.phase}): ${err && err.stack}\n`);
    choice = legal[0];
  }
  return legal.includes(choice) ? choice : legal[0];
}

module.exports = {
  RANKS,
  SUITS,
  rankOf,
  suitOf,
  cardName,
  decide,
  chooseDeclaration,
  chooseDouble,
  negativePlay,
  trumpsPlay,
  dominoPlay,
  zScore,
  goodness,
  bestTrump,
  bestStart,
  knowledge,
  winningCard,
  CALIBRATION,
};
