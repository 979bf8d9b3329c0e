// The keep-alive bench's memory half (bench/keep-alive.mjs): what a fleet process holds for boards it polls over kept
// HTTPS connections. In a process of its own, so each way starts from the same clean heap: one dispatcher for every
// board (as BoardClientsService builds it: the Agent of createBoardDispatcher, certificate pinning, as many
// connections per origin as the fleet allows), `boards` origins (the agent on as many loopback addresses), each polled
// once as the fleet polls (GET /health, then /thermal) and its connections kept.
//
// Usage: node --expose-gc idle-connections.mjs <port> <boards> <connections per origin> <way: origin|undici|context>
//   `origin`: the fleet's dispatcher (createBoardDispatcher);
//   `undici`: undici's Agent with its own Pool per origin, as the fleet's dispatcher was before origin-pool.ts;
//   `context`: the fleet's dispatcher as it was before it shared one TLS context (bench/lib/context-per-connection.mjs).
// Prints one JSON line: { boards, connections, rssKiB, heapKiB } — per board: the connections held, and the RSS and
// heap growth after a full collection.
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent } from 'undici';
import { BoardClient, createBoardDispatcher } from '@tpfleet/board-api/client';
import { dispatcherWithContextPerConnection } from './context-per-connection.mjs';
import { loopbackAddressOf } from './loopback.mjs';

const [portArg, boardsArg, connectionsArg, poolArg] = process.argv.slice(2);
const BOARDS = Number(boardsArg);
const CONNECTIONS = Number(connectionsArg);

/** The n-th board's origin (from 0): a loopback address of its own, so an origin per board. */
const originOf = (n) => `https://${loopbackAddressOf(n + 1)}:${portArg}`;

const pinned = new Map();
const pins = { expected: (origin) => pinned.get(origin), seen: async (origin, fp) => void pinned.set(origin, fp) };
const dispatchers = {
  origin: () => createBoardDispatcher({ rejectUnauthorized: false, pins, connections: CONNECTIONS }),
  // As createBoardDispatcher built it before origin-pool.ts (undici's Pool per origin), less the pin check.
  undici: () =>
    new Agent({
      connections: CONNECTIONS,
      keepAliveTimeout: 30_000,
      connect: { timeout: 5000, rejectUnauthorized: false, maxCachedSessions: 0 },
    }),
  context: () => dispatcherWithContextPerConnection({ pins, connections: CONNECTIONS }),
};
const dispatcher = dispatchers[poolArg]();
let connections = 0;
dispatcher.on('connect', () => connections++);
dispatcher.on('disconnect', () => connections--);

const settle = async () => {
  globalThis.gc();
  await sleep(500);
  globalThis.gc();
};
// Warm: the code compiled, the TLS machinery loaded, on origins past the measured ones.
for (let n = BOARDS; n < BOARDS + 20; n++) {
  const client = new BoardClient({ baseUrl: originOf(n), dispatcher });
  await client.read('getHealth');
  await client.read('getThermal');
}
await settle();
const before = { rss: process.memoryUsage.rss(), heap: process.memoryUsage().heapUsed, connections };
for (let n = 0; n < BOARDS; n++) {
  const client = new BoardClient({ baseUrl: originOf(n), dispatcher });
  await client.read('getHealth');
  await client.read('getThermal');
}
await sleep(200); // the last answers' connections back in their pools
await settle();
const after = { rss: process.memoryUsage.rss(), heap: process.memoryUsage().heapUsed, connections };
process.stdout.write(
  `${JSON.stringify({
    boards: BOARDS,
    connections: (after.connections - before.connections) / BOARDS,
    rssKiB: (after.rss - before.rss) / 1024 / BOARDS,
    heapKiB: (after.heap - before.heap) / 1024 / BOARDS,
  })}\n`,
);
await dispatcher.destroy();
