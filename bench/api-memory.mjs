// The api process's memory with 10,000 boards: `npm run bench -- api-memory` (BENCH_BOARDS to change the count).
// Starts `node dist/src/main.js --role api` alone (no worker, so no polling) on an empty database, reads its RSS from
// /proc when idle, registers the boards through POST /api/v1/boards/bulk in bulks of 1,000 (as the poll bench does),
// and reads RSS again right after and while it stays idle. Needs PostgreSQL (DATABASE_ADMIN_URL, default the local
// server as user postgres) and Redis (REDIS_URL, default the local server); the database it creates is dropped.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { freePort, memoryOf, spawnNode, stopChild, waitForOk } from './lib/proc.mjs';

const BOARDS = Number(process.env.BENCH_BOARDS ?? 10000);
const adminUrl = process.env.DATABASE_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const database = `bench_api_memory_${process.pid}`;
const token = 'bench-admin-token-0123456789abcdef';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const mib = (bytes) => `${Math.round(bytes / 2 ** 20)} MiB`;

const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${database}`);
const dbUrl = new URL(adminUrl);
dbUrl.pathname = `/${database}`;
const port = await freePort();
Object.assign(process.env, {
  HOST: '127.0.0.1',
  PORT: String(port),
  LOG_LEVEL: 'warn',
  MALLOC_ARENA_MAX: '2', // as the production image sets them (Dockerfile)
  NODE_OPTIONS: '--max-semi-space-size=8', // the api role's (docker-compose.yml)
  DATABASE_URL: dbUrl.href,
  REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  QUEUE_PREFIX: database,
  DB_AUTO_MIGRATE: '1',
  BOOTSTRAP_ADMIN_TOKEN: token,
  OUTBOUND_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128', // the boards' addresses (nothing polls them: no worker)
  SECRET_KEY: createHash('sha256').update('bench key').digest('base64'),
});
const api = spawnNode(['dist/src/main.js', '--role', 'api']);
const rows = [];
const note = (when) => {
  const { rss, hwm } = memoryOf(api.pid);
  rows.push(`| ${when} | ${mib(rss)} | ${mib(hwm)} |`);
};
try {
  const url = `http://127.0.0.1:${port}`;
  await waitForOk(`${url}/healthz`, api, { timeoutMs: 60_000, intervalMs: 200 });
  await sleep(15_000);
  note('idle, no boards (15 s after start)');
  // Whether the idle process gives back by itself what boot left in its young generation and glibc's heap (an idle
  // process allocates next to nothing, so no scavenge comes to shrink it).
  await sleep(45_000);
  note('idle, no boards (60 s after start)');
  for (let i = 0; i < BOARDS; i += 1000) {
    const res = await fetch(`${url}/api/v1/boards/bulk`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        boards: Array.from({ length: Math.min(1000, BOARDS - i) }, (_, k) => ({
          name: `b${i + k + 1}`,
          base_url: `http://127.0.0.1:9/boards/${i + k + 1}`,
        })),
      }),
    });
    if (res.status !== 201) {
      throw new Error(`bulk registration: ${res.status} ${await res.text()}`);
    }
    await res.arrayBuffer();
  }
  note(`right after registering ${BOARDS} boards`);
  for (const seconds of [30, 60, 120]) {
    await sleep((seconds === 30 ? 30 : seconds / 2) * 1000);
    note(`idle, ${seconds} s after registering`);
  }
  console.log(`\n| api process (${BOARDS} boards) | RSS | peak RSS |\n|---|---|---|\n${rows.join('\n')}\n`);
} finally {
  await stopChild(api);
  await admin.query(`DROP DATABASE IF EXISTS ${database}`);
  await admin.end();
}
