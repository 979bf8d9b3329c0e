// A worker stopped (SIGTERM) while an install job waits on a slow board, as a deploy does: the job outlives the
// shutdown grace and is handed back. The runner must not mark the install as sent once its connections are being
// closed: the next worker would otherwise wait out the install timeout (15 minutes for a single install) for an
// install the board never got. Real PostgreSQL and Redis, the built fleet manager as separate api and worker
// processes, a `board-agent rack`.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { FakeFirmwareHost } from '../../apps/agent/test/support/firmware-server.js';
import { apiClient, waitFor } from '../boards/api.js';
import { startRack, type RackProcess } from '../boards/rack.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { fleetEnv, FleetProcesses, type FleetProcess } from '../support/fleet-process.js';
import { requireRedis } from '../support/redis.js';
import {
  boardSlots,
  installCalls,
  pushSources,
  registerBoards,
  startFirmwareHost,
  TARGET,
  waitOnline,
  type Api,
} from './helpers.js';

const redis = requireRedis();
// The configuration backup a run takes before it installs reads GET /config: slowed past the worker's 4 s shutdown
// grace (src/jobs/queue-settings.ts), it holds the run just before the install is sent while the worker stops.
const CONFIG_LATENCY_MS = 7000;

redis.describe('a worker stopped while an install waits on its board', () => {
  let rack: RackProcess;
  let host: FakeFirmwareHost;
  let db: TestDatabase;
  let env: Record<string, string>;
  let worker: FleetProcess;
  let apiProcess: FleetProcess;
  let api: Api;
  const fleet = new FleetProcesses(() => env);

  beforeAll(async () => {
    host = await startFirmwareHost();
    rack = await startRack(1, ['--boot-delay-ms', '300', '--trust-loopback']);
    db = await createTestDatabase();
    env = fleetEnv(db, redis.url, {
      LOG_LEVEL: 'log',
      POLL_INTERVAL_SECONDS: '2',
      POLL_SLOW_INTERVAL_SECONDS: '5',
      // Every board call may take the slowed read's time.
      POLL_TIMEOUT_MS: '15000',
    });
    worker = await fleet.start('worker');
    apiProcess = await fleet.start('api');
    api = apiClient(apiProcess.url) as Api;
    await registerBoards(
      api,
      rack,
      1,
      1,
      () => ({ group: 'stop' }),
      () => 'r1',
    );
    await waitOnline(api, '', 1, 60_000);
    await pushSources(api, host, '', 30_000);
  }, 180_000);

  afterAll(async () => {
    await fleet.stopAll();
    await rack?.stop();
    await host?.close();
    await db?.drop();
  });

  it('hands the install back unsent, and the next worker installs it once without waiting out the install timeout', async () => {
    const [board] = (await api('GET', '/api/v1/boards?limit=1')).body.items as Array<{ id: string }>;
    const faults = await rack.control('POST', '/rack/boards/1/faults', {
      pathLatencyMs: { '/api/bmc/config': CONFIG_LATENCY_MS },
      lapseAfter: 1,
    });
    expect(faults.status).toBe(200);
    const created = await api('POST', `/api/v1/boards/${board!.id}/firmware/install`, {
      source: 'test-http',
      version: TARGET,
    });
    expect(created.status).toBe(202);
    const install = () => api('GET', `/api/v1/firmware/installs/${created.body.install_id}`);
    await waitFor('the worker to claim the install', install, (r) => r.body.started_at !== null, 30_000, 50);

    // Stopped while the run waits on the slowed backup read: the job outlives the grace and is handed back.
    expect(await worker.stop()).toMatchObject({ code: 0 });
    expect(await installCalls(rack, 1)).toBe(0);
    worker = await fleet.start('worker');

    // Well inside the 900 s install timeout of a single install; the board itself takes a few seconds.
    const { value: done } = await waitFor(
      'the install to finish on the next worker',
      install,
      (r) => r.body.finished_at !== null,
      60_000,
      250,
    );
    expect(done.body).toMatchObject({ status: 'succeeded' });
    expect((await boardSlots(rack, 1)).running.version).toBe(TARGET);
    expect(await installCalls(rack, 1)).toBe(1);
    // What the operator reads: one backup before the upgrade (the next run's), no failure blamed on the board for a
    // read the stopping worker cut off itself.
    const timeline = await api('GET', `/api/v1/boards/${board!.id}/timeline?kind=config&limit=50`);
    expect((timeline.body.items as Array<{ summary: string }>).map((e) => e.summary)).not.toContainEqual(
      expect.stringMatching(/backup before firmware .* failed/),
    );

    expect(fleet.errorLines()).toEqual([]);
  }, 180_000);
});
