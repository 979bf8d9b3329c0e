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

// The fleet's memory for the same number of boards, each at an origin of its own, polled once through one dispatcher
// as the fleet's (bench/lib/idle-connections.mjs, in a process of its own), with the fleet's per-origin pool and with
// undici's Pool, which the fleet's dispatcher had before.
const { port } = new URL(baseUrl);
const fleetHeld = {};
for (const pool of ['undici', 'origin']) {
  const child = spawnNode(['--expose-gc', IDLE_CONNECTIONS, port, String(IDLE), String(FLEET_CONNECTIONS), pool]);
  const code = await new Promise((resolve) => child.once('exit', resolve));
  if (code !== 0) {
    throw new Error(`idle-connections.mjs ${pool} exited with ${code}: ${child.output()}`);
  }
  fleetHeld[pool] = JSON.parse(child.output());
}
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
console.log(`Fleet, ${IDLE} boards at an origin each, polled once (GET /health, /thermal) through one dispatcher:`);
console.log('| per-origin pool | connections held per board | RSS per board | heap per board |');
console.log('|---|---|---|---|');
for (const [pool, name] of [
  ['undici', "undici's Pool (before)"],
  ['origin', 'OriginPool (libs/board-api/src/client/origin-pool.ts)'],
]) {
  const h = fleetHeld[pool];
  console.log(`| ${name} | ${h.connections.toFixed(2)} | ${h.rssKiB.toFixed(1)} KiB | ${h.heapKiB.toFixed(1)} KiB |`);
}
