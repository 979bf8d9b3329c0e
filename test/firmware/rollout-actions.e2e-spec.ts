// The rollout actions and policies an operator relies on, end to end (real PostgreSQL, Redis, a `board-agent rack`
// with short reboots, a local http firmware source): the soak (an unreachable board and a firing thermal alert count
// as failures and pause the rollout), maintenance windows (stage any time, reboot only inside the window), approval
// between waves, retry of failed boards, and pause/resume. Each is judged by what the boards saw (the rack's call
// counters, each board's own /firmware/slots) and by the rollout's state.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { FakeFirmwareHost } from '../../apps/agent/test/support/firmware-server.js';
import { AlertsService } from '../../src/alerts/alerts.service.js';
import { apiClient, waitFor, type ApiResponse } from '../boards/api.js';
import { startRack, type RackProcess } from '../boards/rack.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { requireRedis } from '../support/redis.js';
import {
  boardSlots,
  FROM,
  installCalls,
  pushSources,
  registerBoards,
  startFirmwareHost,
  TARGET,
  waitOnline,
  type Api,
} from './helpers.js';

const redis = requireRedis();
// Rack boards per test (1-based, inclusive).
const GROUPS = {
  soak: [1, 4],
  window: [5, 6],
  approve: [7, 9],
  retry: [10, 11],
  pause: [12, 14],
} as const;
type Group = keyof typeof GROUPS;
const BOARDS = 14;
const groupOf = (i: number) => (Object.keys(GROUPS) as Group[]).find((g) => i >= GROUPS[g][0] && i <= GROUPS[g][1])!;
const indexes = (g: Group) => Array.from({ length: GROUPS[g][1] - GROUPS[g][0] + 1 }, (_, k) => GROUPS[g][0] + k);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface BoardRow {
  name: string;
  board_id: string;
  wave: number;
  status: string;
  reason: string | null;
  soak_failed: boolean;
  finished_at: string | null;
}

redis.describe('rollout actions against a rack of simulated boards', () => {
  let rack: RackProcess;
  let app: TestApp;
  let api: Api;
  let host: FakeFirmwareHost;

  const rackIndex = (b: BoardRow) => Number(b.name.slice(2));
  const calls = async (i: number, op: string): Promise<number> =>
    ((await rack.control('GET', `/rack/boards/${i}/calls`)).body.calls?.[op] as number | undefined) ?? 0;
  const rollout = (id: string) => api('GET', `/api/v1/firmware/rollouts/${id}`);
  const boardsOf = (r: ApiResponse) => r.body.boards as BoardRow[];
  const create = async (group: Group, policy: Record<string, unknown>) => {
    const res = await api('POST', '/api/v1/firmware/rollouts', {
      name: group,
      version: TARGET,
      source: 'test-http',
      selector: { labels: `group=${group}` },
      policy: { reboot_timeout_seconds: 30, ...policy },
    });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const until = async (what: string, id: string, done: (r: ApiResponse) => boolean, timeoutMs = 60_000) =>
    (await waitFor(what, () => rollout(id), done, timeoutMs, 200)).value;
  const act = (id: string, action: string) => api('POST', `/api/v1/firmware/rollouts/${id}/${action}`);

  beforeAll(async () => {
    host = await startFirmwareHost();
    rack = await startRack(BOARDS, ['--boot-delay-ms', '300', '--trust-loopback']);
    app = await startTestApp({
      redisUrl: redis.url,
      env: {
        POLL_INTERVAL_SECONDS: '1',
        POLL_SLOW_INTERVAL_SECONDS: '5',
        POLL_TIMEOUT_MS: '1000',
        // An unplugged board is called unreachable after two missed polls: well inside the soak below.
        POLL_UNREACHABLE_AFTER: '2',
      },
    });
    api = apiClient(app.baseUrl) as Api;
    await registerBoards(
      api,
      rack,
      1,
      BOARDS,
      (i) => ({ group: groupOf(i) }),
      (i) => `r${(i % 2) + 1}`,
    );
    await waitOnline(api, '', BOARDS, 60_000);
    await pushSources(api, host, '', 60_000);
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await rack?.stop();
    await host?.close();
  });

  it('soak: an unreachable board and a firing thermal alert in the soaked wave count as failures and pause it', async () => {
    const id = await create('soak', {
      canary: 2,
      concurrency: 4,
      soak_seconds: 15,
      error_threshold: { count: 2, min_finished: 1 },
    });
    const soaking = await until('canary soaking', id, (r) => r.body.wave_phase === 'soaking');
    expect(soaking.body).toMatchObject({ status: 'running', current_wave: 1 });
    expect(soaking.body.soak_until).not.toBeNull();
    const [a, b] = boardsOf(soaking).filter((x) => x.wave === 1);
    const rest = boardsOf(soaking).filter((x) => x.wave === 2);
    expect([a!.status, b!.status]).toEqual(['succeeded', 'succeeded']);
    // Board a drops off the network; board b runs hot (the alerts domain's hook, a critical thermal alert).
    await rack.control('POST', `/rack/boards/${rackIndex(a!)}/faults`, { unreachable: true });
    const alerts = app.app.get(AlertsService);
    await alerts.raiseExternal({
      key: 'thermal_runaway',
      boardId: b!.board_id,
      severity: 'critical',
      summary: 'temperature climbing whatever the fan does',
    });
    const paused = await until('paused by soak failures', id, (r) => r.body.status !== 'running', 30_000);
    expect(paused.body.status).toBe('paused');
    expect(paused.body.status_reason).toMatch(/error threshold crossed in wave 1: 2 of 2/);
    const byId = new Map(boardsOf(paused).map((x) => [x.board_id, x]));
    expect(byId.get(a!.board_id)).toMatchObject({ status: 'succeeded', soak_failed: true });
    expect(byId.get(a!.board_id)!.reason).toMatch(/during the soak: the board became unreachable/);
    expect(byId.get(b!.board_id)).toMatchObject({ status: 'succeeded', soak_failed: true });
    expect(byId.get(b!.board_id)!.reason).toMatch(/during the soak: thermal alert firing \(thermal_runaway\)/);
    expect(paused.body.waves[0]).toMatchObject({ failed: 2, succeeded: 0 });
    // The next wave was never started.
    for (const x of rest) {
      expect(byId.get(x.board_id)!.status).toBe('pending');
      expect(await installCalls(rack, rackIndex(x))).toBe(0);
    }

    // The operator fixes both boards and resumes (overriding the threshold for this wave). The wave's success is
    // still 0 %, below the 100 % needed to go on by itself: it waits for approval, then the last wave runs.
    await rack.control('DELETE', `/rack/boards/${rackIndex(a!)}/faults`);
    await alerts.resolveExternal({ key: 'thermal_runaway', boardId: b!.board_id });
    expect((await act(id, 'resume')).status).toBe(200);
    const waiting = await until('awaiting approval', id, (r) => r.body.wave_phase === 'awaiting_approval', 30_000);
    expect(waiting.body.status).toBe('paused');
    expect(waiting.body.status_reason).toMatch(/wave 1 reached 0\.0% success/);
    for (const x of rest) {
      expect(await installCalls(rack, rackIndex(x))).toBe(0);
    }
    expect((await act(id, 'approve')).status).toBe(200);
    const done = await until('completed', id, (r) => r.body.status !== 'running');
    expect(done.body.status).toBe('completed');
    expect(done.body.status_reason).toMatch(/2 board\(s\) failed/);
    for (const i of indexes('soak')) {
      expect(await installCalls(rack, i)).toBe(1);
      expect((await boardSlots(rack, i)).running.version).toBe(TARGET);
    }
  }, 120_000);

  it('maintenance window: boards stage at once but reboot only once the window opens', async () => {
    // A daily window opening at the next whole minute (UTC) that is at least 15 s away: closed now.
    const opens = new Date(Math.ceil((Date.now() + 15_000) / 60_000) * 60_000);
    const cron = `${opens.getUTCMinutes()} ${opens.getUTCHours()} * * *`;
    const id = await create('window', {
      canary: 0,
      concurrency: 4,
      window: { cron, duration_minutes: 5, timezone: 'UTC' },
    });
    const staged = await until('staged, waiting for the window', id, (r) =>
      boardsOf(r).every((b) => b.status === 'awaiting_window'),
    );
    expect(Date.now()).toBeLessThan(opens.getTime());
    expect(staged.body.status).toBe('running');
    expect(staged.body.waves[0].by_status).toEqual({ awaiting_window: 2 });
    for (const i of indexes('window')) {
      const slots = await boardSlots(rack, i);
      expect(slots.update_staged).toBe(true);
      expect(slots.running.version).toBe(FROM);
      expect(await installCalls(rack, i)).toBe(1);
      expect(await calls(i, 'postReboot')).toBe(0);
    }
    // Still nothing rebooted a few clock ticks later.
    await sleep(2500);
    if (Date.now() < opens.getTime() - 500) {
      for (const i of indexes('window')) {
        expect(await calls(i, 'postReboot')).toBe(0);
      }
    }
    const done = await until('completed inside the window', id, (r) => r.body.status !== 'running', 100_000);
    expect(done.body.status).toBe('completed');
    for (const b of boardsOf(done)) {
      expect(b.status).toBe('succeeded');
      expect(Date.parse(b.finished_at!)).toBeGreaterThanOrEqual(opens.getTime());
    }
    for (const i of indexes('window')) {
      expect((await boardSlots(rack, i)).running.version).toBe(TARGET);
      expect(await installCalls(rack, i)).toBe(1); // the staged image was used, not downloaded again
      expect(await calls(i, 'postReboot')).toBe(1);
    }
  }, 150_000);

  it('approval: after a successful wave the rollout waits; approve starts the next one', async () => {
    const id = await create('approve', { canary: 1, concurrency: 4, after_wave: 'wait_for_approval' });
    const waiting = await until('awaiting approval', id, (r) => r.body.status !== 'running');
    expect(waiting.body).toMatchObject({ status: 'paused', wave_phase: 'awaiting_approval', current_wave: 1 });
    expect(waiting.body.status_reason).toMatch(/wave 1 done \(100\.0% succeeded\); waiting for approval of wave 2/);
    const rest = boardsOf(waiting).filter((b) => b.wave === 2);
    expect(rest.map((b) => b.status)).toEqual(['pending', 'pending']);
    await sleep(1500);
    for (const b of rest) {
      expect(await installCalls(rack, rackIndex(b))).toBe(0);
    }
    // Resume is not the way past an approval gate; approve is.
    const resumed = await act(id, 'resume');
    expect(resumed.status).toBe(409);
    expect(resumed.body.detail).toMatch(/approve/);
    const approved = await act(id, 'approve');
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'running', current_wave: 2 });
    const done = await until('completed', id, (r) => r.body.status !== 'running');
    expect(done.body).toMatchObject({ status: 'completed', summary: { succeeded: 3 } });
    for (const i of indexes('approve')) {
      expect(await installCalls(rack, i)).toBe(1);
      expect((await boardSlots(rack, i)).running.version).toBe(TARGET);
    }
    expect((await act(id, 'approve')).status).toBe(409);
  }, 90_000);

  it('retry: a rolled-back board goes back in line and installs again; the others are not touched', async () => {
    const [bad, good] = indexes('retry');
    await rack.control('POST', `/rack/boards/${bad}/faults`, { gateFail: true });
    const id = await create('retry', {
      canary: 0,
      concurrency: 2,
      error_threshold: { count: 5, min_finished: 1 },
      success_threshold_percent: 0,
    });
    const first = await until('finished', id, (r) => r.body.status !== 'running');
    expect(first.body).toMatchObject({ status: 'completed', summary: { succeeded: 1, rolled_back: 1 } });
    expect(first.body.status_reason).toMatch(/1 board\(s\) failed/);
    expect((await boardSlots(rack, bad!)).running.version).toBe(FROM);

    await rack.control('DELETE', `/rack/boards/${bad}/faults`);
    const retried = await act(id, 'retry');
    expect(retried.status).toBe(200);
    expect(retried.body.status).toBe('running');
    const done = await until('completed again', id, (r) => r.body.status !== 'running');
    expect(done.body).toMatchObject({ status: 'completed', status_reason: null, summary: { succeeded: 2 } });
    expect((await boardSlots(rack, bad!)).running.version).toBe(TARGET);
    expect(await installCalls(rack, bad!)).toBe(2);
    expect(await installCalls(rack, good!)).toBe(1);
    expect(await calls(good!, 'postReboot')).toBe(1);
    // Nothing left to retry.
    expect((await act(id, 'retry')).status).toBe(409);
  }, 90_000);

  it('pause lets the running board finish and starts no other; resume carries on', async () => {
    // Slow boards (every answer 400 ms late) so a board is visibly in progress when the pause lands.
    for (const i of indexes('pause')) {
      await rack.control('POST', `/rack/boards/${i}/faults`, { latencyMs: 400 });
    }
    const id = await create('pause', { canary: 0, concurrency: 1 });
    const busy = await until('one board in progress', id, (r) =>
      boardsOf(r).some((b) => ['staging', 'staged', 'rebooting', 'verifying'].includes(b.status)),
    );
    const running = boardsOf(busy).find((b) => b.status !== 'pending')!;
    const paused = await act(id, 'pause');
    expect(paused.status).toBe(200);
    expect(paused.body.status).toBe('paused');
    expect((await act(id, 'pause')).status).toBe(409);
    // The board already installing finishes and is reported.
    const settled = await until('running board finished', id, (r) =>
      boardsOf(r).some((b) => b.board_id === running.board_id && b.status === 'succeeded'),
    );
    expect(settled.body.status).toBe('paused');
    await sleep(2000);
    const still = await rollout(id);
    expect(still.body.status).toBe('paused');
    const others = boardsOf(still).filter((b) => b.board_id !== running.board_id);
    expect(others.map((b) => b.status)).toEqual(['pending', 'pending']);
    for (const b of others) {
      expect(await installCalls(rack, rackIndex(b))).toBe(0);
    }
    const resumed = await act(id, 'resume');
    expect(resumed.status).toBe(200);
    expect(resumed.body.status).toBe('running');
    const done = await until('completed', id, (r) => r.body.status !== 'running');
    expect(done.body).toMatchObject({ status: 'completed', summary: { succeeded: 3 } });
    for (const i of indexes('pause')) {
      expect(await installCalls(rack, i)).toBe(1);
      expect((await boardSlots(rack, i)).running.version).toBe(TARGET);
      await rack.control('DELETE', `/rack/boards/${i}/faults`);
    }
  }, 90_000);
});
