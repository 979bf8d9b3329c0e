// Polling benchmark: a rack of simulated boards polled by the fleet manager at the production interval, then the
// same rack polled by a bare undici loop (HTTP only) as the baseline. Writes a Markdown section to stdout.
//
//   TEST_DATABASE_URL=... TEST_REDIS_URL=redis://127.0.0.1:6379 BENCH_BOARDS=10000 BENCH_SECONDS=60 \
//   NODE_OPTIONS=--experimental-vm-modules npx jest --roots '<rootDir>/bench' --testMatch '**/poll.bench.ts' --forceExit
//
// The rack runs with --trust-loopback (no logins: 10,000 scrypt checks would measure the simulator, not us).
import { expect, it } from '@jest/globals';
import { Agent, request } from 'undici';
import { startTestApp } from '../test/support/app.js';
import { testEnv } from '../test/support/env.js';
import { apiClient } from '../test/boards/api.js';
import { startRack } from '../test/boards/rack.js';

const BOARDS = Number(process.env.BENCH_BOARDS ?? 10000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const INTERVAL = Number(process.env.BENCH_INTERVAL ?? 15);
const WARMUP = Number(process.env.BENCH_WARMUP ?? INTERVAL + 10);

function p(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

async function counter(metricsText: string, name: string): Promise<number> {
  return metricsText
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

it(`polls ${BOARDS} boards every ${INTERVAL} s`, async () => {
  const rack = await startRack(BOARDS, ['--trust-loopback']);
  const app = await startTestApp({
    redisUrl: testEnv.redisUrl ?? undefined,
    env: {
      POLL_INTERVAL_SECONDS: String(INTERVAL),
      POLL_CONCURRENCY: process.env.BENCH_CONCURRENCY ?? '64',
      POLL_TIMEOUT_MS: '5000',
    },
  });
  const api = apiClient(app.baseUrl);
  const lines: string[] = [];
  try {
    // The rack starts each simulated board on first contact (state files, password hash): seconds of simulator CPU
    // per hundred boards. Warm every board first so the measurement is of polling, not of the simulator booting.
    const warm = new Agent({ connections: 32 });
    const w0 = performance.now();
    let nextBoard = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (nextBoard < BOARDS) {
          const i = ++nextBoard;
          const r = await request(`${rack.boardUrl(i)}/api/bmc/about`, { dispatcher: warm });
          await r.body.text();
        }
      }),
    );
    await warm.close();
    lines.push(
      `Rack warm-up: ${BOARDS} simulated boards started in ${((performance.now() - w0) / 1000).toFixed(0)} s.`,
      '',
    );
    for (let i = 0; i < BOARDS; i += 1000) {
      const res = await api('POST', '/api/v1/boards/bulk', {
        boards: Array.from({ length: Math.min(1000, BOARDS - i) }, (_, k) => ({
          name: `b${i + k + 1}`,
          base_url: rack.boardUrl(i + k + 1),
        })),
      });
      expect(res.status).toBe(201);
    }
    await new Promise((r) => setTimeout(r, WARMUP * 1000));

    const polls0 = await counter((await api('GET', '/metrics')).body, 'tpfleet_board_polls_total');
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let rssMax = 0;
    const staleness: number[] = [];
    const end = Date.now() + SECONDS * 1000;
    while (Date.now() < end) {
      await new Promise((r) => setTimeout(r, 5000));
      rssMax = Math.max(rssMax, process.memoryUsage().rss);
      const now = Date.now();
      let cursor: string | null = null;
      do {
        const page = await api('GET', `/api/v1/boards?limit=500${cursor ? `&cursor=${cursor}` : ''}`);
        for (const b of page.body.items as Array<{ last_success_at: string | null }>) {
          staleness.push(b.last_success_at ? (now - new Date(b.last_success_at).getTime()) / 1000 : Infinity);
        }
        cursor = page.body.next_cursor;
      } while (cursor);
    }
    const wall = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const polls = (await counter((await api('GET', '/metrics')).body, 'tpfleet_board_polls_total')) - polls0;
    const fleet = {
      rate: polls / wall,
      cpuPer1000: ((cpu.user + cpu.system) / 1e6 / polls) * 1000,
      p50: p(staleness, 0.5),
      p99: p(staleness, 0.99),
      rssMb: rssMax / 2 ** 20,
    };
    await app.close();

    // Baseline: the same rack, a bare undici loop doing only the HTTP (GET /health and /thermal per board).
    const dispatcher = new Agent({ connections: 64, keepAliveTimeout: 30_000 });
    const lastOk = new Map<number, number>();
    let basePolls = 0;
    let stop = false;
    const bcpu0 = process.cpuUsage();
    const bt0 = performance.now();
    const baseEnd = Date.now() + SECONDS * 1000;
    const next = Array.from({ length: BOARDS }, () => Date.now() + Math.random() * INTERVAL * 1000);
    const due: number[] = [];
    const workers = Array.from({ length: 64 }, async () => {
      while (!stop) {
        const i = due.shift();
        if (i === undefined) {
          await new Promise((r) => setTimeout(r, 20));
          continue;
        }
        try {
          for (const op of ['health', 'thermal']) {
            const r = await request(`${rack.boardUrl(i + 1)}/api/bmc/${op}`, { dispatcher });
            JSON.parse(await r.body.text());
          }
          lastOk.set(i, Date.now());
          basePolls++;
        } catch {
          // counted as not polled
        }
      }
    });
    const clock = setInterval(() => {
      const now = Date.now();
      for (let i = 0; i < BOARDS; i++) {
        if (next[i]! <= now) {
          next[i] = next[i]! + INTERVAL * 1000;
          due.push(i);
        }
      }
    }, 250);
    const baseStaleness: number[] = [];
    while (Date.now() < baseEnd) {
      await new Promise((r) => setTimeout(r, 5000));
      const now = Date.now();
      {
        for (let i = 0; i < BOARDS; i++) {
          const t = lastOk.get(i);
          baseStaleness.push(t ? (now - t) / 1000 : Infinity);
        }
      }
    }
    stop = true;
    clearInterval(clock);
    await Promise.all(workers);
    const bwall = (performance.now() - bt0) / 1000;
    const bcpu = process.cpuUsage(bcpu0);
    await dispatcher.close();
    const base = {
      rate: basePolls / bwall,
      cpuPer1000: ((bcpu.user + bcpu.system) / 1e6 / basePolls) * 1000,
      p99: p(
        baseStaleness.filter((s) => s !== Infinity),
        0.99,
      ),
    };

    const f = (n: number, d = 1) => n.toFixed(d);
    lines.push(
      `| run | boards | interval | target polls/s | polls/s sustained | staleness p50 / p99 | CPU s per 1,000 polls | RSS (fleet process) |`,
      `|---|---|---|---|---|---|---|---|`,
      `| fleet manager (API + worker, one process) | ${BOARDS} | ${INTERVAL} s | ${f(BOARDS / INTERVAL)} | ${f(fleet.rate)} | ${f(fleet.p50)} s / ${f(fleet.p99)} s | ${f(fleet.cpuPer1000, 2)} | ${f(fleet.rssMb, 0)} MiB |`,
      `| bare undici loop (HTTP only) | ${BOARDS} | ${INTERVAL} s | ${f(BOARDS / INTERVAL)} | ${f(base.rate)} | – / ${f(base.p99)} s | ${f(base.cpuPer1000, 2)} | – |`,
    );
    console.log(`\nBENCH RESULT\n${lines.join('\n')}\n`);
  } finally {
    await app.close().catch(() => undefined);
    await rack.stop();
  }
}, 3_600_000);
