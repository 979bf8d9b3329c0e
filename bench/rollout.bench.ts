// Rollout benchmark: a 1,000-board rollout through the fleet manager (built, in an api and a worker process as
// production runs it; PostgreSQL, Redis) against a `board-agent rack` whose boards take BENCH_INSTALL_MS to install (download + flash, modelled by
// the rack's --install-delay-ms) and BENCH_BOOT_MS to reboot (--boot-delay-ms), promotion gate included. Reports
// the wall time against the ideal schedule: for each wave, ceil(size / concurrency) rounds of install + reboot.
//
//   BENCH_BOARDS=1000 npm run bench -- rollout
//
// The firmware host the boards download from lives in the bench's own process.
import { expect, it } from '@jest/globals';
import { apiClient, waitFor } from '../test/boards/api.js';
import { startRack } from '../test/boards/rack.js';
import {
  installCalls,
  pushSources,
  registerBoards,
  startFirmwareHost,
  TARGET,
  waitOnline,
  type Api,
} from '../test/firmware/helpers.js';
import { mapLimit } from '../src/common/concurrency.js';
import { createTestDatabase } from '../test/support/database.js';
import { fleetEnv, requireBenchServers, startFleetProcess, type FleetProcess } from '../test/support/fleet-process.js';
import { runWithFleet } from './lib/fleet-setup.js';

const BOARDS = Number(process.env.BENCH_BOARDS ?? 1000);
const INSTALL_MS = Number(process.env.BENCH_INSTALL_MS ?? 2000);
const BOOT_MS = Number(process.env.BENCH_BOOT_MS ?? 3000);
// One worker process runs 32 firmware jobs at once (src/jobs/queue-settings.ts); a run holds its slot from install
// to verdict, so 32 is the most one process can keep in flight.
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);

it(`rolls out to ${BOARDS} boards`, async () => {
  const { redisUrl } = requireBenchServers('rollout');
  const host = await startFirmwareHost();
  const rack = await startRack(BOARDS, [
    '--trust-loopback',
    '--boot-delay-ms',
    String(BOOT_MS),
    '--install-delay-ms',
    String(INSTALL_MS),
  ]);
  const db = await createTestDatabase();
  const env = fleetEnv(db, redisUrl, {
    POLL_INTERVAL_SECONDS: '10',
    POLL_SLOW_INTERVAL_SECONDS: '30',
    POLL_CONCURRENCY: '64',
    POLL_TIMEOUT_MS: '5000',
  });
  const fleet: FleetProcess[] = [];
  fleet.push(await startFleetProcess('api', env), await startFleetProcess('worker', env));
  const api = apiClient(fleet[0]!.url) as Api;
  await runWithFleet(fleet, async () => {
    await registerBoards(
      api,
      rack,
      1,
      BOARDS,
      () => ({ bench: 'rollout' }),
      (i) => `r${(i % 20) + 1}`,
    );
    await waitOnline(api, '', BOARDS, 180_000);
    await pushSources(api, host, '', 180_000);
    const policy = {
      canary: 10,
      waves: [{ percent: 20 }],
      concurrency: CONCURRENCY,
      fleet_cap: CONCURRENCY,
      reboot_timeout_seconds: 120,
    };
    const started = performance.now();
    const created = await api('POST', '/api/v1/firmware/rollouts', {
      name: 'bench',
      version: TARGET,
      source: 'test-http',
      policy,
    });
    expect(created.status).toBe(201);
    // Watched through the list (one row), not the detail: the detail carries all 1,000 boards, and reading it four
    // times a second would load the very process being measured.
    await waitFor(
      'rollout finished',
      () => api('GET', '/api/v1/firmware/rollouts?limit=1'),
      (r) => r.body.items[0]?.status !== 'running',
      1_800_000,
      250,
    );
    const wallS = (performance.now() - started) / 1000;
    const value = await api('GET', `/api/v1/firmware/rollouts/${created.body.id}`);
    expect(value.body.status).toBe('completed');
    const sizes = (value.body.waves as Array<{ size: number }>).map((w) => w.size);
    const rounds = sizes.reduce((n, s) => n + Math.ceil(s / CONCURRENCY), 0);
    const idealS = (rounds * (INSTALL_MS + BOOT_MS)) / 1000;
    // The same work with no round boundaries inside a wave (a slot refills as soon as its board finishes).
    const fluidS = (sizes.reduce((n, s) => n + s / CONCURRENCY, 0) * (INSTALL_MS + BOOT_MS)) / 1000;
    const waveTimes = (value.body.waves as Array<{ wave: number }>).map((w) => {
      const boards = (value.body.boards as Array<{ wave: number; started_at: string; finished_at: string }>).filter(
        (b) => b.wave === w.wave,
      );
      const t0 = Math.min(...boards.map((b) => Date.parse(b.started_at)));
      const t1 = Math.max(...boards.map((b) => Date.parse(b.finished_at)));
      return ((t1 - t0) / 1000).toFixed(1);
    });
    const calls = await mapLimit(
      Array.from({ length: BOARDS }, (_, k) => k + 1),
      32,
      (i) => installCalls(rack, i),
    );
    // console.log, not process.stdout: jest reports console output on stderr, which `npm run bench` shows.
    console.log(
      [
        '',
        `| boards | waves | concurrency | install + reboot | ideal (rounds) | fluid ideal | wall | wall / ideal | per-wave wall (s) | installs per board |`,
        `|---|---|---|---|---|---|---|---|---|---|`,
        `| ${BOARDS} | ${sizes.join(' / ')} | ${CONCURRENCY} | ${INSTALL_MS / 1000} s + ${BOOT_MS / 1000} s | ${idealS.toFixed(1)} s (${rounds} rounds) | ${fluidS.toFixed(1)} s | ${wallS.toFixed(1)} s | ${(wallS / idealS).toFixed(3)} | ${waveTimes.join(' / ')} | min ${Math.min(...calls)}, max ${Math.max(...calls)} |`,
        '',
      ].join('\n'),
    );
  }, [() => db.drop(), () => rack.stop(), () => host.close()]);
}, 3_600_000);
