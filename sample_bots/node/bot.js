#!/usr/bin/env node
'use strict';
// A Barbu Arena bot in Node.js: the whole protocol in one file, the play in strategy.js.
//
//   npm ci --prefix sample_bots/node          # once: installs @grpc/grpc-js and @grpc/proto-loader
//   node sample_bots/node/bot.js              # the arbiter starts it like this
//
// The arbiter's launcher sets BARBU_ARBITER (host:port, or unix:/path/to/socket) and
// BARBU_TOKEN (the seat's secret). The bot loads proto/barbu/v1/arbiter.proto at run time
// (@grpc/proto-loader: no generated code), opens ONE bidirectional stream (Arbiter.Play),
// sends Hello, answers every DecisionRequest with one of its legal actions (the very Action
// message it was offered, copied back) and the same request_id, and ignores the informational
// messages. Its play is a pure function of each request, so it says in its hello that it can
// play several matches (multi_match): after MatchEnd it keeps the stream open, plays the next
// MatchStart the arbiter sends, and exits 0 when the arbiter ends the stream. Exit 1 when the
// session fails, 2 when the environment is incomplete. Logs go to stderr, which the arbiter
// keeps beside the match log; BARBU_LOG_LEVEL=DEBUG shows every decision.

const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const strategy = require('./strategy');

const PROTOCOL_VERSION = 1;
const BOT_NAME = 'node-heuristic';
const BOT_VERSION = require('./package.json').version;
const PROTO = path.resolve(__dirname, '..', '..', 'proto', 'barbu', 'v1', 'arbiter.proto');
const MULTI_MATCH = true; // one process may play several matches (Hello.multi_match)

const LEVELS = { DEBUG: 10, INFO: 20, WARNING: 30, ERROR: 40 };
const LEVEL = LEVELS[(process.env.BARBU_LOG_LEVEL || 'INFO').trim().toUpperCase()] || LEVELS.INFO;
function log(level, message) {
  if (LEVELS[level] >= LEVEL) process.stderr.write(`${new Date().toISOString()} ${level} ${BOT_NAME}: ${message}\n`);
}

function loadService() {
  const definition = protoLoader.loadSync(PROTO, {
    keepCase: true, // field names exactly as in the .proto: request_id, protocol_version, ...
    longs: String, // uint64 request ids arrive as decimal strings and are echoed back as such
    enums: String, // "NO_QUEENS", "DOMINO_PLAY"
    defaults: true, // absent fields read as their defaults ([] for lists, "" for strings)
    oneofs: true, // a message's `msg` / an action's `kind` names the member that is set
  });
  return grpc.loadPackageDefinition(definition).barbu.v1.Arbiter;
}

function describeAction(action) {
  if (action.declare) {
    const d = action.declare;
    return d.contract + (d.trump ? ` ${d.trump}` : '') + (d.start_rank ? ` from ${d.start_rank}` : '');
  }
  if (action.double) return `double [${action.double.targets.join(',')}]`;
  if (action.play) return action.play.pass ? 'pass' : action.play.card;
  return '?';
}

function main() {
  const address = (process.env.BARBU_ARBITER || '').trim();
  const token = process.env.BARBU_TOKEN || '';
  if (!address) {
    log('ERROR', 'no arbiter address: set BARBU_ARBITER to host:port or unix:/path/to/socket');
    process.exitCode = 2;
    return;
  }
  if (!token) {
    log('ERROR', 'no seat token: set BARBU_TOKEN to the token the arbiter gave this seat');
    process.exitCode = 2;
    return;
  }
  const Arbiter = loadService();
  const client = new Arbiter(address, grpc.credentials.createInsecure());
  const call = client.Play();
  let inMatch = false; // between MatchStart and MatchEnd
  let matches = 0; // matches ended
  let decisions = 0;
  let finished = false;

  const finish = (code) => {
    if (finished) return;
    finished = true;
    process.exitCode = code;
    client.close();
    // grpc-js keeps no handle open once the channel is closed; exit anyway if one lingers.
    setTimeout(() => process.exit(code), 1000).unref();
  };

  call.on('data', (message) => {
    switch (message.msg) {
      case 'match_start': {
        const s = message.match_start;
        inMatch = true;
        decisions = 0;
        log('INFO', `match ${s.match_id}: seat ${s.seat}, ${s.deals} deals, rules ${s.rules_json}, ` +
          `${s.decision_seconds}s a decision + ${s.reserve_seconds}s reserve`);
        break;
      }
      case 'request': {
        const request = message.request;
        const action = strategy.decide(request);
        call.write({ reply: { request_id: request.request_id, action } });
        decisions += 1;
        log('DEBUG', `request ${request.request_id} (${request.view.phase}): ${describeAction(action)}`);
        break;
      }
      case 'deal_end': {
        const results = message.deal_end.view.results;
        const r = results[results.length - 1];
        if (r) log('DEBUG', `deal ${r.deal} (${r.declaration && r.declaration.contract}): scores ${r.scores.join(' ')}`);
        break;
      }
      case 'match_end': {
        const end = message.match_end;
        inMatch = false;
        matches += 1;
        log('INFO', `match ended (${end.status}${end.reason ? `: ${end.reason}` : ''}) after ${decisions} decisions: ` +
          `totals ${end.totals.join(' ')}, places ${end.places.join(' ')}`);
        // A multi-match bot keeps its stream open: the arbiter sends the next MatchStart, or ends
        // the stream (then 'end' below exits 0).
        if (!MULTI_MATCH) call.end(); // half-close: the arbiter then ends the stream
        break;
      }
      default:
        log('DEBUG', `ignoring an unknown message from the arbiter (${message.msg})`);
    }
  });
  call.on('error', (err) => {
    if (!inMatch && matches > 0) {
      finish(0);
      return;
    }
    const what = err.code === grpc.status.UNAVAILABLE && decisions === 0 ? `cannot reach the arbiter at ${address}` : 'the arbiter ended the session';
    log('ERROR', `${what}: ${grpc.status[err.code] || err.code}: ${err.details || err.message}`);
    finish(1);
  });
  call.on('end', () => {
    const ok = !inMatch && matches > 0;
    if (!ok) log('ERROR', `the arbiter closed the session before the match ended (after ${decisions} decisions)`);
    finish(ok ? 0 : 1);
  });

  call.write({
    hello: {
      protocol_version: PROTOCOL_VERSION, token, bot_name: BOT_NAME, bot_version: BOT_VERSION, multi_match: MULTI_MATCH,
    },
  });
  log('DEBUG', `connecting to the arbiter at ${address} (protocol v${PROTOCOL_VERSION})`);
}

main();
