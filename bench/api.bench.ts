// API benchmark: the read paths ops use, with BENCH_BOARDS boards registered and polling running, p50/p99 per route.
// Writes a Markdown table to stdout.
//
//   BENCH_BOARDS=10000 npm run bench -- api
//
// The fleet manager runs as production runs it (an api and a worker process, the built entry point, PostgreSQL and
// Redis) against a `board-agent rack` (--trust-loopback). Boards are labelled `rack=r<k>` (200 boards a rack) and
// `role=spare` on every 10th, `role=worker` otherwise; every 50th board is unreachable, so there are firing alerts
// and state transitions to read. Before measuring, the bench waits for the registration's backup burst and for
// those alerts, and (BENCH_HISTORY_HOURS, default 1) fills each board's raw thermal history back to an hour, as a
// board polled for an hour has it.
//
// Each route is then driven alone for BENCH_SECONDS (default 15) by each of BENCH_API_CONCURRENCY (default `1,4`)
// keep-alive clients (in a process of their own, bench/lib/drive-process.mjs), each sending its next request when the
// last is answered, with the bootstrap admin token (one client: a person at the console, latency without queueing;
// four: the api process kept busy, so latency includes waiting behind the others' requests):
//   board list    GET /api/v1/boards?limit=100&selector=rack=r<k>,role!=spare   (a page of 100 of 180 matches)
//   board detail  GET /api/v1/boards/<id>
//   timeline      GET /api/v1/boards/<id>/timeline
//   thermal       GET /api/v1/boards/<id>/thermal                             (last hour, raw)
//   alerts        GET /api/v1/alerts?status=firing
// Baseline in the same run: `GET /healthz` (no auth, no database: the HTTP stack's floor on this machine at that
// moment), and every route again after the worker is stopped (polling off; BENCH_API_IDLE=0 skips that phase).
// The api process's CPU per request is read from /proc.
import { spawn } from 'node:child_process';
import { expect, it } from '@jest/globals';
import pg from 'pg';
import { apiClient } from '../test/boards/api.js';
import { startRack } from '../test/boards/rack.js';
import { TEST_ADMIN_TOKEN } from '../test/support/app.js';
import { createTestDatabase } from '../test/support/database.js';
import {
  fleetEnv,
  machineCpuSeconds,
  requireBenchServers,
  startFleetProcess,
  type FleetProcess,
} from '../test/support/fleet-process.js';
import { counter, registerRackBoards, runWithFleet, waitFirstBackups, warmRack } from './lib/fleet-setup.js';
import { startGithubMirror } from './lib/github-mirror.js';
import type { DriveResult } from './lib/load.mjs';

const BOARDS = Number(process.env.BENCH_BOARDS ?? 10000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const INTERVAL = Number(process.env.BENCH_INTERVAL ?? 15);
const CONCURRENCIES = (process.env.BENCH_API_CONCURRENCY ?? '1,4').split(',').map(Number);
const HISTORY_HOURS = Number(process.env.BENCH_HISTORY_HOURS ?? 1);
const IDLE_PHASE = process.env.BENCH_API_IDLE !== '0';
const RACK_SIZE = 200;
const UNREACHABLE_EVERY = 50;

/**
 * drive() (bench/lib/load.mjs) in a process of its own (bench/lib/drive-process.mjs), request i asking for
 * `paths[i % paths.length]`.
 */
async function driveApart(
  origin: string,
  options: { concurrency: number; timeoutMs: number; headers: Record<string, string>; paths: string[] },
): Promise<DriveResult> {
  const child = spawn(process.execPath, ['bench/lib/drive-process.mjs', origin], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stdin.end(JSON.stringify(options));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) {
    throw new Error(`the load process exited with ${code}`);
  }
  return JSON.parse(out) as DriveResult;
}

interface RouteRow {
  route: string;
  concurrency: number;
  result: DriveResult;
  apiCpuMsPerRequest: number;
  machineBusy: number;
}

it(`serves the read paths with ${BOARDS} boards polled every ${INTERVAL} s`, async () => {
  const { redisUrl } = requireBenchServers('api');
  const mirror = await startGithubMirror();
  const rack = await startRack(BOARDS, ['--trust-loopback', ...mirror.rackArgs]);
  const db = await createTestDatabase();
  const env = fleetEnv(db, redisUrl, {
    POLL_INTERVAL_SECONDS: String(INTERVAL),
    POLL_CONCURRENCY: '64',
    POLL_TIMEOUT_MS: '5000',
  });
  const fleet: FleetProcess[] = [];
  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  const lines: string[] = [];
  await runWithFleet(fleet, async () => {
    lines.push(`Rack warm-up: ${BOARDS} simulated boards started in ${(await warmRack(rack, BOARDS)).toFixed(0)} s.`);
    const apiProcess = await startFleetProcess('api', env);
    fleet.push(apiProcess);
    const worker = await startFleetProcess('worker', env);
    fleet.push(worker);
    const api = apiClient(apiProcess.url);
    const racks = Math.max(1, Math.ceil(BOARDS / RACK_SIZE));
    await registerRackBoards(api, rack, BOARDS, (i) => ({
      rack: `r${Math.ceil(i / RACK_SIZE)}`,
      role: i % 10 === 0 ? 'spare' : 'worker',
    }));
    for (let i = UNREACHABLE_EVERY; i <= BOARDS; i += UNREACHABLE_EVERY) {
      expect((await rack.control('POST', `/rack/boards/${i}/faults`, { unreachable: true })).status).toBe(200);
    }
    const unreachable = Math.floor(BOARDS / UNREACHABLE_EVERY);
    lines.push(
      `First configuration backups of all boards done ${(await waitFirstBackups(sql, BOARDS)).toFixed(0)} s after registration.`,
    );
    // board_unreachable fires after 2 minutes unreachable (src/alerts/default-rules.ts).
    const a0 = performance.now();
    for (;;) {
      const { rows } = await sql.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM "Alert" WHERE "status" = 'firing'`,
      );
      if (rows[0]!.n >= unreachable) {
        break;
      }
      if (performance.now() - a0 > 600_000) {
        throw new Error(`only ${rows[0]!.n} of ${unreachable} unreachable boards' alerts fired within 10 minutes`);
      }
      await new Promise((r) => setTimeout(r, 5000));
    }
    if (HISTORY_HOURS > 0) {
      // A board's raw thermal history back to HISTORY_HOURS, one sample per sensor per interval before its first
      // real one, so a thermal read finds what an hour's polling leaves.
      const h0 = performance.now();
      // The hourly partitions of that span first (prisma/migrations/*_thermal_sample_partitions), so the rows land
      // in them rather than in the default partition, which the compaction job would then move during the window.
      for (let h = 0; h <= HISTORY_HOURS; h++) {
        await sql.query(`SELECT "thermal_sample_partition"(now() - make_interval(hours => $1))`, [h]);
      }
      const inserted = await sql.query(
        `INSERT INTO "ThermalSample" ("boardId", "sensor", "at", "temperatureC")
         SELECT s."boardId", s."sensor", t, 40 + 20 * random()
         FROM (SELECT "boardId", "sensor", min("at") AS first FROM "ThermalSample" GROUP BY 1, 2) s,
              generate_series(now() - make_interval(hours => $1), s.first - interval '1 second',
                              make_interval(secs => $2)) t`,
        [HISTORY_HOURS, INTERVAL],
      );
      await sql.query(`ANALYZE "ThermalSample"`);
      lines.push(
        `Thermal history filled back to ${HISTORY_HOURS} h: ${inserted.rowCount} samples in ${((performance.now() - h0) / 1000).toFixed(0)} s.`,
      );
    }
    const counts = await sql.query<{ t: string; n: number }>(
      `SELECT 'thermal samples' AS t, count(*)::int AS n FROM "ThermalSample"
       UNION ALL SELECT 'timeline events', count(*)::int FROM "BoardEvent"
       UNION ALL SELECT 'alerts', count(*)::int FROM "Alert"`,
    );
    lines.push(`Rows: ${counts.rows.map((r) => `${r.t} ${r.n}`).join(', ')}.`, '');
    await new Promise((r) => setTimeout(r, (INTERVAL + 10) * 1000));

    const { rows: boards } = await sql.query<{ id: string }>(`SELECT "id"::text AS id FROM "Board" ORDER BY "name"`);
    // Boards and racks visited in a fixed scattered order, the same in both phases.
    const boardOf = (i: number) => boards[(i * 7919) % boards.length]!.id;
    const routes: Array<[string, (i: number) => string]> = [
      ['GET /healthz (baseline: no auth, no database)', () => '/healthz'],
      [
        'board list: limit=100, selector rack=r<k>,role!=spare',
        (i) => `/api/v1/boards?limit=100&selector=${encodeURIComponent(`rack=r${(i % racks) + 1},role!=spare`)}`,
      ],
      ['board detail', (i) => `/api/v1/boards/${boardOf(i)}`],
      ['timeline', (i) => `/api/v1/boards/${boardOf(i)}/timeline`],
      ['thermal history (last hour, raw)', (i) => `/api/v1/boards/${boardOf(i)}/thermal`],
      ['alerts list: status=firing', () => `/api/v1/alerts?status=firing`],
    ];
    const measure = async (): Promise<RouteRow[]> => {
      const rows: RouteRow[] = [];
      for (const concurrency of CONCURRENCIES) {
        for (const [route, pathOf] of routes) {
          const cpu0 = apiProcess.cpuSeconds();
          const m0 = machineCpuSeconds();
          const result = await driveApart(apiProcess.url, {
            concurrency,
            paths: Array.from({ length: boards.length }, (_, i) => pathOf(i)),
            headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
            timeoutMs: SECONDS * 1000,
          });
          if (result.errors > 0) {
            throw new Error(`${route}: ${result.errors} errors, first: ${result.firstError}`);
          }
          const m1 = machineCpuSeconds();
          rows.push({
            route,
            concurrency,
            result,
            apiCpuMsPerRequest: ((apiProcess.cpuSeconds() - cpu0) / result.done) * 1000,
            machineBusy: (m1.busy - m0.busy) / (m1.total - m0.total),
          });
        }
      }
      return rows;
    };

    const polls = async () =>
      counter((await apiClient(worker.url)('GET', '/metrics')).body as string, 'tpfleet_board_polls_total');
    // How polling writes the board's row: a HOT update stays on its page and adds no index entries, which a list page
    // would otherwise read through until vacuum (prisma/schema/boards.prisma, BoardSchedule).
    const updates = async () =>
      new Map(
        (
          await sql.query<{ table: string; updates: number; hot: number }>(
            `SELECT relname AS table, n_tup_upd::int AS updates, n_tup_hot_upd::int AS hot
             FROM pg_stat_user_tables WHERE relname IN ('Board', 'BoardSchedule') ORDER BY relname`,
          )
        ).rows.map((r) => [r.table, r] as const),
      );
    const polls0 = await polls();
    const updates0 = await updates();
    const t0 = performance.now();
    const running = await measure();
    const pollRate = ((await polls()) - polls0) / ((performance.now() - t0) / 1000);
    const updates1 = await updates();
    let idle: RouteRow[] | undefined;
    if (IDLE_PHASE) {
      await fleet.splice(1, 1)[0]!.stop();
      await new Promise((r) => setTimeout(r, 5000));
      idle = await measure();
    }

    const f = (n: number, d = 1) => n.toFixed(d);
    lines.push(
      `${BOARDS} boards, ${SECONDS} s per route and client count; polling ran at ${f(pollRate)} polls/s (target ${f(BOARDS / INTERVAL)}) during the first phase.`,
      `Row updates in that phase (HOT: on the row's page, no new index entries): ${[...updates1.values()]
        .map((u) => {
          const n = u.updates - (updates0.get(u.table)?.updates ?? 0);
          const hot = u.hot - (updates0.get(u.table)?.hot ?? 0);
          return `${u.table} ${n} (${f(n ? (100 * hot) / n : 0, 0)} % HOT)`;
        })
        .join(', ')}.`,
      '',
      `| route | clients | requests/s | p50 | p99 | max | api CPU ms per request | machine busy |${idle ? ' polling stopped: p50 / p99 |' : ''}`,
      `|---|---|---|---|---|---|---|---|${idle ? '---|' : ''}`,
      ...running.map((r, k) => {
        const i = idle?.[k];
        return `| ${r.route} | ${r.concurrency} | ${f(r.result.rps, 0)} | ${f(r.result.p50)} ms | ${f(r.result.p99)} ms | ${f(r.result.max)} ms | ${f(r.apiCpuMsPerRequest, 2)} | ${f(r.machineBusy * 100, 0)} % |${i ? ` ${f(i.result.p50)} ms / ${f(i.result.p99)} ms |` : ''}`;
      }),
    );
    console.log(`\nBENCH RESULT\n${lines.join('\n')}\n`);
  }, [() => sql.end(), () => db.drop(), () => rack.stop(), () => mirror.close()]);
}, 3_600_000);
