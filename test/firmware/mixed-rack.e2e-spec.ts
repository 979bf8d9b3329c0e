// A rack of mixed daemons (this agent, an old fork without the path form, upstream bmcd) under bulk firmware jobs,
// against real PostgreSQL, Redis and a `board-agent rack`: every board is judged against the capability matrix
// (dialect and daemon version) when the job is planned. Boards that can never do the work are listed as skipped
// with the reason, never dispatched, and the job still reaches a final state without anyone acting on it.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { FakeFirmwareHost } from '../../apps/agent/test/support/firmware-server.js';
import { PollingScheduler } from '../../src/polling/polling.scheduler.js';
import { apiClient, waitFor } from '../boards/api.js';
import { startRack, type RackProcess } from '../boards/rack.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { fleetEnv, FleetProcesses, type FleetProcess } from '../support/fleet-process.js';
import { requireRedis } from '../support/redis.js';
import { boardSlots, installCalls, registerBoards, startFirmwareHost, TARGET, type Api } from './helpers.js';

const redis = requireRedis();
// Boards 1-2: this agent. Board 3: upstream bmcd 2.3.4. Board 4: a fork older than its path form (2.16.0).
const UPSTREAM = 3;
const OLD_FORK = 4;

redis.describe('bulk firmware jobs over a rack of mixed daemons', () => {
  let rack: RackProcess;
  let app: TestApp;
  let api: Api;
  let host: FakeFirmwareHost;
  let ids: Map<number, string>;

  beforeAll(async () => {
    host = await startFirmwareHost();
    rack = await startRack(4, ['--boot-delay-ms', '300', '--trust-loopback']);
    await rack.control('POST', `/rack/boards/${UPSTREAM}/dialect`, { dialect: 'upstream', version: '2.3.4' });
    await rack.control('POST', `/rack/boards/${OLD_FORK}/dialect`, { dialect: 'fork', version: '2.10.0' });
    app = await startTestApp({
      redisUrl: redis.url,
      env: { POLL_INTERVAL_SECONDS: '2', POLL_SLOW_INTERVAL_SECONDS: '5', POLL_TIMEOUT_MS: '5000' },
    });
    api = apiClient(app.baseUrl) as Api;
    ids = await registerBoards(
      api,
      rack,
      1,
      4,
      () => ({ group: 'mixed' }),
      () => 'r1',
    );
    await waitFor(
      'every board reached and its daemon known',
      async () => (await api('GET', '/api/v1/boards?limit=10')).body.items as Array<{ dialect: string | null }>,
      (items) => items.length === 4 && items.every((b) => b.dialect !== null),
      60_000,
      250,
    );
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await rack?.stop();
    await host?.close();
  });

  it('pushes firmware sources to the boards that take them and lists the others as skipped with the reason', async () => {
    const put = await api('PUT', '/api/v1/firmware/sources', {
      sources: [{ id: 'test-http', kind: 'http', label: 'test firmware host', location: host.httpSource }],
    });
    expect(put.status).toBe(200);
    const dry = await api('POST', '/api/v1/firmware/sources/push', { selector: 'group=mixed', dry_run: true });
    const byId = (body: { boards: Array<{ board_id: string }> }, i: number) =>
      body.boards.find((b) => b.board_id === ids.get(i));
    expect(byId(dry.body, 1)).toMatchObject({ status: 'will_push' });
    expect(byId(dry.body, UPSTREAM)).toMatchObject({
      status: 'skipped',
      error: expect.stringMatching(/upstream daemon 2\.3\.4.*POST \/firmware\/sources/),
    });
    expect(byId(dry.body, OLD_FORK)).toMatchObject({
      status: 'skipped',
      error: expect.stringMatching(/fork daemon 2\.10\.0/),
    });

    const push = await api('POST', '/api/v1/firmware/sources/push', { selector: 'group=mixed' });
    expect(push.status).toBe(202);
    const { value: done } = await waitFor(
      'the push to finish on every board',
      () => api('GET', `/api/v1/firmware/sources/pushes/${push.body.id}`),
      (r) => (r.body.summary?.pending ?? 0) === 0,
      30_000,
      250,
    );
    expect(done.body.summary).toEqual({ succeeded: 2, skipped: 2 });
  }, 60_000);

  it('plans a rollout with the boards that cannot install skipped, and finishes it without operator action', async () => {
    const body = {
      name: 'mixed',
      version: TARGET,
      source: 'test-http',
      selector: { labels: 'group=mixed' },
      policy: { canary: 1, concurrency: 4, reboot_timeout_seconds: 60 },
    };
    const dry = await api('POST', '/api/v1/firmware/rollouts', { ...body, dry_run: true });
    expect(dry.status).toBe(200);
    expect(dry.body.summary).toMatchObject({ will_install: 2, skipped: 2 });
    const planned = (i: number) => dry.body.boards.find((b: { board_id: string }) => b.board_id === ids.get(i));
    expect(planned(UPSTREAM)).toMatchObject({
      status: 'skipped',
      wave: null,
      reason: expect.stringMatching(
        /upstream daemon 2\.3\.4, which cannot install firmware \(no POST \/firmware\/install/,
      ),
    });
    expect(planned(OLD_FORK)).toMatchObject({
      status: 'skipped',
      reason: expect.stringMatching(/fork daemon 2\.10\.0/),
    });

    // No polls meanwhile: what the registry says at the end is what the install itself recorded.
    app.app.get(PollingScheduler).enabled = false;
    const created = await api('POST', '/api/v1/firmware/rollouts', body);
    expect(created.status).toBe(201);
    const { value: done } = await waitFor(
      'the rollout to reach a final state',
      () => api('GET', `/api/v1/firmware/rollouts/${created.body.id}`),
      (r) => ['completed', 'failed', 'paused'].includes(r.body.status),
      90_000,
      500,
    );
    expect(done.body.status).toBe('completed');
    expect(done.body.summary).toEqual({ succeeded: 2, skipped: 2 });
    // The verified installs updated the registry in the same step: version, slots and capabilities, no poll needed.
    for (const i of [1, 2]) {
      const board = await api('GET', `/api/v1/boards/${ids.get(i)}`);
      expect(board.body).toMatchObject({
        firmware_version: TARGET,
        capabilities: expect.arrayContaining(['postFirmwareInstall']),
      });
      expect(board.body.latest.slots.running.version).toBe(TARGET);
    }
    app.app.get(PollingScheduler).enabled = true;
    // Never dispatched: nothing was asked of the boards that cannot install.
    expect(await installCalls(rack, UPSTREAM)).toBe(0);
    expect(await installCalls(rack, OLD_FORK)).toBe(0);
  }, 120_000);

  it('refuses a single install on a board whose daemon cannot install, naming the daemon', async () => {
    const res = await api('POST', `/api/v1/boards/${ids.get(OLD_FORK)}/firmware/install`, {
      version: TARGET,
      source: 'test-http',
    });
    expect(res.status).toBe(409);
    expect(res.type).toContain('application/problem+json');
    expect(res.body.detail).toMatch(/fork daemon 2\.10\.0, which cannot install firmware/);
  });

  it('logged no ERROR line', () => {
    expect(app.errorLines()).toEqual([]);
  });
});

// The same rack as production runs the fleet manager (issue #15's done-when): the built `dist/` as an `api` and a
// `worker` process on Redis queues, JSON logs, boards polled every second, a rollout over the mixed rack with both
// processes restarted (SIGTERM) while it runs. It ends without operator action, and no process logged at ERROR level.
redis.describe('the mixed-rack scenario in the fleet manager processes', () => {
  const AGENTS = 6;
  const upstream = AGENTS + 1;
  const oldFork = AGENTS + 2;
  let rack: RackProcess;
  let host: FakeFirmwareHost;
  let db: TestDatabase;
  let env: Record<string, string>;
  let apiProcess: FleetProcess;
  let worker: FleetProcess;
  let api: Api;
  const fleet = new FleetProcesses(() => env);

  beforeAll(async () => {
    host = await startFirmwareHost();
    rack = await startRack(oldFork, ['--boot-delay-ms', '300', '--trust-loopback']);
    await rack.control('POST', `/rack/boards/${upstream}/dialect`, { dialect: 'upstream', version: '2.3.4' });
    await rack.control('POST', `/rack/boards/${oldFork}/dialect`, { dialect: 'fork', version: '2.10.0' });
    db = await createTestDatabase();
    env = fleetEnv(db, redis.url, {
      LOG_LEVEL: 'log',
      POLL_INTERVAL_SECONDS: '1',
      POLL_SLOW_INTERVAL_SECONDS: '5',
      POLL_TIMEOUT_MS: '5000',
    });
    worker = await fleet.start('worker');
    apiProcess = await fleet.start('api');
    api = apiClient(apiProcess.url) as Api;
    await registerBoards(
      api,
      rack,
      1,
      oldFork,
      () => ({ group: 'mixed' }),
      () => 'r1',
    );
    await waitFor(
      'every board reached and its daemon known',
      async () => (await api('GET', '/api/v1/boards?limit=10')).body.items as Array<{ dialect: string | null }>,
      (items) => items.length === oldFork && items.every((b) => b.dialect !== null),
      60_000,
      250,
    );
  }, 180_000);

  afterAll(async () => {
    await fleet.stopAll();
    await rack?.stop();
    await host?.close();
    await db?.drop();
  });

  /** For a failure report: each unfinished install, what its board was asked and holds, and each process's last lines. */
  const unfinishedBoards = async (rolloutId: string): Promise<string> => {
    const { body } = await api('GET', `/api/v1/firmware/rollouts/${rolloutId}`);
    const open = (body.boards as Array<{ install_id: string; name: string; finished_at: string | null }>).filter(
      (b) => b.finished_at === null,
    );
    const lines = await Promise.all(
      open.map(async (b) => {
        const index = Number(b.name.replace('fw', ''));
        const [install, calls, slots] = await Promise.all([
          api('GET', `/api/v1/firmware/installs/${b.install_id}`),
          rack.control('GET', `/rack/boards/${index}/calls`),
          boardSlots(rack, index).catch((e: unknown) => String(e)),
        ]);
        return `${b.name}: ${JSON.stringify(install.body)}\n  calls ${JSON.stringify(calls.body)}\n  slots ${JSON.stringify(slots)}`;
      }),
    );
    const outputs = fleet.started.map(
      (p, n) => `${p.role}#${n}'s last lines:\n${p.output().split('\n').slice(-40).join('\n')}`,
    );
    return [...lines, ...outputs].join('\n');
  };

  it('rolls out over the mixed rack through restarts of both processes, logging no ERROR line', async () => {
    const put = await api('PUT', '/api/v1/firmware/sources', {
      sources: [{ id: 'test-http', kind: 'http', label: 'test firmware host', location: host.httpSource }],
    });
    expect(put.status).toBe(200);
    const push = await api('POST', '/api/v1/firmware/sources/push', { selector: 'group=mixed' });
    expect(push.status).toBe(202);
    await waitFor(
      'the sources push to finish',
      () => api('GET', `/api/v1/firmware/sources/pushes/${push.body.id}`),
      (r) => (r.body.summary?.pending ?? 0) === 0,
      30_000,
      250,
    );

    const created = await api('POST', '/api/v1/firmware/rollouts', {
      name: 'mixed-restarts',
      version: TARGET,
      source: 'test-http',
      selector: { labels: 'group=mixed' },
      policy: { canary: 1, concurrency: 2, reboot_timeout_seconds: 60 },
    });
    expect(created.status).toBe(201);
    const rollout = () => api('GET', `/api/v1/firmware/rollouts/${created.body.id}`);
    // Restarted while it runs: the canary done, the next wave being installed.
    await waitFor('the canary to succeed', rollout, (r) => (r.body.summary?.succeeded ?? 0) >= 1, 90_000, 250);
    expect(await worker.stop()).toMatchObject({ code: 0 });
    worker = await fleet.start('worker');
    expect(await apiProcess.stop()).toMatchObject({ code: 0 });
    apiProcess = await fleet.start('api');
    api = apiClient(apiProcess.url) as Api;

    const { value: done } = await waitFor(
      'the rollout to reach a final state',
      rollout,
      (r) => ['completed', 'failed', 'paused'].includes(r.body.status),
      150_000,
      500,
    ).catch(async (err: unknown) => {
      throw new Error(`${(err as Error).message}\n${await unfinishedBoards(created.body.id as string)}`);
    });
    expect(done.body).toMatchObject({ status: 'completed', summary: { succeeded: AGENTS, skipped: 2 } });
    expect(await installCalls(rack, upstream)).toBe(0);
    expect(await installCalls(rack, oldFork)).toBe(0);

    expect(fleet.errorLines()).toEqual([]);
  }, 300_000);
});
