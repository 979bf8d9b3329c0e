// Firmware rollouts against real PostgreSQL, Redis, a `board-agent rack` (short reboots) and a local http firmware
// source: a 100-board rollout in waves verified through every board's /firmware/slots, a gate failing on 3 of 10
// canary boards pausing the rollout with the rest untouched, a single-board install that is idempotent, the fleet
// catalogue, the sources push, and a bad-input table.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { BoardClient } from '@tpfleet/board-api/client';
import type { FakeFirmwareHost } from '../../apps/agent/test/support/firmware-server.js';
import { apiClient, waitFor } from '../boards/api.js';
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
import { mapLimit } from '../../src/common/concurrency.js';

const redis = requireRedis();
const MAIN = 100; // boards 1..100: the wave rollout
const GATE = 30; // boards 101..130: the failing canary
const SINGLE = 131; // board 131: single-board installs

redis.describe('firmware rollouts against a rack of simulated boards', () => {
  let rack: RackProcess;
  let app: TestApp;
  let api: Api;
  let host: FakeFirmwareHost;
  let ids: Map<number, string>;

  beforeAll(async () => {
    host = await startFirmwareHost();
    rack = await startRack(SINGLE + 1, ['--boot-delay-ms', '300', '--trust-loopback']);
    app = await startTestApp({
      redisUrl: redis.url,
      env: {
        POLL_INTERVAL_SECONDS: '2',
        POLL_SLOW_INTERVAL_SECONDS: '5',
        POLL_CONCURRENCY: '64',
        POLL_TIMEOUT_MS: '5000',
      },
    });
    api = apiClient(app.baseUrl) as Api;
    ids = await registerBoards(
      api,
      rack,
      1,
      SINGLE + 1,
      (i) => ({ group: i <= MAIN ? 'main' : i <= MAIN + GATE ? 'gate' : 'single' }),
      (i) => `r${(i % 4) + 1}`,
    );
    await waitOnline(api, '', SINGLE + 1, 60_000);
    await pushSources(api, host, '', 60_000);
  }, 180_000);

  afterAll(async () => {
    await app?.close();
    await rack?.stop();
    await host?.close();
  });

  it('lists the fleet catalogue by version with the boards that can take it', async () => {
    const res = await api('GET', '/api/v1/firmware/catalogue?selector=group%3Dsingle');
    expect(res.status).toBe(200);
    expect(res.body.asked).toBe(2);
    const target = res.body.versions.find((v: { version: string }) => v.version === TARGET);
    expect(target).toMatchObject({ board_count: 2, sources: [{ id: 'test-http', kind: 'http' }] });
    expect(target.boards[0]).toMatchObject({ current_version: FROM, relation: 'newer' });
  }, 60_000);

  it('rolls out to 100 boards: canary 2, then 20%, then the rest; every board verified through /firmware/slots', async () => {
    const body = {
      name: 'main',
      version: TARGET,
      source: 'test-http',
      selector: { labels: 'group=main' },
      policy: {
        canary: 2,
        waves: [{ percent: 20 }],
        concurrency: 20,
        max_per_rack: 6,
        reboot_timeout_seconds: 60,
        error_threshold: { percent: 20, min_finished: 2 },
      },
    };
    const dry = await api('POST', '/api/v1/firmware/rollouts', { ...body, dry_run: true });
    expect(dry.status).toBe(200);
    expect(dry.body.waves).toEqual([
      { wave: 1, size: 2 },
      { wave: 2, size: 20 },
      { wave: 3, size: 78 },
    ]);
    expect(dry.body.summary).toMatchObject({ will_install: 100, skipped: 0 });
    // A dry run touches nothing.
    expect((await api('GET', '/api/v1/firmware/rollouts?limit=10')).body.items).toHaveLength(0);

    const created = await api('POST', '/api/v1/firmware/rollouts', body);
    expect(created.status).toBe(201);
    expect(created.body.status).toBe('running');
    const { value: done } = await waitFor(
      'rollout completed',
      () => api('GET', `/api/v1/firmware/rollouts/${created.body.id}`),
      (r) => ['completed', 'failed', 'paused'].includes(r.body.status),
      150_000,
      500,
    );
    expect(done.body.status_reason).toBeNull();
    expect(done.body.status).toBe('completed');
    expect(done.body.summary).toEqual({ succeeded: 100 });
    expect(done.body.waves.map((w: { size: number; succeeded: number }) => [w.size, w.succeeded])).toEqual([
      [2, 2],
      [20, 20],
      [78, 78],
    ]);
    const indexes = Array.from({ length: MAIN }, (_, k) => k + 1);
    const slots = await mapLimit(indexes, 16, (i) => boardSlots(rack, i));
    for (const s of slots) {
      expect(s.running.version).toBe(TARGET);
      expect(s.update_staged).toBe(false);
      expect(s.last_promotion.message).toMatch(/^promoted/);
    }
    const calls = await mapLimit(indexes, 16, (i) => installCalls(rack, i));
    expect(calls).toEqual(indexes.map(() => 1));
    // The board timelines tell the story.
    const timeline = await api('GET', `/api/v1/boards/${ids.get(1)}/timeline?kind=job`);
    expect(timeline.body.items.map((e: { summary: string }) => e.summary).join('\n')).toMatch(
      /firmware 2\.31\.0: succeeded/,
    );
    // A second rollout to the same boards skips every one of them (already on the target), installing nothing.
    const again = await api('POST', '/api/v1/firmware/rollouts', { ...body, name: 'again', dry_run: true });
    expect(again.body.summary).toMatchObject({ will_install: 0, skipped: 100 });
  }, 200_000);

  it('pauses after the canary wave when the gate rolls back 3 of 10 canary boards (threshold 20%)', async () => {
    const body = {
      name: 'gate',
      version: TARGET,
      source: 'test-http',
      selector: { labels: 'group=gate' },
      policy: {
        canary: 10,
        waves: [{ percent: 50 }],
        concurrency: 10,
        reboot_timeout_seconds: 60,
        error_threshold: { percent: 20, min_finished: 10 },
      },
    };
    const dry = await api('POST', '/api/v1/firmware/rollouts', { ...body, dry_run: true });
    const canary = (dry.body.boards as Array<{ name: string; wave: number }>)
      .filter((b) => b.wave === 1)
      .map((b) => Number(b.name.slice(2)));
    expect(canary).toHaveLength(10);
    const failing = canary.slice(0, 3);
    for (const i of failing) {
      expect((await rack.control('POST', `/rack/boards/${i}/faults`, { gateFail: true })).status).toBe(200);
    }
    const created = await api('POST', '/api/v1/firmware/rollouts', body);
    expect(created.status).toBe(201);
    const { value } = await waitFor(
      'rollout paused',
      () => api('GET', `/api/v1/firmware/rollouts/${created.body.id}`),
      (r) => r.body.status !== 'running',
      90_000,
      300,
    );
    expect(value.body.status).toBe('paused');
    expect(value.body.status_reason).toMatch(/error threshold crossed in wave 1: 3 of 10/);
    const boards = value.body.boards as Array<{ name: string; wave: number; status: string; reason: string }>;
    const byName = new Map(boards.map((b) => [Number(b.name.slice(2)), b]));
    for (const i of failing) {
      expect(byName.get(i)).toMatchObject({ status: 'rolled_back' });
      expect(byName.get(i)!.reason).toMatch(/promotion gate rolled back/);
      expect((await boardSlots(rack, i)).running.version).toBe(FROM);
    }
    expect(boards.filter((b) => b.wave === 1 && b.status === 'succeeded')).toHaveLength(7);
    const rest = Array.from({ length: GATE }, (_, k) => MAIN + 1 + k).filter((i) => !canary.includes(i));
    expect(rest.map((i) => byName.get(i)!.status)).toEqual(rest.map(() => 'pending'));
    // Untouched: no install reached any of the other 20 boards.
    expect(await mapLimit(rest, 8, (i) => installCalls(rack, i))).toEqual(rest.map(() => 0));
    // Still nothing moves while paused, and resume is refused in favour of... nothing: resume is allowed (override).
    await new Promise((r) => setTimeout(r, 1500));
    expect(await mapLimit(rest, 8, (i) => installCalls(rack, i))).toEqual(rest.map(() => 0));
    // Cancel stops it for good: the remaining boards are reported cancelled.
    const cancelled = await api('POST', `/api/v1/firmware/rollouts/${created.body.id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
    expect(cancelled.body.summary).toMatchObject({ cancelled: 20, rolled_back: 3, succeeded: 7 });
    expect((await api('POST', `/api/v1/firmware/rollouts/${created.body.id}/resume`)).status).toBe(409);
    for (const i of failing) {
      await rack.control('DELETE', `/rack/boards/${i}/faults`);
    }
  }, 120_000);

  it('installs one board as a job with progress, and a repeat finds it running and installs nothing', async () => {
    const id = ids.get(SINGLE)!;
    // A setting changed on the board just before: the configuration backed up before the install must hold it.
    await new BoardClient({ baseUrl: rack.boardUrl(SINGLE) }).setHostname('before-upgrade');
    const res = await api('POST', `/api/v1/boards/${id}/firmware/install`, { source: 'test-http', version: TARGET });
    expect(res.status).toBe(202);
    expect(
      (await api('POST', `/api/v1/boards/${id}/firmware/install`, { source: 'test-http', version: TARGET })).status,
    ).toBe(409);
    const seen = new Set<string>();
    const { value } = await waitFor(
      'install finished',
      () => api('GET', `/api/v1/firmware/installs/${res.body.install_id}`),
      (r) => {
        seen.add(r.body.status);
        return ['succeeded', 'failed', 'rolled_back', 'stuck'].includes(r.body.status);
      },
      60_000,
      20,
    );
    expect(value.body).toMatchObject({ status: 'succeeded', from_version: FROM, version: TARGET });
    const versions = (await api('GET', `/api/v1/boards/${id}/config/versions?limit=10`)).body.items as Array<{
      id: string;
      source: string;
      captured_at: string;
    }>;
    const before = versions.find((v) => v.source === 'pre_upgrade');
    expect(before).toBeDefined();
    expect(Date.parse(before!.captured_at)).toBeLessThanOrEqual(Date.parse(value.body.finished_at));
    const document = (await api('GET', `/api/v1/config-versions/${before!.id}`)).body;
    expect(JSON.stringify(document)).toContain('before-upgrade');
    expect([...seen].some((s) => ['staging', 'staged', 'rebooting', 'verifying'].includes(s))).toBe(true);
    const repeat = await api('POST', `/api/v1/boards/${id}/firmware/install`, { source: 'test-http', version: TARGET });
    const { value: second } = await waitFor(
      'repeat finished',
      () => api('GET', `/api/v1/firmware/installs/${repeat.body.install_id}`),
      (r) => !['queued', 'staging', 'staged', 'rebooting', 'verifying'].includes(r.body.status),
      30_000,
    );
    expect(second.body).toMatchObject({ status: 'skipped' });
    expect(await installCalls(rack, SINGLE)).toBe(1);
  }, 90_000);

  it('refuses bad input with problem+json 4xx, never 500', async () => {
    const board = ids.get(SINGLE + 1)!;
    const nope = '00000000-0000-4000-8000-000000000000';
    const rollout = (over: Record<string, unknown>) => ({
      name: 'x',
      version: TARGET,
      source: 'test-http',
      ...over,
      dry_run: true,
    });
    const cases: Array<[number, 'GET' | 'POST' | 'PUT', string, unknown]> = [
      [400, 'POST', '/api/v1/firmware/rollouts', {}],
      [400, 'POST', '/api/v1/firmware/rollouts', rollout({ version: '' })],
      [400, 'POST', '/api/v1/firmware/rollouts', rollout({ version: '../etc' })],
      [400, 'POST', '/api/v1/firmware/rollouts', rollout({ policy: { canary: -1 } })],
      [400, 'POST', '/api/v1/firmware/rollouts', rollout({ policy: { waves: [{ percent: 0 }] } })],
      [400, 'POST', '/api/v1/firmware/rollouts', rollout({ policy: { waves: [{ percent: 10, count: 3 }] } })],
      [400, 'POST', '/api/v1/firmware/rollouts', rollout({ policy: { concurrency: 0 } })],
      [400, 'POST', '/api/v1/firmware/rollouts', rollout({ policy: { error_threshold: { min_finished: 2 } } })],
      [
        400,
        'POST',
        '/api/v1/firmware/rollouts',
        rollout({ policy: { window: { cron: '0 25 * * *', duration_minutes: 60 } } }),
      ],
      [
        400,
        'POST',
        '/api/v1/firmware/rollouts',
        rollout({ policy: { window: { cron: '0 2 * * *', duration_minutes: 60, timezone: 'Mars/Base' } } }),
      ],
      [
        400,
        'POST',
        '/api/v1/firmware/rollouts',
        rollout({ policy: { activation: 'stage_only', window: { cron: '0 2 * * *', duration_minutes: 60 } } }),
      ],
      [400, 'POST', '/api/v1/firmware/rollouts', rollout({ selector: { labels: 'bad key!=x' } })],
      [400, 'POST', '/api/v1/firmware/rollouts', rollout({ selector: { labels: 'group=nothing-here' } })],
      [400, 'POST', '/api/v1/firmware/rollouts', rollout({ selector: { board_ids: ['not-a-uuid'] } })],
      [400, 'POST', '/api/v1/firmware/rollouts', rollout({ start: 'tomorrow' })],
      [400, 'POST', '/api/v1/firmware/rollouts', rollout({ surprise: 1 })],
      [400, 'GET', '/api/v1/firmware/rollouts?status=dancing', undefined],
      [400, 'GET', '/api/v1/firmware/rollouts?cursor=garbage', undefined],
      [400, 'GET', '/api/v1/firmware/rollouts/not-a-uuid', undefined],
      [404, 'GET', `/api/v1/firmware/rollouts/${nope}`, undefined],
      [400, 'POST', `/api/v1/firmware/rollouts/${nope}/explode`, undefined],
      [404, 'POST', `/api/v1/firmware/rollouts/${nope}/pause`, undefined],
      [404, 'POST', `/api/v1/firmware/rollouts/${nope}/start`, undefined],
      [400, 'POST', `/api/v1/boards/${board}/firmware/install`, {}],
      [400, 'POST', `/api/v1/boards/${board}/firmware/install`, { source: 'test-http', version: TARGET, force: 'yes' }],
      [404, 'POST', `/api/v1/boards/${nope}/firmware/install`, { source: 'test-http', version: TARGET }],
      [400, 'POST', '/api/v1/boards/nope/firmware/install', { source: 'test-http', version: TARGET }],
      [404, 'GET', `/api/v1/firmware/installs/${nope}`, undefined],
      [400, 'PUT', '/api/v1/firmware/sources', { sources: [] }],
      [
        400,
        'PUT',
        '/api/v1/firmware/sources',
        { sources: [{ id: 'a', kind: 'http', label: 'a', location: 'ftp://x' }] },
      ],
      [
        400,
        'PUT',
        '/api/v1/firmware/sources',
        { sources: [{ id: 'a', kind: 'http', label: 'a', location: 'http://x/image.tpu' }] },
      ],
      [
        400,
        'PUT',
        '/api/v1/firmware/sources',
        { sources: [{ id: 'a', kind: 'github', label: 'a', location: 'just-a-name' }] },
      ],
      [
        400,
        'PUT',
        '/api/v1/firmware/sources',
        { sources: [{ id: 'a', kind: 'local', label: 'a', location: 'relative/dir' }] },
      ],
      [
        400,
        'PUT',
        '/api/v1/firmware/sources',
        {
          sources: [
            { id: 'a', kind: 'local', label: 'a', location: '/x' },
            { id: 'a', kind: 'local', label: 'b', location: '/y' },
          ],
        },
      ],
      [400, 'POST', '/api/v1/firmware/sources/push', { selector: '!!!' }],
      [404, 'GET', `/api/v1/firmware/sources/pushes/${nope}`, undefined],
      [400, 'GET', '/api/v1/firmware/catalogue?refresh=maybe', undefined],
    ];
    const failures: string[] = [];
    for (const [status, method, path, body] of cases) {
      const res = await api(method, path, body);
      if (res.status !== status || !res.type.includes('application/problem+json')) {
        failures.push(
          `${method} ${path} ${JSON.stringify(body)} → ${res.status} ${res.type} ${JSON.stringify(res.body).slice(0, 300)}`,
        );
      }
    }
    expect(failures).toEqual([]);
    // Roles: a viewer cannot start a rollout.
    const token = await api('POST', '/api/v1/tokens', { name: 'viewer-fw', role: 'viewer' });
    const viewer = apiClient(app.baseUrl);
    const refused = await viewer('POST', '/api/v1/firmware/rollouts', rollout({}), { token: token.body.token });
    expect(refused.status).toBe(403);
  }, 60_000);
});
