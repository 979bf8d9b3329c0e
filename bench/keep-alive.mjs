// What a board's keep-alive is worth to the fleet manager over HTTPS: the manager's CPU per poll (GET /health and
// /thermal through the fleet's BoardClient, with the fleet's certificate pinning) when each poll reuses the connection
// of the one before, against each poll on a new connection. The second is what a board that drops idle connections
// sooner than the poll interval costs (Node's default keep-alive, 5 s, at the fleet's default 15 s interval): a new
// TCP connection and a full TLS handshake per poll, since a pinning connector resumes no TLS session
// (libs/board-api/src/client/transport.ts). Also the board's own CPU per poll, and the board's and the fleet's RSS per
// idle connection held, and the fleet's per board it polls (read after a full collection: `npm run bench` runs this
// file with --expose-gc).
//
//   npm run bench -- keep-alive [--polls 2000] [--rounds 3] [--idle-connections 1000]
//
// The agent (`board-agent --simulate --tls --trust-loopback`) runs in a process of its own; polls run one at a time
// from this process, the ways in turn, `--rounds` times (the new-connection way also with the dispatcher as it was
// before it shared one TLS context, as the baseline); every figure is the median of the rounds.
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'undici';
import { BoardClient, createBoardDispatcher } from '@tpfleet/board-api/client';

import { dispatcherWithContextPerConnection } from './lib/context-per-connection.mjs';
import { cpuMsOf, memoryOf, spawnNode, stopChild } from './lib/proc.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const AGENT_BIN = join(HERE, '..', 'apps/agent/bin/board-agent.js');
const IDLE_CONNECTIONS = join(HERE, 'lib/idle-connections.mjs');
/** Connections per origin the fleet allows with its default settings: the three polling lanes' (BoardClientsService). */
const FLEET_CONNECTIONS = 64 + 32 + 128;

const { values: opts } = parseArgs({
  options: {
    polls: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '3' },
    'idle-connections': { type: 'string', default: '1000' },
  },
});
const POLLS = Number(opts.polls);
const ROUNDS = Number(opts.rounds);
const IDLE = Number(opts['idle-connections']);

const stateDir = mkdtempSync(join(tmpdir(), 'keep-alive-bench-'));
// On every address (0.0.0.0), so boards can be told apart by loopback address (127.0.1.1, …) in the memory half; the
// simulator trusts loopback peers only, and asks anyone else for a password.
const agent = spawnNode([
  AGENT_BIN,
  '--simulate',
  '--host',
  '0.0.0.0',
  '--port',
  '0',
  '--state-dir',
  stateDir,
  '--tls',
  '--trust-loopback',
  // Every client here is 127.0.0.1, and the bench holds more connections than a board lets one address hold.
  '--max-connections-per-address',
  '100000',
  '--max-connections',
  '100000',
]);
let baseUrl;
for (let waited = 0; !baseUrl; waited += 50) {
  const m = /listening on https:\/\/[^/:]+:(\d+)\//.exec(agent.output());
  if (m) {
    baseUrl = `https://127.0.0.1:${m[1]}`;
  } else if (waited > 30_000 || agent.exitCode !== null) {
    throw new Error(`the agent did not start: ${agent.output()}`);
  } else {
    await sleep(50);
  }
}

// As the fleet's BoardClientsService pins: the first certificate seen is kept, every later connection is checked.
const pinned = new Map();
const pins = { expected: (origin) => pinned.get(origin), seen: async (origin, fp) => void pinned.set(origin, fp) };
const dispatcherOptions = { rejectUnauthorized: false, pins, connections: 4 };

async function poll(client) {
  await client.read('getHealth');
  await client.read('getThermal');
}

/**
 * The poll's last request (`/thermal`) goes with undici's `reset`: the connection closes after its answer, so the next
 * poll opens a new one on the same dispatcher, as the fleet's does for a board that dropped its connection.
 */
const closingAfterPoll = (dispatch) => (options, handler) =>
  dispatch(options.path.includes('/thermal') ? { ...options, reset: true } : options, handler);

/**
 * The ways a poll is measured: on the connection of the one before, and each poll on a new connection through the one
 * dispatcher (until 2026-12-03 through a new dispatcher each, which also built what a dispatcher keeps for all its
 * connections), with the fleet's dispatcher and with the one before it shared a TLS context among its connections.
 */
const WAYS = {
  kept: { fresh: false, build: () => createBoardDispatcher(dispatcherOptions) },
  fresh: { fresh: true, build: () => createBoardDispatcher(dispatcherOptions) },
  freshContextEach: { fresh: true, build: () => dispatcherWithContextPerConnection(dispatcherOptions) },
};

/** CPU ms per poll of this process and of the agent, and the connections opened per poll, one way. */
async function measure({ fresh, build }) {
  const dispatcher = build();
  const client = new BoardClient({ baseUrl, dispatcher: fresh ? dispatcher.compose(closingAfterPoll) : dispatcher });
  // A fleet's next poll of a board comes seconds later, when the dispatcher has long seen the connection close (one
  // seen only after the next request went out makes undici's Agent send the request after it on a second one).
  const pollOnce = async () => {
    const closed = fresh ? once(dispatcher, 'disconnect') : undefined;
    await poll(client);
    await closed;
  };
  for (let i = 0; i < 50; i++) {
    await pollOnce(); // warm: code compiled, the pin taken
  }
  let opened = 0;
  dispatcher.on('connect', () => opened++);
  const mine0 = process.cpuUsage();
  const board0 = cpuMsOf(agent.pid);
  for (let i = 0; i < POLLS; i++) {
    await pollOnce();
  }
  const mine = process.cpuUsage(mine0);
  const board = cpuMsOf(agent.pid) - board0;
  await dispatcher.close();
  return { fleet: (mine.user + mine.system) / 1000 / POLLS, board: board / POLLS, opened: opened / POLLS };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
/** Each way's rounds, taken in turn, so a machine that speeds up or slows down moves every way alike. */
const rounds = Object.fromEntries(Object.keys(WAYS).map((way) => [way, []]));
for (let r = 0; r < ROUNDS; r++) {
  for (const [way, spec] of Object.entries(WAYS)) {
    rounds[way].push(await measure(spec));
  }
}

// The board's memory for idle connections: IDLE clients each make one request and keep their connection open.
await sleep(500);
const rss0 = memoryOf(agent.pid).rss;
const idle = Array.from(
  { length: IDLE },
  () => new Client(baseUrl, { connect: { rejectUnauthorized: false }, keepAliveTimeout: 600_000 }),
);
let keepAlive = 'none';
for (const c of idle) {
  const res = await c.request({ path: '/api/bmc/health', method: 'GET' });
  await res.body.text();
  keepAlive = String(res.headers['keep-alive'] ?? 'none');
  await sleep(20);
}
await sleep(1000);
const rss1 = memoryOf(agent.pid).rss;
await Promise.all(idle.map((c) => c.close()));

// The fleet's memory for the same number of boards, each at an origin of its own, polled once through one dispatcher
// as the fleet's (bench/lib/idle-connections.mjs, in a process of its own), with the fleet's per-origin pool and with
// undici's Pool, which the fleet's dispatcher had before.
const { port } = new URL(baseUrl);
// The memory half's ways (bench/lib/idle-connections.mjs), by their names in the table; `--rounds` of each, in turn.
const HELD_WAYS = [
  ['undici', "undici's Pool per origin (before 2026-12-02)"],
  ['context', 'OriginPool, a TLS context per connection (before 2026-12-03)'],
  ['origin', "OriginPool, the dispatcher's one TLS context (createBoardDispatcher)"],
];
const held = Object.fromEntries(HELD_WAYS.map(([way]) => [way, []]));
for (let r = 0; r < ROUNDS; r++) {
  for (const [way] of HELD_WAYS) {
    const child = spawnNode(['--expose-gc', IDLE_CONNECTIONS, port, String(IDLE), String(FLEET_CONNECTIONS), way]);
    const code = await new Promise((resolve) => child.once('exit', resolve));
    if (code !== 0) {
      throw new Error(`idle-connections.mjs ${way} exited with ${code}: ${child.output()}`);
    }
    held[way].push(JSON.parse(child.output()));
  }
}
await stopChild(agent);
rmSync(stateDir, { recursive: true, force: true });

const f = (x) => x.toFixed(3);
const med = (way, key) => median(rounds[way].map((k) => k[key]));
console.log(`Node ${process.version}, ${POLLS} polls (GET /health, /thermal) × ${ROUNDS} rounds each way; medians.`);
console.log(`The agent answers with Keep-Alive: ${keepAlive}`);
console.log('| each poll | connections opened per poll | fleet CPU ms per poll | board CPU ms per poll |');
console.log('|---|---|---|---|');
for (const [way, name] of [
  ['kept', 'on the connection of the one before'],
  ['fresh', 'on a new connection (TCP, full TLS handshake)'],
  ['freshContextEach', 'on a new connection, a TLS context per connection (before 2026-12-03)'],
]) {
  console.log(`| ${name} | ${med(way, 'opened').toFixed(2)} | ${f(med(way, 'fleet'))} | ${f(med(way, 'board'))} |`);
}
const ratio = (way, key) => (med(way, key) / med('kept', key)).toFixed(1);
console.log(
  `New connection / kept: fleet ${ratio('fresh', 'fleet')}× (${ratio('freshContextEach', 'fleet')}× with a TLS ` +
    `context per connection), board ${ratio('fresh', 'board')}×.`,
);
console.log(
  `Board RSS with ${IDLE} idle TLS connections held: +${((rss1 - rss0) / 1024 / IDLE).toFixed(1)} KiB per connection ` +
    `(${(rss0 / 2 ** 20).toFixed(1)} → ${(rss1 / 2 ** 20).toFixed(1)} MiB).`,
);
console.log(
  `Fleet, ${IDLE} boards at an origin each, polled once (GET /health, /thermal) through one dispatcher ` +
    `(medians of ${ROUNDS} runs each way):`,
);
console.log('| dispatcher | connections held per board | RSS per board | heap per board |');
console.log('|---|---|---|---|');
for (const [way, name] of HELD_WAYS) {
  const m = (key) => median(held[way].map((h) => h[key]));
  console.log(
    `| ${name} | ${m('connections').toFixed(2)} | ${m('rssKiB').toFixed(1)} KiB | ${m('heapKiB').toFixed(1)} KiB |`,
  );
}
