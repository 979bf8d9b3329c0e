// Polling benchmark: a rack of simulated boards polled by the fleet manager at the production interval, then the
// same rack polled by a bare undici loop (the same HTTP requests, nothing else, in a process of its own:
// bench/lib/undici-loop.mjs) as the baseline. Writes a Markdown table to stdout.
//
//   BENCH_BOARDS=10000 BENCH_SECONDS=60 npm run bench -- poll
//
// The fleet manager runs as production runs it (docker-compose): the built entry point in two processes, `--role
// api` (registration, the API) and `--role worker` (queue workers), both with the scheduler clock. Their CPU and peak
// RSS are read from /proc, so neither jest nor the bench's own sampling (staleness is read straight from
// PostgreSQL) is counted. BENCH_WORKER_NODE_ARGS adds node options to the worker, e.g.
// `--cpu-prof --cpu-prof-dir=.tmp/prof` for a V8 CPU profile, or `--import $PWD/bench/lib/gc-trace.mjs` for what its
// garbage collector does; BENCH_API_NODE_ARGS the same to the api.
// The rack runs with --trust-loopback (no logins: 10,000 scrypt checks would measure the simulator, not us), its boards'
// update checks answered by a GitHub mirror on loopback (bench/lib/github-mirror.ts).
//
// Side by side (BENCH_SIDE_BY_SIDE=0 skips it): after the fault-free window, the loop runs once more beside the
// fleet, over one window, polling the same rack, and the two CPU figures of that window are compared too. The machine
// speeds up and slows down between windows (the loop's figure moved by a third within one session on one machine,
// docs/benchmarks.md); side by side, both meet the same machine.
//
// BENCH_FAULTY=0.2 adds a faulty phase after the fault-free window, in the same run: that share of the boards gets a
// fault (4 s and 8 s latency, 500s, unreachable, connection reset mid-body, a body trickled over 10 s, in equal
// parts), and the healthy boards' staleness is measured again over a window as long, against the same boards'
// staleness without faults. Backwards moves of last_success_at (a trigger in the bench database) and transitions
// recorded twice (timeline events that do not chain) are counted over the whole run.
//
// Second baseline (bench/lib/prometheus.ts): after the undici loop, Prometheus (Debian's /usr/bin/prometheus, or
// BENCH_PROMETHEUS=<path>; BENCH_PROMETHEUS=0 skips it) scrapes every board's /metrics at the same interval, alone,
// and its CPU per scrape is printed beside the fleet's per poll. A scrape is one GET of a text page, parsed and
// appended to Prometheus's TSDB; a poll is 2.5 board requests on average, validated, compared with the stored state
// and written to PostgreSQL (state, transitions, thermal history) through the queue.
import { expect, it } from '@jest/globals';
import pg from 'pg';
import { spawn } from 'node:child_process';
import { createTestDatabase } from '../test/support/database.js';
import { FIRST_FIRMWARE_CHECK_SPREAD_SECONDS } from '../src/boards/boards.service.js';
import { apiClient } from '../test/boards/api.js';
import { startRack } from '../test/boards/rack.js';
import {
  cpuSecondsOf,
  fleetEnv,
  machineCpuSeconds,
  mainThreadCpuSecondsOf,
  requireBenchServers,
  startFleetProcess,
  type FleetProcess,
} from '../test/support/fleet-process.js';
import {
  counter,
  registerRackBoards,
  runWithFleet,
  waitFirstBackups,
  waitFirstSlowReads,
  waitUpdateAlerts,
  warmRack,
} from './lib/fleet-setup.js';
import { startGithubMirror } from './lib/github-mirror.js';
import { prometheusBinary, prometheusWindow } from './lib/prometheus.js';
import { loopbackAddressOf } from './lib/loopback.mjs';

const BOARDS = Number(process.env.BENCH_BOARDS ?? 10000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const INTERVAL = Number(process.env.BENCH_INTERVAL ?? 15);
const WARMUP = Number(process.env.BENCH_WARMUP ?? INTERVAL + 10);
/** The fleet reads /cooling and /sdcard every MEDIUM_EVERY-th poll (src/polling/polling.settings.ts). */
const MEDIUM_EVERY = 4;
/** Bytes a fleet process's JavaScript heap allocated since it started (src/metrics/metrics.service.ts). */
const ALLOCATED_METRIC = 'tpfleet_nodejs_heap_allocated_bytes_total';
const FAULTY = Number(process.env.BENCH_FAULTY ?? 0);
/**
 * BENCH_ORIGIN_PER_BOARD=1: each board at an origin of its own, as real boards are (the rack on every address, board n
 * at http://<loopbackAddressOf(n)>:<port>/boards/n), so the fleet and the loop keep a connection per board instead of
 * sharing 64 to one origin (over TLS with BENCH_TLS=1). Not side by side: the two would hold a connection
 * per board each to the rack at once, past its open-files limit at 10,000 boards.
 */
const ORIGIN_PER_BOARD = process.env.BENCH_ORIGIN_PER_BOARD === '1';
/**
 * BENCH_TLS=1: the rack serves HTTPS (`--tls`, one self-signed certificate), so the fleet pins it on every board origin
 * and keeps a TLS connection each, and the loop and Prometheus reach the boards over TLS too.
 */
const TLS = process.env.BENCH_TLS === '1';
/**
 * BENCH_NEWER_RELEASE=1: the boards' update check finds a newer stable release (bench/lib/github-mirror.ts), so each
 * board has the fleet's firmware_update_available alert open, as every board does once a release is out.
 */
const NEWER_RELEASE = process.env.BENCH_NEWER_RELEASE === '1';
const SIDE_BY_SIDE = process.env.BENCH_SIDE_BY_SIDE !== '0' && !ORIGIN_PER_BOARD;
/** The faulty mix (wrong passwords and bans need logins, which --trust-loopback skips: resets and trickles instead). */
const FAULT_MIX: Array<Record<string, unknown>> = [
  { latencyMs: 4000 },
  { latencyMs: 8000 },
  { errorRate: 1 },
  { unreachable: true },
  { resetAfterBytes: 8, bodyBytesPerSecond: 1_000_000 },
  { padBodyBytes: 1000, bodyBytesPerSecond: 100 },
];

/** Runs the bare undici loop (bench/lib/undici-loop.mjs) in a process of its own and returns what it measured. */
async function undiciLoop(
  rackUrl: string,
  boards: number,
  intervalSeconds: number,
  seconds: number,
  mediumEvery: number,
  warmupSeconds: number,
  rackPid: number,
  originPerBoard: boolean,
): Promise<{
  polls: number;
  wallSeconds: number;
  cpuSeconds: number;
  mainThreadCpuSeconds: number;
  allocatedBytes: number | null;
  staleness: Array<number | null>;
  warmupSeconds: number;
  /** Connections the rack accepted over the window, and how many resumed a TLS session. */
  rackConnections: { accepted: number; tlsResumed: number };
  rackCpuSeconds: number;
  machineBusy: number;
}> {
  const child = spawn(
    process.execPath,
    [
      'bench/lib/undici-loop.mjs',
      rackUrl,
      String(boards),
      String(intervalSeconds),
      String(seconds),
      String(mediumEvery),
      String(warmupSeconds),
      String(rackPid),
      ...(originPerBoard ? ['origin-per-board'] : []),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) {
    throw new Error(`the undici loop exited with ${code}`);
  }
  return JSON.parse(out) as Awaited<ReturnType<typeof undiciLoop>>;
}

function p(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

it(`polls ${BOARDS} boards every ${INTERVAL} s`, async () => {
  const { redisUrl } = requireBenchServers('poll');
  const mirror = await startGithubMirror({ newerRelease: NEWER_RELEASE });
  const rack = await startRack(BOARDS, [
    '--trust-loopback',
    ...mirror.rackArgs,
    ...(ORIGIN_PER_BOARD ? ['--host', '0.0.0.0'] : []),
    ...(TLS ? ['--tls'] : []),
  ]);
  const { port: rackPort, protocol } = new URL(rack.url);
  const boardsRack = ORIGIN_PER_BOARD
    ? { ...rack, boardUrl: (n: number) => `${protocol}//${loopbackAddressOf(n)}:${rackPort}/boards/${n}` }
    : rack;
  const db = await createTestDatabase();
  const env = fleetEnv(db, redisUrl, {
    POLL_INTERVAL_SECONDS: String(INTERVAL),
    POLL_CONCURRENCY: process.env.BENCH_CONCURRENCY ?? '64',
    POLL_TIMEOUT_MS: '5000',
  });
  const fleet: FleetProcess[] = [];
  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  // Every backwards move of a board's last success, whoever writes it, is counted by the database itself.
  await sql.query(`
    CREATE TABLE bench_regressions (board uuid, was timestamptz, became timestamptz);
    CREATE FUNCTION bench_note_regression() RETURNS trigger AS $$
    BEGIN INSERT INTO bench_regressions VALUES (NEW."id", OLD."lastSuccessAt", NEW."lastSuccessAt"); RETURN NEW; END
    $$ LANGUAGE plpgsql;
    CREATE TRIGGER bench_regression AFTER UPDATE ON "Board" FOR EACH ROW
      WHEN (NEW."lastSuccessAt" < OLD."lastSuccessAt") EXECUTE FUNCTION bench_note_regression();`);
  const lines: string[] = [];
  await runWithFleet(fleet, async () => {
    const warmS = await warmRack(boardsRack, BOARDS);
    lines.push(`Rack warm-up: ${BOARDS} simulated boards started in ${warmS.toFixed(0)} s.`, '');

    const nodeArgs = (name: string) => (process.env[name] ?? '').split(' ').filter(Boolean);
    const apiProcess = await startFleetProcess('api', env, nodeArgs('BENCH_API_NODE_ARGS'));
    fleet.push(apiProcess);
    const worker = await startFleetProcess('worker', env, nodeArgs('BENCH_WORKER_NODE_ARGS'));
    fleet.push(worker);
    const api = apiClient(apiProcess.url);
    await registerRackBoards(api, boardsRack, BOARDS);
    const registeredAt = performance.now();
    // Registration also queues every new board's first configuration backup: measure polling once that is over.
    const backupsS = await waitFirstBackups(sql, BOARDS);
    lines.push(`First configuration backups of all boards done ${backupsS.toFixed(0)} s after registration.`, '');
    // And every board's first slow-lane read: spread over FIRST_FIRMWARE_CHECK_SPREAD_SECONDS from registration, then
    // (two intervals at most) claimed and read.
    const sinceRegistration = () => (performance.now() - registeredAt) / 1000;
    const slow = await waitFirstSlowReads(
      sql,
      BOARDS,
      Math.max(0, FIRST_FIRMWARE_CHECK_SPREAD_SECONDS + 2 * INTERVAL + 10 - sinceRegistration()),
    );
    lines.push(
      `First slow-lane reads (update check, slots): ${slow.n} of ${BOARDS} boards ${sinceRegistration().toFixed(0)} s ` +
        `after registration (spread over the first ${FIRST_FIRMWARE_CHECK_SPREAD_SECONDS} s).`,
    );
    // With a newer release out, every board's update alert opens at the next full evaluation pass: not in the window.
    const updates = await waitUpdateAlerts(sql, 120);
    lines.push(
      `Boards whose update check finds a newer stable release: ${updates.outdated}; their update alerts open before ` +
        `the window: ${updates.open}.`,
      '',
    );
    if (NEWER_RELEASE) {
      expect(updates.outdated).toBe(slow.n);
    }
    await new Promise((r) => setTimeout(r, WARMUP * 1000));

    const workerMetrics = async () => (await apiClient(worker.url)('GET', '/metrics')).body as string;
    const polls = async (text?: string) => counter(text ?? (await workerMetrics()), 'tpfleet_board_polls_total');
    /** The worker's heap allocations so far (from Node.js 26 on; NaN before, which prints as "n/a"). */
    const allocated = (text: string) => (text.includes(ALLOCATED_METRIC) ? counter(text, ALLOCATED_METRIC) : NaN);
    /** Connections the rack accepted so far, and how many of them resumed a TLS session (GET /rack). */
    const rackConnections = async () =>
      (await rack.control('GET', '/rack')).body.connections as { accepted: number; tlsResumed: number };
    const connections0 = await rackConnections();
    const metrics0 = await workerMetrics();
    const allocated0 = allocated(metrics0);
    const polls0 = await polls(metrics0);
    const cpu0 = fleet.map((f) => f.cpuSeconds());
    const workerMain0 = mainThreadCpuSecondsOf(worker.pid);
    const rackCpu0 = cpuSecondsOf(rack.process.pid!);
    const machine0 = machineCpuSeconds();
    const t0 = performance.now();
    // Boards faulty in the faulty phase (every (1/FAULTY)-th by name); the others are the healthy set compared.
    const faultEvery = FAULTY > 0 ? Math.round(1 / FAULTY) : 0;
    const isFaulty = (name: string) => faultEvery > 0 && Number(name.slice(1)) % faultEvery === 0;
    /** Samples every board's age of last success every 5 s for `seconds`: all boards, and the healthy set. */
    // The worker's peak so far covers registration and its backup burst; the windows' own peak is sampled (VmRSS).
    const workerPeakBeforeWindows = worker.peakRssBytes();
    let workerRssInWindows = 0;
    const sampleStaleness = async (seconds: number) => {
      const all: number[] = [];
      const healthy: number[] = [];
      const until = Date.now() + seconds * 1000;
      while (Date.now() < until) {
        await new Promise((r) => setTimeout(r, 5000));
        workerRssInWindows = Math.max(workerRssInWindows, worker.rssBytes());
        const { rows } = await sql.query<{ name: string; age: number | null }>(
          `SELECT "name", extract(epoch FROM clock_timestamp() - "lastSuccessAt")::float8 AS age FROM "Board"`,
        );
        for (const row of rows) {
          all.push(row.age ?? Infinity);
          if (!isFaulty(row.name)) {
            healthy.push(row.age ?? Infinity);
          }
        }
      }
      return { all, healthy };
    };
    const sampled = await sampleStaleness(SECONDS);
    const staleness = sampled.all;
    const wall = (performance.now() - t0) / 1000;
    const connections1 = await rackConnections();
    const metricsText = await workerMetrics();
    const polled = (await polls(metricsText)) - polls0;
    const allocatedPerPoll = (allocated(metricsText) - allocated0) / polled;
    const failures = metricsText
      .split('\n')
      .filter((l) => l.startsWith('tpfleet_board_poll_failures_total{'))
      .map((l) => l.replace('tpfleet_board_poll_failures_total', ''));
    // CPU of the fault-free window only (the faulty phase below runs on the same processes).
    const [apiCpu, workerCpu] = fleet.map((f, i) => f.cpuSeconds() - cpu0[i]!) as [number, number];
    const workerMainCpu = mainThreadCpuSecondsOf(worker.pid) - workerMain0;
    const rackCores = (cpuSecondsOf(rack.process.pid!) - rackCpu0) / wall;
    const machine1 = machineCpuSeconds();
    const machineBusy = (machine1.busy - machine0.busy) / (machine1.total - machine0.total);
    const states = await sql.query<{ state: string; n: number }>(
      `SELECT "state"::text AS state, count(*)::int AS n FROM "Board" GROUP BY 1 ORDER BY 2 DESC`,
    );

    // Side by side: the loop beside the fleet over one window, the same rack; each one's CPU over that window.
    let sideBySide:
      | {
          fleet: number;
          worker: number;
          workerMainShare: number;
          loop: number;
          loopMainShare: number;
          fleetRate: number;
          loopRate: number;
          busy: number;
        }
      | undefined;
    if (SIDE_BY_SIDE) {
      const polls1 = await polls();
      const cpu1 = fleet.map((f) => f.cpuSeconds());
      const workerMain1 = mainThreadCpuSecondsOf(worker.pid);
      const machine2 = machineCpuSeconds();
      const t1 = performance.now();
      // No warm-up: the fleet's figures are read around the whole call (on one origin the loop's 64 connections
      // are made in its first moment).
      const beside = await undiciLoop(
        rack.url,
        BOARDS,
        INTERVAL,
        SECONDS,
        MEDIUM_EVERY,
        0,
        rack.process.pid!,
        ORIGIN_PER_BOARD,
      );
      const wall1 = (performance.now() - t1) / 1000;
      const polled1 = (await polls()) - polls1;
      const [apiCpu1, workerCpu1] = fleet.map((f, i) => f.cpuSeconds() - cpu1[i]!) as [number, number];
      const workerMainCpu1 = mainThreadCpuSecondsOf(worker.pid) - workerMain1;
      const machine3 = machineCpuSeconds();
      sideBySide = {
        fleet: ((apiCpu1 + workerCpu1) / polled1) * 1000,
        worker: (workerCpu1 / polled1) * 1000,
        workerMainShare: workerMainCpu1 / workerCpu1,
        loop: (beside.cpuSeconds / beside.polls) * 1000,
        loopMainShare: beside.mainThreadCpuSeconds / beside.cpuSeconds,
        fleetRate: polled1 / wall1,
        loopRate: beside.polls / beside.wallSeconds,
        busy: (machine3.busy - machine2.busy) / (machine3.total - machine2.total),
      };
    }

    // The faulty phase: the same fleet processes, a fifth (BENCH_FAULTY) of the boards given faults.
    let faulty:
      | { healthy: number[]; states: string; faulted: number; cpuPer1000: number; workerPer1000: number; rate: number }
      | undefined;
    if (faultEvery > 0) {
      let faulted = 0;
      for (let i = faultEvery; i <= BOARDS; i += faultEvery) {
        const res = await rack.control('POST', `/rack/boards/${i}/faults`, FAULT_MIX[faulted % FAULT_MIX.length]);
        expect(res.status).toBe(200);
        faulted++;
      }
      // Two intervals for the faulty boards to show their faults (and move lanes), then a window as long as the first.
      await new Promise((r) => setTimeout(r, 2 * INTERVAL * 1000 + 10_000));
      // The fleet's CPU per poll over the faulty window too: what the faulty boards cost it (failed polls count).
      const pollsF = await polls();
      const cpuF = fleet.map((f) => f.cpuSeconds());
      const tF = performance.now();
      const during = await sampleStaleness(SECONDS);
      const polledF = (await polls()) - pollsF;
      const [apiCpuF, workerCpuF] = fleet.map((f, i) => f.cpuSeconds() - cpuF[i]!) as [number, number];
      const wallF = (performance.now() - tF) / 1000;
      const fstates = await sql.query<{ state: string; n: number }>(
        `SELECT "state"::text AS state, count(*)::int AS n FROM "Board" GROUP BY 1 ORDER BY 2 DESC`,
      );
      faulty = {
        healthy: during.healthy,
        states: fstates.rows.map((r) => `${r.state} ${r.n}`).join(', '),
        faulted,
        cpuPer1000: ((apiCpuF + workerCpuF) / polledF) * 1000,
        workerPer1000: (workerCpuF / polledF) * 1000,
        rate: polledF / wallF,
      };
      // The baseline below polls the same rack, fault-free.
      for (let i = faultEvery; i <= BOARDS; i += faultEvery) {
        await rack.control('DELETE', `/rack/boards/${i}/faults`);
      }
    }
    const regressions = (await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM bench_regressions`)).rows[0]!.n;
    const { rows: transitions } = await sql.query<{ board: string; from: string; to: string }>(
      `SELECT "boardId" AS board, detail->>'from' AS "from", detail->>'to' AS "to"
       FROM "BoardEvent" WHERE "kind" = 'state' ORDER BY "boardId", "at", "id"`,
    );
    let duplicateTransitions = 0;
    const lastTo = new Map<string, string>();
    for (const t of transitions) {
      const previous = lastTo.get(t.board);
      if (previous !== undefined && previous !== t.from) {
        duplicateTransitions++;
      }
      lastTo.set(t.board, t.to);
    }
    const result = {
      rate: polled / wall,
      cpuPer1000: ((apiCpu + workerCpu) / polled) * 1000,
      workerPer1000: (workerCpu / polled) * 1000,
      p50: p(staleness, 0.5),
      p99: p(staleness, 0.99),
      workerRssMb: worker.peakRssBytes() / 2 ** 20,
      workerPeakBeforeMb: workerPeakBeforeWindows / 2 ** 20,
      apiRssMb: apiProcess.peakRssBytes() / 2 ** 20,
    };
    for (const f of fleet.splice(0)) {
      await f.stop();
    }

    // Baseline: the same rack, a bare undici loop doing only the fleet's HTTP (bench/lib/undici-loop.mjs), in a
    // process of its own: its CPU is read there, over its window, as the fleet processes' is from /proc.
    // Its window opens after a warm-up as long as the fleet's, on connections already made.
    const loop = await undiciLoop(
      rack.url,
      BOARDS,
      INTERVAL,
      SECONDS,
      MEDIUM_EVERY,
      WARMUP,
      rack.process.pid!,
      ORIGIN_PER_BOARD,
    );
    const baseRackCores = loop.rackCpuSeconds / loop.wallSeconds;
    const baseMachineBusy = loop.machineBusy;
    const base = {
      rate: loop.polls / loop.wallSeconds,
      cpuPer1000: (loop.cpuSeconds / loop.polls) * 1000,
      p99: p(
        loop.staleness.filter((s): s is number => s !== null),
        0.99,
      ),
    };

    // Second baseline: Prometheus scraping every board's /metrics at the same interval, alone (fleet and loop stopped).
    const prometheus = prometheusBinary();
    const prom = prometheus
      ? await prometheusWindow({
          binary: prometheus,
          rackUrl: rack.url,
          rackPid: rack.process.pid!,
          boards: BOARDS,
          intervalSeconds: INTERVAL,
          warmupSeconds: WARMUP,
          seconds: SECONDS,
        })
      : undefined;

    const f = (n: number, d = 1) => n.toFixed(d);
    const kib = (bytes: number) => (Number.isNaN(bytes) ? 'n/a' : `${f(bytes / 1024)} KiB`);
    const { rows: openAlerts } = await sql.query<{ rule: string; n: number }>(
      `SELECT "rule", count(*)::int AS n FROM "Alert" WHERE "openKey" IS NOT NULL GROUP BY "rule" ORDER BY "rule"`,
    );
    lines.push(
      `The rack: ${ORIGIN_PER_BOARD ? 'an origin per board' : 'every board behind one origin'}, ${TLS ? 'HTTPS (one self-signed certificate, pinned on every origin by the fleet)' : 'plain HTTP'}; the boards' update check finds ${NEWER_RELEASE ? 'a newer stable release' : 'they run the latest stable release'}.`,
      `Open alerts at the end: ${openAlerts.map((a) => `${a.rule} ${a.n}`).join(', ') || 'none'}.`,
      '',
      `| run | boards | interval | target polls/s | polls/s sustained | staleness p50 / p99 | CPU s per 1,000 polls | peak RSS |`,
      `|---|---|---|---|---|---|---|---|`,
      `| fleet manager (api + worker processes) | ${BOARDS} | ${INTERVAL} s | ${f(BOARDS / INTERVAL)} | ${f(result.rate)} | ${f(result.p50)} s / ${f(result.p99)} s | ${f(result.cpuPer1000, 2)} (worker ${f(result.workerPer1000, 2)}) | worker ${f(result.workerRssMb, 0)} MiB, api ${f(result.apiRssMb, 0)} MiB |`,
      `| bare undici loop (${TLS ? 'HTTPS' : 'HTTP'} only) | ${BOARDS} | ${INTERVAL} s | ${f(BOARDS / INTERVAL)} | ${f(base.rate)} | – / ${f(base.p99)} s | ${f(base.cpuPer1000, 2)} | – |`,
      '',
      `Fleet CPU per poll: ${f(result.cpuPer1000 / base.cpuPer1000, 2)}× the baseline's; staleness p99 ${f(result.p99 / INTERVAL, 2)}× the interval.`,
      `During the fleet window: worker ${f(workerCpu / wall, 2)} cores (${f((100 * workerMainCpu) / workerCpu, 0)} % of it on its main thread, the rest V8's helper threads: collector and compilers), api ${f(apiCpu / wall, 2)}, rack ${f(rackCores, 2)}; the machine was ${f(machineBusy * 100, 0)} % busy.`,
      `Worker resident set: peak ${f(result.workerRssMb, 0)} MiB over its life (${f(result.workerPeakBeforeMb, 0)} MiB before the first window: registration and its backup burst), at most ${f(workerRssInWindows / 2 ** 20, 0)} MiB sampled every 5 s in the polling windows${faultEvery > 0 ? ' (fault-free and faulty)' : ''}.`,
      `Connections the rack accepted in the windows (${TLS ? 'each not resumed a full TLS handshake' : 'plain TCP'}): fleet ${connections1.accepted - connections0.accepted} (${connections1.tlsResumed - connections0.tlsResumed} resumed), ${f(((connections1.accepted - connections0.accepted) / polled) * 1000)} per 1,000 polls; loop ${loop.rackConnections.accepted} (${loop.rackConnections.tlsResumed} resumed), ${f((loop.rackConnections.accepted / loop.polls) * 1000)} per 1,000 polls.`,
      `Board states at the end: ${states.rows.map((r) => `${r.state} ${r.n}`).join(', ')}; poll failures since start: ${failures.join(', ') || 'none'}.`,
      `Heap allocated per poll (V8's count, Node.js 26 on; the same on any machine, unlike CPU seconds): worker ${kib(allocatedPerPoll)}, loop ${kib(loop.allocatedBytes === null ? NaN : loop.allocatedBytes / loop.polls)}.`,
      `During the baseline window (after the loop's warm-up of ${f(loop.warmupSeconds, 0)} s): loop ${f(loop.cpuSeconds / loop.wallSeconds, 2)} cores (${f((100 * loop.mainThreadCpuSeconds) / loop.cpuSeconds, 0)} % on its main thread), rack ${f(baseRackCores, 2)}; the machine was ${f(baseMachineBusy * 100, 0)} % busy.`,
    );
    if (sideBySide) {
      const b = sideBySide;
      lines.push(
        `Side by side (the loop beside the fleet over one ${SECONDS} s window, the same rack): fleet ${f(b.fleet, 2)} CPU s per 1,000 polls (worker ${f(b.worker, 2)}) at ${f(b.fleetRate)} polls/s, loop ${f(b.loop, 2)} at ${f(b.loopRate)} polls/s: **${f(b.fleet / b.loop, 2)}×**; on their main threads ${f(b.workerMainShare * 100, 0)} % of the worker's CPU and ${f(b.loopMainShare * 100, 0)} % of the loop's; the machine was ${f(b.busy * 100, 0)} % busy.`,
      );
    }
    if (prom) {
      const promPer1000 = (prom.cpuSeconds / prom.scrapes) * 1000;
      lines.push(
        '',
        `| Prometheus ${prom.version} (second baseline) | boards | interval | target scrapes/s | scrapes/s (succeeded) | samples per scrape | CPU s per 1,000 scrapes | peak RSS |`,
        `|---|---|---|---|---|---|---|---|`,
        `| one GET of each board's /metrics per interval, parsed and stored | ${BOARDS} | ${INTERVAL} s | ${f(BOARDS / INTERVAL)} | ${f(prom.scrapes / prom.wall)} (${f(prom.succeeded / prom.wall)}) | ${f(prom.samplesPerScrape, 0)} | ${f(promPer1000, 2)} | ${f(prom.peakRssBytes / 2 ** 20, 0)} MiB |`,
        '',
        `Fleet CPU per poll: ${f(result.cpuPer1000 / promPer1000, 2)}× Prometheus's CPU per scrape (worker alone ${f(result.workerPer1000 / promPer1000, 2)}×).`,
        `During the Prometheus window: prometheus ${f(prom.cpuSeconds / prom.wall, 2)} cores, rack ${f(prom.rackCores, 2)} (rendering the pages); the machine was ${f(prom.machineBusy * 100, 0)} % busy. Scrape duration mean ${f(prom.scrapeMs.mean)} ms, p99 ${f(prom.scrapeMs.p99)} ms; head series ${prom.headSeries}.`,
      );
    }
    if (faulty) {
      const clean = sampled.healthy;
      const row = (label: string, s: number[]) =>
        `| ${label} | ${s.length} | ${f(p(s, 0.5))} s | ${f(p(s, 0.99))} s | ${f(Math.max(...s))} s (${f(Math.max(...s) / INTERVAL, 2)} intervals) |`;
      lines.push(
        '',
        `Faulty phase: ${faulty.faulted} of ${BOARDS} boards faulty (${FAULT_MIX.map((m) => JSON.stringify(m)).join(', ')}); healthy boards' age of last success:`,
        '',
        `| window | samples | p50 | p99 | max |`,
        `|---|---|---|---|---|`,
        row('without faults', clean),
        row(`with ${f(FAULTY * 100, 0)} % faulty`, faulty.healthy),
        '',
        `Healthy p99 with faults: ${f(p(faulty.healthy, 0.99) / p(clean, 0.99), 2)}× the fault-free p99. Board states at the end: ${faulty.states}.`,
        `Over the faulty window: ${f(faulty.rate)} polls/s (failed ones included), fleet ${f(faulty.cpuPer1000, 2)} CPU s per 1,000 polls (worker ${f(faulty.workerPer1000, 2)}), against ${f(result.cpuPer1000, 2)} without faults.`,
      );
    }
    lines.push(
      `last_success_at regressions over the run: ${regressions}; transitions recorded twice: ${duplicateTransitions}.`,
    );
    console.log(`\nBENCH RESULT\n${lines.join('\n')}\n`);
  }, [() => sql.end(), () => db.drop(), () => rack.stop(), () => mirror.close()]);
}, 3_600_000);
