// What a board's keep-alive is worth to the fleet manager over HTTPS: the manager's CPU per poll (GET /health and
// /thermal through the fleet's BoardClient, with the fleet's certificate pinning) when each poll reuses the connection
// of the one before, against each poll on a new connection. The second is what a board that drops idle connections
// sooner than the poll interval costs (Node's default keep-alive, 5 s, at the fleet's default 15 s interval): a new
// TCP connection and a full TLS handshake per poll, since a pinning connector resumes no TLS session
// (libs/board-api/src/client/transport.ts). Also the board's own CPU per poll, and the board's and the fleet's RSS per
// idle connection held (read after a full collection: `npm run bench` runs this file with --expose-gc).
//
//   npm run bench -- keep-alive [--polls 2000] [--rounds 3] [--idle-connections 200]
//
// The agent (`board-agent --simulate --tls --trust-loopback`) runs in a process of its own; polls run one at a time
// from this process, the two ways in turn, `--rounds` times; every figure is the median of the rounds.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'undici';
import { BoardClient, createBoardDispatcher } from '@tpfleet/board-api/client';

import { cpuMsOf, memoryOf, spawnNode, stopChild } from './lib/proc.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const AGENT_BIN = join(HERE, '..', 'apps/agent/bin/board-agent.js');

const { values: opts } = parseArgs({
  options: {
    polls: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '3' },
    'idle-connections': { type: 'string', default: '200' },
  },
});
const POLLS = Number(opts.polls);
const ROUNDS = Number(opts.rounds);
const IDLE = Number(opts['idle-connections']);

const stateDir = mkdtempSync(join(tmpdir(), 'keep-alive-bench-'));
const agent = spawnNode([AGENT_BIN, '--simulate', '--port', '0', '--state-dir', stateDir, '--tls', '--trust-loopback']);
let baseUrl;
for (let waited = 0; !baseUrl; waited += 50) {
  const m = /listening on (https:\/\/[^/]+)\//.exec(agent.output());
  if (m) {
    baseUrl = m[1];
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

/** CPU ms per poll of this process and of the agent; `fresh`: a new dispatcher (so a new connection) for each poll. */
async function measure(fresh) {
  let dispatcher = createBoardDispatcher(dispatcherOptions);
  let client = new BoardClient({ baseUrl, dispatcher });
  for (let i = 0; i < 50; i++) {
    await poll(client); // warm: code compiled, the pin taken, a connection open
  }
  const mine0 = process.cpuUsage();
  const board0 = cpuMsOf(agent.pid);
  for (let i = 0; i < POLLS; i++) {
    if (fresh) {
      await dispatcher.close();
      dispatcher = createBoardDispatcher(dispatcherOptions);
      client = new BoardClient({ baseUrl, dispatcher });
    }
    await poll(client);
  }
  const mine = process.cpuUsage(mine0);
  const board = cpuMsOf(agent.pid) - board0;
  await dispatcher.close();
  return { fleet: (mine.user + mine.system) / 1000 / POLLS, board: board / POLLS };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const kept = [];
const fresh = [];
for (let r = 0; r < ROUNDS; r++) {
  kept.push(await measure(false));
  fresh.push(await measure(true));
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

// The fleet's memory for the same: IDLE dispatchers as the fleet builds them, each polled once and its connection
// kept (the fleet holds one per board; a dispatcher each stands in for an origin each). RSS growth: it reads low
// when the process has freed memory to reuse, so compare runs of the same options.
const settle = async () => {
  globalThis.gc?.();
  await sleep(1000);
  globalThis.gc?.();
};
await settle();
const fleet0 = process.memoryUsage.rss();
const held = [];
for (let i = 0; i < IDLE; i++) {
  const dispatcher = createBoardDispatcher(dispatcherOptions);
  held.push(dispatcher);
  await poll(new BoardClient({ baseUrl, dispatcher }));
}
await settle();
const fleet1 = process.memoryUsage.rss();
await Promise.all(held.map((d) => d.close()));
await stopChild(agent);
rmSync(stateDir, { recursive: true, force: true });

const f = (x) => x.toFixed(3);
const keptFleet = median(kept.map((k) => k.fleet));
const freshFleet = median(fresh.map((k) => k.fleet));
const keptBoard = median(kept.map((k) => k.board));
const freshBoard = median(fresh.map((k) => k.board));
console.log(`Node ${process.version}, ${POLLS} polls (GET /health, /thermal) × ${ROUNDS} rounds each way; medians.`);
console.log(`The agent answers with Keep-Alive: ${keepAlive}`);
console.log('| each poll | fleet CPU ms per poll | board CPU ms per poll |');
console.log('|---|---|---|');
console.log(`| on the connection of the one before | ${f(keptFleet)} | ${f(keptBoard)} |`);
console.log(`| on a new connection (TCP, full TLS handshake) | ${f(freshFleet)} | ${f(freshBoard)} |`);
console.log(
  `New connection / kept: fleet ${(freshFleet / keptFleet).toFixed(1)}×, board ${(freshBoard / keptBoard).toFixed(1)}×.`,
);
console.log(
  `Board RSS with ${IDLE} idle TLS connections held: +${((rss1 - rss0) / 1024 / IDLE).toFixed(1)} KiB per connection ` +
    `(${(rss0 / 2 ** 20).toFixed(1)} → ${(rss1 / 2 ** 20).toFixed(1)} MiB).`,
);
console.log(
  `Fleet RSS with ${IDLE} idle TLS connections held, a dispatcher each: ` +
    `+${((fleet1 - fleet0) / 1024 / IDLE).toFixed(1)} KiB per connection ` +
    `(${(fleet0 / 2 ** 20).toFixed(1)} → ${(fleet1 / 2 ** 20).toFixed(1)} MiB).`,
);
