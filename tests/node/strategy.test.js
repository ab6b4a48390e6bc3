'use strict';
// Unit tests of the Node sample bot's strategy (sample_bots/node/strategy.js), with Node's own
// test runner: `node --test tests/node/` (tests/node/test_node_bot.py runs them under pytest).
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');

const strategy = require(path.join(__dirname, '..', '..', 'sample_bots', 'node', 'strategy.js'));

// A View as @grpc/proto-loader delivers it (keepCase, enums as strings, defaults filled in).
function view(fields) {
  return {
    seat: 0, phase: 'PLAY', deal: 0, declarer: 0, dealer: 0, turn: 0, hand: [], hand_sizes: [13, 13, 13, 13],
    declaration: null, declared: [], quota_doubles: [0, 0, 0, 0], declarations_left: 7, doubles: [], levels: [],
    plays: [], trick_leader: -1, trick: [], tricks: [], tricks_won: [0, 0, 0, 0], layout: [], finished: [],
    results: [], totals: [0, 0, 0, 0],
    ...fields,
  };
}
const plays = (cards) => cards.map((card) => ({ play: { card, pass: false }, kind: 'play' }));
const pass = { play: { card: '', pass: true }, kind: 'play' };
const decl = (contract, extra = {}) => ({ contract, trump: '', start_rank: '', ...extra });
const card = (action) => (action.play.pass ? 'pass' : action.play.card);

function decide(fields, legal) {
  const request = { request_id: '7', view: view(fields), legal, decision_seconds: 1, reserve_seconds: 0 };
  const choice = strategy.decide(request, { strict: true });
  assert.ok(legal.includes(choice), 'the answer must be one of the legal action objects');
  return choice;
}

test('ducks with the highest card that still loses the trick', () => {
  const hand = ['3S', '9S', 'JS', 'AS', '2C'];
  const legal = plays(['3S', '9S', 'JS', 'AS']);
  const got = decide({ seat: 2, hand, declaration: decl('NO_TRICKS'), trick_leader: 0, trick: ['5S', 'QS'] }, legal);
  assert.equal(card(got), 'JS');
});

test('when it must take the trick as last player, it unloads its biggest card', () => {
  const hand = ['KS', 'AS', '2C'];
  const got = decide(
    { seat: 3, hand, declaration: decl('NO_TRICKS'), trick_leader: 0, trick: ['5S', '7S', '9S'] },
    plays(['KS', 'AS']),
  );
  assert.equal(card(got), 'AS');
});

test('No Queens: a void player sheds a queen; following, it never takes its own queen', () => {
  const hand = ['QS', '2D', 'AH', '4H'];
  const got = decide(
    { seat: 1, hand, declaration: decl('NO_QUEENS'), trick_leader: 0, trick: ['6C'] },
    plays(hand),
  );
  assert.equal(card(got), 'QS');
  // Must win a spade trick as last player with K or Q: the king, keeping the queen out of it.
  const hand2 = ['QS', 'KS', '3D'];
  const got2 = decide(
    { seat: 3, hand: hand2, declaration: decl('NO_QUEENS'), trick_leader: 0, trick: ['9S', 'TS', 'JS'] },
    plays(['QS', 'KS']),
  );
  assert.equal(card(got2), 'KS');
});

test('Barbu: a void player sheds the king of hearts', () => {
  const hand = ['KH', 'AS', 'AD', '3H'];
  const got = decide({ seat: 2, hand, declaration: decl('BARBU'), trick_leader: 0, trick: ['5C', '9C'] }, plays(hand));
  assert.equal(card(got), 'KH');
});

test('No Hearts: a void player sheds its highest heart before a high plain card', () => {
  const hand = ['AH', '9H', '2H', 'KS'];
  const got = decide({ seat: 1, hand, declaration: decl('NO_HEARTS'), trick_leader: 0, trick: ['5D'] }, plays(hand));
  assert.equal(card(got), 'AH');
});

test('leads a card that others can beat rather than a sure winner', () => {
  // Every higher spade is out (not in hand, not played): 3S is easy to lose, AC is a sure winner.
  const hand = ['AC', '3S'];
  const got = decide({ seat: 0, hand, declaration: decl('NO_TRICKS'), tricks: [] }, plays(hand));
  assert.equal(card(got), '3S');
});

test('Trumps: wins as cheaply as it can when last, ruffs low when void', () => {
  const trumpsHearts = decl('TRUMPS', { trump: 'H' });
  const got = decide(
    { seat: 3, hand: ['TS', 'KS', 'AS', '2C'], declaration: trumpsHearts, trick_leader: 0, trick: ['5S', '9S', '7S'] },
    plays(['TS', 'KS', 'AS']),
  );
  assert.equal(card(got), 'TS');
  const got2 = decide(
    { seat: 3, hand: ['3H', 'QH', '2C'], declaration: trumpsHearts, trick_leader: 0, trick: ['5S', '9S', 'AS'] },
    plays(['3H', 'QH', '2C']),
  );
  assert.equal(card(got2), '3H');
  // Cannot win: throws a low plain card, keeps its trumps.
  const got3 = decide(
    { seat: 3, hand: ['3H', '4D', 'QD'], declaration: trumpsHearts, trick_leader: 0, trick: ['5S', 'AH', '2S'] },
    plays(['3H', '4D', 'QD']),
  );
  assert.equal(card(got3), '4D');
});

test('Domino: plays the card that releases its own cards, passes only when it must', () => {
  // Start rank 7, clubs row 6-8 open. 9C releases its TC and JC; 5D (diamond row 5-7... open) releases nothing.
  const domino = decl('DOMINO', { start_rank: '7' });
  const layout = ['6C', '7C', '8C', '6D', '7D'];
  const hand = ['9C', 'TC', 'JC', '5D'];
  const got = decide({ seat: 1, phase: 'DOMINO_PLAY', hand, declaration: domino, layout }, plays(['9C', '5D']));
  assert.equal(card(got), '9C');
  const only = decide({ seat: 1, phase: 'DOMINO_PLAY', hand: ['KS'], declaration: domino, layout }, [pass]);
  assert.equal(card(only), 'pass');
  // With domino_must_play=false a pass is offered beside the cards: it still plays.
  const got2 = decide({ seat: 1, phase: 'DOMINO_PLAY', hand, declaration: domino, layout }, [...plays(['9C', '5D']), pass]);
  assert.notEqual(card(got2), 'pass');
});

test('declares a contract the hand suits, with its best trump suit', () => {
  const hand = ['AS', 'KS', 'QS', 'JS', 'TS', '9S', 'AH', 'AD', 'AC', 'KC', '2D', '3D', '4H'];
  const legal = [
    { declare: decl('NO_TRICKS'), kind: 'declare' },
    ...['C', 'D', 'H', 'S'].map((s) => ({ declare: decl('TRUMPS', { trump: s }), kind: 'declare' })),
  ];
  const got = decide({ phase: 'DECLARE', hand }, legal);
  assert.deepEqual([got.declare.contract, got.declare.trump], ['TRUMPS', 'S']);
});

test('doubles only with a hand that suits the contract, and obeys the quota', () => {
  const pass0 = { double: { targets: [] }, kind: 'double' };
  const onDeclarer = { double: { targets: [0] }, kind: 'double' };
  const onTwo = { double: { targets: [2] }, kind: 'double' };
  const both = { double: { targets: [0, 2] }, kind: 'double' };
  const badForNoTricks = ['AS', 'KS', 'QS', 'JS', 'AH', 'KH', 'QH', 'AD', 'KD', 'QD', 'AC', 'KC', 'QC'];
  const goodForNoTricks = ['2S', '3S', '4S', '5S', '2H', '3H', '4H', '2D', '3D', '4D', '2C', '3C', '4C'];
  const fields = { seat: 1, declarer: 0, phase: 'DOUBLE', declaration: decl('NO_TRICKS') };
  assert.equal(decide({ ...fields, hand: badForNoTricks }, [pass0, onDeclarer, onTwo, both]), pass0);
  assert.ok(decide({ ...fields, hand: goodForNoTricks }, [pass0, onDeclarer, onTwo, both]).double.targets.includes(0));
  // Forced by the quota: every legal action holds the declarer.
  assert.equal(decide({ ...fields, hand: badForNoTricks }, [onDeclarer, both]), onDeclarer);
});

test('every answer is one of the legal actions, over many random situations', () => {
  const deck = [];
  for (const s of 'CDHS') for (const r of '23456789TJQKA') deck.push(r + s);
  let seed = 12345;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  const contracts = ['NO_TRICKS', 'NO_HEARTS', 'NO_QUEENS', 'BARBU', 'NO_LAST_TWO', 'TRUMPS'];
  for (let i = 0; i < 300; i++) {
    const shuffled = deck.slice().sort(() => random() - 0.5);
    const hand = shuffled.slice(0, 1 + Math.floor(random() * 13));
    const trick = shuffled.slice(13, 13 + Math.floor(random() * 4));
    const contract = contracts[i % contracts.length];
    const legal = plays(hand.slice(0, 1 + Math.floor(random() * hand.length)));
    const declaration = decl(contract, contract === 'TRUMPS' ? { trump: 'CDHS'[i % 4] } : {});
    decide({ seat: trick.length, hand, declaration, trick_leader: trick.length ? 0 : -1, trick }, legal);
  }
});
