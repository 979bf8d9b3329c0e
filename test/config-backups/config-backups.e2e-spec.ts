// Config backup, restore, push and drift against real PostgreSQL, Redis and a real `board-agent rack` process:
// daily backups of 20 boards (one version each, a second only for the board whose hostname changed), per-field
// diffs, restore of version 1, a template push with a board that refuses a field, drift, stop-on-failure, board
// replacement, the JSON-lines archive, idempotency under retries and a second worker, and bad input everywhere.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { BoardClient } from '@tpfleet/board-api/client';
import { ConfigBackupRunner } from '../../src/config-backups/config-backup.runner.js';
import { configBackupJob } from '../../src/config-backups/config-backups.jobs.js';
import { ConfigBackupsScheduler } from '../../src/config-backups/config-backups.scheduler.js';
import { contentHash, contentOf } from '../../src/config-backups/config-document.js';
import { DriftAlerts, type ExternalAlertsHook } from '../../src/config-backups/drift-alerts.js';
import { BoardsRepository } from '../../src/boards/boards.repository.js';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { request } from 'undici';
import { startTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../support/app.js';
import { requireRedis } from '../support/redis.js';
import { apiClient, waitFor, type ApiResponse } from '../boards/api.js';
import { startRack, type RackProcess } from '../boards/rack.js';

const redis = requireRedis();
const BOARDS = 20;
const DAY_MS = 86_400_000;

redis.describe('config backups against a rack of simulated boards', () => {
  let rack: RackProcess;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  const ids = new Map<number, string>(); // rack index → board id
  const raised: Array<{ boardId: string; summary: string; severity: string }> = [];
  const resolved: string[] = [];

  const boardClient = (i: number) =>
    new BoardClient({ baseUrl: rack.boardUrl(i), credentials: { username: 'root', password: 'turing' } });
  const status = async (i: number) => (await api('GET', `/api/v1/boards/${ids.get(i)}/config`)).body;
  const versions = async (i: number) =>
    (await api('GET', `/api/v1/boards/${ids.get(i)}/config/versions?limit=100`)).body.items as Array<{
      id: string;
      version: number;
      source: string;
    }>;
  const scheduler = () => app.app.get(ConfigBackupsScheduler);

  beforeAll(async () => {
    rack = await startRack(24);
    app = await startTestApp({ redisUrl: redis.url, env: { POLL_INTERVAL_SECONDS: '30' } });
    api = apiClient(app.baseUrl);
    scheduler().enabled = false; // the test moves the clock itself
    // The alerts domain may or may not be in this build: record what the drift hook is asked to do.
    const hook: ExternalAlertsHook = {
      raiseExternal: async (a) => void raised.push({ boardId: a.boardId, summary: a.summary, severity: a.severity }),
      resolveExternal: async (a) => void resolved.push(a.boardId),
    };
    app.app.get(DriftAlerts).hook = hook;
    const res = await api('POST', '/api/v1/boards/bulk', {
      boards: Array.from({ length: BOARDS }, (_, k) => ({
        name: `b${k + 1}`,
        base_url: rack.boardUrl(k + 1),
        // Board 7's rack name renders to a hostname with a dot: the board itself refuses it (a genuine refusal).
        rack: k + 1 === 7 ? 'r1.old' : 'r1',
        slot: k + 1,
        labels: { group: 'cfg', ...(k + 1 >= 7 && k + 1 <= 9 ? { trio: 'yes' } : {}) },
        credentials: { username: 'root', password: 'turing' },
      })),
    });
    expect(res.status).toBe(201);
    for (const [k, b] of (res.body.items as Array<{ id: string }>).entries()) {
      ids.set(k + 1, b.id);
    }
  }, 90_000);

  afterAll(async () => {
    await app?.close();
    await rack?.stop();
  });

  it('a daily backup stores one version per board; a changed hostname yields a second version for that board only', async () => {
    const started = new Date();
    expect(await scheduler().tick(started, true)).toBe(BOARDS);
    // The same moment again claims nothing: every board's next backup is at least half a day away.
    expect(await scheduler().tick(started, true)).toBe(0);
    await waitFor(
      'first backups',
      () => Promise.all([...ids.keys()].map(status)),
      (all) => all.every((s) => s.versions === 1),
      20_000,
    );
    const first = await status(4);
    expect(first.latest_version).toMatchObject({ version: 1, format_version: 1, source: 'scheduled' });
    expect(first.latest_version.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(first.latest_version.firmware_version).toEqual(expect.any(String));
    // The second backup is spread over half a day either side of a day later (boards registered together must not
    // all export at the same minute every day); the spread between boards is what matters.
    const nextAt = await Promise.all(
      [...ids.keys()].map(async (i) => Date.parse((await status(i)).backup.next_backup_at)),
    );
    for (const at of nextAt) {
      expect(at - started.getTime()).toBeGreaterThanOrEqual(DAY_MS / 2);
      expect(at - started.getTime()).toBeLessThan((DAY_MS * 3) / 2);
    }
    expect(new Set(nextAt).size).toBeGreaterThan(1);

    await boardClient(3).setHostname('changed-3');
    const nextDay = new Date(started.getTime() + (DAY_MS * 3) / 2 + 60_000);
    expect(await scheduler().tick(nextDay, true)).toBe(BOARDS);
    await waitFor(
      'second round of backups',
      () => Promise.all([...ids.keys()].map(status)),
      (all) =>
        all.every((s) => s.backup.last_status === 'unchanged' || s.backup.last_status === 'ok') &&
        all.filter((s) => s.versions === 2).length === 1,
      20_000,
    );
    const counts = await Promise.all([...ids.keys()].map(async (i) => [i, (await status(i)).versions] as const));
    expect(counts.filter(([, n]) => n === 2).map(([i]) => i)).toEqual([3]);
    expect(counts.filter(([, n]) => n === 1)).toHaveLength(BOARDS - 1);

    const diff = await api('GET', `/api/v1/boards/${ids.get(3)}/config/diff?from=1&to=2`);
    expect(diff.status).toBe(200);
    expect(diff.body.changes).toEqual([{ field: 'hostname', path: 'hostname', from: 'turingpi', to: 'changed-3' }]);
    const timeline = await api('GET', `/api/v1/boards/${ids.get(3)}/timeline?kind=config`);
    expect(timeline.body.items[0].summary).toMatch(/config version 2 stored \(scheduled\): hostname changed/);
  }, 60_000);

  it('restoring version 1 puts the hostname back and stores the board’s report', async () => {
    const v1 = (await versions(3)).find((v) => v.version === 1)!;
    const res = await api('POST', `/api/v1/boards/${ids.get(3)}/config/restore`, { version_id: v1.id });
    expect(res.status).toBe(202);
    expect(res.body.status).toBe('pending');
    const done = await waitFor(
      'restore',
      () => api('GET', `/api/v1/config-restores/${res.body.id}`),
      (r) => r.body.status !== 'pending' && r.body.status !== 'running',
      15_000,
    );
    const restore = done.value.body;
    expect(restore.status).toBe('applied');
    expect(restore.report.applied).toEqual(expect.arrayContaining(['hostname turingpi']));
    expect(restore.fields_outcome.find((f: { field: string }) => f.field === 'hostname')).toEqual({
      field: 'hostname',
      status: 'applied',
      message: 'hostname turingpi',
    });
    expect(restore.pre_backup_version_id).toBe((await versions(3)).find((v) => v.version === 2)!.id); // backed up first
    expect((await boardClient(3).getHostname()).hostname).toBe('turingpi');
    const live = await api('GET', `/api/v1/boards/${ids.get(3)}/config/diff?from=1&to=live`);
    expect(live.body).toMatchObject({ identical: true, changes: [] });
    // The backup after the restore stored the restored content as version 3.
    expect((await versions(3))[0]).toMatchObject({ version: 3, source: 'post_change' });
    const timeline = await api('GET', `/api/v1/boards/${ids.get(3)}/timeline?kind=config&limit=5`);
    expect(timeline.body.items.map((e: { summary: string }) => e.summary).join('\n')).toMatch(
      /config restore of version 1: applied/,
    );
  }, 30_000);

  it('pushes NTP servers and a hostname pattern to 20 boards: per board and per field; the refusing board shows failed with its message', async () => {
    const created = await api('POST', '/api/v1/config-templates', {
      name: 'rack-standard',
      hostname_pattern: '{rack}-{slot}',
      ntp_servers: ['ntp1.example.net', 'ntp2.example.net'],
    });
    expect(created.status).toBe(201);
    const templateId = created.body.id as string;

    const dry = await api('POST', `/api/v1/config-templates/${templateId}/push`, {
      selector: 'group=cfg',
      dry_run: true,
    });
    expect(dry.status).toBe(202);
    expect(dry.body).toMatchObject({ id: null, dry_run: true, summary: { will_change: BOARDS } });
    const dry5 = dry.body.boards.find((b: { name: string }) => b.name === 'b5');
    expect(dry5.changes.map((c: { path: string }) => c.path)).toEqual(['hostname', 'ntp_servers[0]', 'ntp_servers[1]']);
    expect(dry5.basis).toBe('live');
    expect(dry.body.boards.find((b: { name: string }) => b.name === 'b7').warnings[0]).toMatch(/r1\.old-7/);
    expect((await boardClient(5).getHostname()).hostname).toBe('turingpi'); // the dry run sent nothing

    const run = await api('POST', `/api/v1/config-templates/${templateId}/push`, {
      selector: 'group=cfg',
      concurrency: 4,
    });
    expect(run.status).toBe(202);
    const done = await waitFor(
      'push',
      () => api('GET', `/api/v1/config-pushes/${run.body.id}`),
      (r) => r.body.status !== 'running',
      30_000,
    );
    const push = done.value.body;
    expect(push.status).toBe('completed');
    expect(push.summary).toEqual({ applied: BOARDS - 1, partial: 1 });
    const b7 = push.boards.find((b: { name: string }) => b.name === 'b7');
    expect(b7.status).toBe('partial');
    const hostnameField = b7.fields.find((f: { field: string }) => f.field === 'hostname');
    expect(hostnameField.status).toBe('failed');
    expect(hostnameField.message).toMatch(/^hostname: "r1\.old-7" is not a hostname/); // the board's own words
    expect(b7.fields.find((f: { field: string }) => f.field === 'ntp_servers')).toEqual({
      field: 'ntp_servers',
      status: 'applied',
      message: '2 time server(s)',
    });
    for (const b of push.boards.filter((x: { name: string }) => x.name !== 'b7')) {
      expect(b.fields.map((f: { field: string; status: string }) => `${f.field}:${f.status}`)).toEqual([
        'hostname:applied',
        'ntp_servers:applied',
      ]);
    }
    expect((await boardClient(12).getHostname()).hostname).toBe('r1-12');
    expect((await boardClient(12).getConfig()).ntp_servers).toEqual(['ntp1.example.net', 'ntp2.example.net']);

    // Bound by the push: in sync everywhere except the board that refused its hostname, which drifted (and alerted).
    expect((await status(12)).drift).toMatchObject({ status: 'in_sync', fields: [] });
    const drift7 = (await status(7)).drift;
    expect(drift7.status).toBe('drifted');
    expect(drift7.fields).toEqual([{ field: 'hostname', path: 'hostname', from: 'turingpi', to: 'r1.old-7' }]);
    expect(raised.filter((a) => a.boardId === ids.get(7))[0]).toMatchObject({ severity: 'info' });
    expect(raised.some((a) => a.boardId === ids.get(12))).toBe(false);
    const overview = await api('GET', '/api/v1/config-drift?status=drifted');
    expect(overview.body.items.map((i: { name: string }) => i.name)).toEqual(['b7']);

    // Drift found by a later backup: a hostname changed behind the fleet manager's back.
    await boardClient(12).setHostname('rogue');
    const backup = await api('POST', `/api/v1/boards/${ids.get(12)}/config/backups`);
    expect(backup.status).toBe(202);
    await waitFor(
      'drift of b12',
      () => status(12),
      (s) => s.drift.status === 'drifted',
      10_000,
    );
    expect((await status(12)).drift.fields).toEqual([
      { field: 'hostname', path: 'hostname', from: 'rogue', to: 'r1-12' },
    ]);
    expect(raised.some((a) => a.boardId === ids.get(12))).toBe(true);

    // Automatic re-apply: the next backup that finds drift pushes the template again, and the board is back in sync.
    expect((await api('PATCH', `/api/v1/boards/${ids.get(12)}/config`, { auto_reapply: true })).status).toBe(200);
    await api('POST', `/api/v1/boards/${ids.get(12)}/config/backups`);
    await waitFor(
      're-apply of b12',
      () => status(12),
      (s) => s.drift.status === 'in_sync',
      15_000,
    );
    expect((await boardClient(12).getHostname()).hostname).toBe('r1-12');
    expect(resolved).toContain(ids.get(12));
  }, 90_000);

  it('stops a push when the failure ratio is exceeded: the boards not started are cancelled', async () => {
    const t = await api('POST', '/api/v1/config-templates', {
      name: 'pattern-only',
      hostname_pattern: 'x-{rack}-{slot}',
    });
    const run = await api('POST', `/api/v1/config-templates/${t.body.id}/push`, {
      selector: 'trio=yes',
      concurrency: 1,
      stop_on_failure_ratio: 0,
      min_finished: 1,
      bind: false,
    });
    expect(run.status).toBe(202);
    const done = await waitFor(
      'push to stop',
      () => api('GET', `/api/v1/config-pushes/${run.body.id}`),
      (r) => r.body.status !== 'running',
      15_000,
    );
    expect(done.value.body.status).toBe('stopped');
    expect(done.value.body.boards.map((b: { name: string; status: string }) => `${b.name}:${b.status}`)).toEqual([
      'b7:failed',
      'b8:cancelled',
      'b9:cancelled',
    ]);
    expect((await boardClient(8).getHostname()).hostname).toBe('r1-8'); // never sent
  }, 30_000);

  it('cancels a running push: the running board finishes, the boards not started get nothing', async () => {
    const t = await api('POST', '/api/v1/config-templates', {
      name: 'ntp-cancel',
      ntp_servers: ['ntp.cancel.example'],
    });
    const calls = async (i: number) =>
      (await rack.control('GET', `/rack/boards/${i}/calls`)).body.calls.postConfig ?? 0;
    const before = await Promise.all([7, 8, 9].map(calls));
    await rack.control('POST', '/rack/boards/7/faults', { latencyMs: 2000 }); // b7 goes first and takes a while
    try {
      const run = await api('POST', `/api/v1/config-templates/${t.body.id}/push`, {
        selector: 'trio=yes',
        concurrency: 1,
        bind: false,
      });
      expect(run.status).toBe(202);
      await waitFor(
        'b7 running',
        () => api('GET', `/api/v1/config-pushes/${run.body.id}`),
        (r) => r.body.boards.some((b: { name: string; status: string }) => b.name === 'b7' && b.status === 'running'),
        15_000,
        50,
      );
      const cancelled = await api('POST', `/api/v1/config-pushes/${run.body.id}/cancel`);
      expect(cancelled.status).toBe(200);
      expect(cancelled.body.status).toBe('cancelled');
      const done = await waitFor(
        'b7 finished',
        () => api('GET', `/api/v1/config-pushes/${run.body.id}`),
        (r) => r.body.boards.find((b: { name: string }) => b.name === 'b7').status !== 'running',
        20_000,
      );
      expect(done.value.body.boards.map((b: { name: string; status: string }) => `${b.name}:${b.status}`)).toEqual([
        'b7:applied',
        'b8:cancelled',
        'b9:cancelled',
      ]);
      expect(done.value.body.status).toBe('cancelled');
      expect(await Promise.all([7, 8, 9].map(calls))).toEqual([before[0]! + 1, before[1], before[2]]);
      // Cancelling again changes nothing; a finished push cannot be cancelled; an unknown one is not found.
      expect((await api('POST', `/api/v1/config-pushes/${run.body.id}/cancel`)).body.status).toBe('cancelled');
    } finally {
      await rack.control('DELETE', '/rack/boards/7/faults');
    }
    const finished = await api('POST', `/api/v1/config-templates/${t.body.id}/push`, {
      selector: 'trio=yes',
      concurrency: 3,
      bind: false,
    });
    await waitFor(
      'push completed',
      () => api('GET', `/api/v1/config-pushes/${finished.body.id}`),
      (r) => r.body.status !== 'running',
      20_000,
    );
    const refused = await api('POST', `/api/v1/config-pushes/${finished.body.id}/cancel`);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/already completed/);
    expect((await api('POST', '/api/v1/config-pushes/00000000-0000-4000-8000-000000000000/cancel')).status).toBe(404);
  }, 60_000);

  it('board replacement: the old board’s last version restored to a new board gives the same export except origin and time', async () => {
    // Give board 20 node labels too, then back it up.
    await boardClient(20).postConfig({
      format_version: 1,
      exported_at: '2026-01-01T00:00:00Z',
      exported_from: {},
      nodes: [
        { id: 1, name: 'head', module_name: 'RK1' },
        { id: 3, name: 'gpu', uart_baud: 9600 },
      ],
    });
    await api('POST', `/api/v1/boards/${ids.get(20)}/config/backups`);
    await waitFor(
      'b20 backup',
      () => versions(20),
      (v) => v[0]?.source === 'on_demand',
      10_000,
    );
    const old = (await versions(20))[0]!;
    expect((await api('POST', `/api/v1/boards/${ids.get(20)}/decommission`)).status).toBe(200);

    const fresh = await api('POST', '/api/v1/boards', {
      name: 'b20-replacement',
      base_url: rack.boardUrl(21),
      rack: 'r1',
      slot: 20,
      labels: { group: 'cfg' },
      credentials: { username: 'root', password: 'turing' },
    });
    expect(fresh.status).toBe(201);
    ids.set(21, fresh.body.id);
    const res = await api('POST', `/api/v1/boards/${fresh.body.id}/config/restore`, { version_id: old.id });
    expect(res.status).toBe(202);
    const done = await waitFor(
      'replacement restore',
      () => api('GET', `/api/v1/config-restores/${res.body.id}`),
      (r) => !['pending', 'running'].includes(r.body.status),
      15_000,
    );
    expect(done.value.body).toMatchObject({ status: 'applied', source_board_id: ids.get(20), board_id: fresh.body.id });
    expect(done.value.body.report.failed).toEqual([]);

    const oldDoc = (await api('GET', `/api/v1/config-versions/${old.id}`)).body.document;
    const newDoc = (await boardClient(21).getConfig()) as Record<string, unknown>;
    expect(contentOf(newDoc)).toEqual(contentOf(oldDoc));
    expect(oldDoc.nodes[0]).toEqual({ id: 1, name: 'head', module_name: 'RK1' });
    // Its first version (taken before the restore) is the factory config; the latest is the restored one.
    const replacement = await versions(21);
    expect(replacement.map((v) => v.source)).toEqual(['post_change', 'pre_restore']);
    expect((await api('GET', `/api/v1/config-versions/${replacement[0]!.id}`)).body.hash).toBe(contentHash(oldDoc));
  }, 40_000);

  it('exports the backups of a selector as JSON lines and imports them (idempotently); a foreign format is refused before sending', async () => {
    const exported = await request(`${app.baseUrl}/api/v1/config-backups/export?selector=group%3Dcfg`, {
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    });
    expect(exported.statusCode).toBe(200);
    expect(String(exported.headers['content-type'])).toContain('application/x-ndjson');
    const text = await exported.body.text();
    const lines = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, any>);
    expect(lines[0]).toMatchObject({ kind: 'tpfleet-config-archive', format: 1 });
    const total = (await Promise.all([...ids.keys()].map(async (i) => (await versions(i)).length))).reduce(
      (a, b) => a + b,
      0,
    );
    expect(lines.length - 1).toBe(total);
    expect(lines.slice(1).every((l) => l.kind === 'version' && contentHash(l.document) === l.hash)).toBe(true);

    const again = await api('POST', '/api/v1/config-backups/import', undefined, {
      raw: text,
      contentType: 'text/plain',
    });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ imported: 0, duplicates: total, unmatched: [], errors: [] });

    // A version from a future daemon (format 2), e.g. carried over from another site.
    const future = { format_version: 2, exported_at: '2030-01-01T00:00:00Z', exported_from: {}, hostname: 'future' };
    const archive = [
      JSON.stringify({ kind: 'tpfleet-config-archive', format: 1 }),
      JSON.stringify({
        kind: 'version',
        board: { id: ids.get(21), name: 'b20-replacement' },
        version: 1,
        hash: contentHash(future),
        format_version: 2,
        firmware_version: '9.0.0',
        source: 'scheduled',
        captured_at: '2030-01-01T00:00:00Z',
        document: future,
      }),
      JSON.stringify({
        kind: 'version',
        board: { id: ids.get(21), name: 'x' },
        version: 1,
        hash: '0'.repeat(64),
        format_version: 1,
        firmware_version: null,
        source: 'x',
        captured_at: '2030-01-01T00:00:00Z',
        document: { format_version: 1 },
      }),
      '{not json',
    ].join('\n');
    const imported = await api('POST', '/api/v1/config-backups/import', { archive });
    expect(imported.body).toMatchObject({ imported: 1, duplicates: 0 });
    expect(imported.body.errors.map((e: { line: number }) => e.line)).toEqual([3, 4]);
    expect((await api('POST', '/api/v1/config-backups/import', { archive })).body).toMatchObject({
      imported: 0,
      duplicates: 1,
    });

    const futureVersion = (await versions(21)).find((v) => v.source === 'import')!;
    await rack.control('DELETE', '/rack/boards/21/calls');
    const refused = await api('POST', `/api/v1/boards/${ids.get(21)}/config/restore`, { version_id: futureVersion.id });
    expect(refused.status).toBe(422);
    expect(refused.type).toContain('application/problem+json');
    expect(refused.body.detail).toMatch(/format 2.*reads format 1/);
    const calls = await rack.control('GET', '/rack/boards/21/calls');
    expect(calls.body.calls.postConfig ?? 0).toBe(0); // nothing was sent
  }, 30_000);

  it('backups are idempotent: the same change backed up by concurrent runs, retries, two workers and a restarted worker is one version', async () => {
    // Concurrent runs of the job's body on one process.
    await boardClient(1).setHostname('changed-1');
    const runner = app.app.get(ConfigBackupRunner);
    const board1 = (await app.app.get(BoardsRepository).findById(ids.get(1)!))!;
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => runner.backup(board1, 'on_demand')));
    expect(outcomes.filter((o) => o.status === 'stored')).toHaveLength(1);
    expect(outcomes.filter((o) => o.status === 'unchanged')).toHaveLength(4);
    const v1 = (await versions(1)).length;

    // The same scheduled job enqueued twice (a retried tick) is one job.
    const jobs = app.app.get(JobsService);
    const jobId = `config-backup.${ids.get(1)}.12345`;
    await jobs.enqueue(configBackupJob, { boardId: ids.get(1)!, reason: 'scheduled' }, { jobId });
    await jobs.enqueue(configBackupJob, { boardId: ids.get(1)!, reason: 'scheduled' }, { jobId });
    const queue = jobs.queue('config');
    expect(await queue.getJob(jobId)).toBeTruthy();
    expect(
      (await queue.getJobs(['waiting', 'active', 'completed', 'delayed', 'failed'])).filter((j) => j.id === jobId),
    ).toHaveLength(1);

    // A second worker process on the same database and queues; both take backup jobs of one changed board.
    const before2 = (await versions(2))[0]!.version;
    const second = await startTestApp({
      redisUrl: redis.url,
      db: app.db,
      env: { QUEUE_PREFIX: app.config.redis.prefix },
    });
    try {
      second.app.get(ConfigBackupsScheduler).enabled = false;
      await boardClient(2).setHostname('changed-2');
      await jobs.enqueueMany(
        configBackupJob,
        Array.from({ length: 8 }, (_, k) => ({
          payload: { boardId: ids.get(2)!, reason: 'on_demand' as const },
          options: { jobId: `dup-2-${k}` },
        })),
      );
      await waitFor(
        '8 backups of b2',
        async () => (await queue.getJobs(['completed'])).filter((j) => String(j.id).startsWith('dup-2-')).length,
        (n) => n === 8,
        15_000,
      );
      const v2 = await versions(2);
      expect(v2[0]!.version).toBe(before2 + 1); // one new version, not eight
      expect(v2.filter((v) => v.source === 'on_demand')).toHaveLength(1);
    } finally {
      await second.close();
    }
    // A restarted worker (a new process) running the same jobs again stores nothing new.
    const third = await startTestApp({
      redisUrl: redis.url,
      db: app.db,
      env: { QUEUE_PREFIX: app.config.redis.prefix },
    });
    try {
      third.app.get(ConfigBackupsScheduler).enabled = false;
      await third.app.get(JobsService).enqueueMany(
        configBackupJob,
        [1, 2].map((i) => ({
          payload: { boardId: ids.get(i)!, reason: 'on_demand' as const },
          options: { jobId: `restart-${i}` },
        })),
      );
      await waitFor(
        'restart backups',
        async () => (await queue.getJobs(['completed'])).filter((j) => String(j.id).startsWith('restart-')).length,
        (n) => n === 2,
        15_000,
      );
    } finally {
      await third.close();
    }
    expect((await versions(1)).length).toBe(v1);
    expect((await versions(2))[0]!.version).toBe(before2 + 1);
  }, 90_000);

  it('retention keeps N versions, the recent ones and the last of each month', async () => {
    const before = (await versions(4))[0]!.version;
    const policy = await api('PATCH', '/api/v1/config-backups/policy', {
      keep_versions: 2,
      keep_days: 0,
      keep_monthly: false,
    });
    expect(policy.body).toMatchObject({ keep_versions: 2, keep_days: 0, keep_monthly: false });
    for (const name of ['r-a', 'r-b', 'r-c']) {
      await boardClient(4).setHostname(name);
      const outcome = await app.app
        .get(ConfigBackupRunner)
        .backup((await app.app.get(BoardsRepository).findById(ids.get(4)!))!, 'on_demand');
      expect(outcome.status).toBe('stored');
    }
    expect((await versions(4)).map((v) => v.version)).toEqual([before + 3, before + 2]);
    await api('PATCH', '/api/v1/config-backups/policy', { keep_versions: 30, keep_days: 90, keep_monthly: true });
  });

  it('refuses bad input on every endpoint with a 4xx problem, never a 500', async () => {
    const id = ids.get(5)!;
    const none = '00000000-0000-4000-8000-000000000000';
    const templates = (await api('GET', '/api/v1/config-templates')).body.items as Array<{ id: string }>;
    const tid = templates[0]!.id;
    const cases: Array<[number, 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', string, unknown]> = [
      [400, 'GET', '/api/v1/boards/not-a-uuid/config', undefined],
      [404, 'GET', `/api/v1/boards/${none}/config`, undefined],
      [400, 'GET', `/api/v1/boards/${id}/config/versions?limit=0`, undefined],
      [400, 'GET', `/api/v1/boards/${id}/config/versions?cursor=%%%`, undefined],
      [400, 'GET', `/api/v1/boards/${id}/config/versions/0`, undefined],
      [400, 'GET', `/api/v1/boards/${id}/config/versions/abc`, undefined],
      [404, 'GET', `/api/v1/boards/${id}/config/versions/999`, undefined],
      [400, 'GET', `/api/v1/boards/${id}/config/diff`, undefined],
      [400, 'GET', `/api/v1/boards/${id}/config/diff?from=1&to=yesterday`, undefined],
      [400, 'GET', `/api/v1/boards/${id}/config/diff?from=1&colour=red`, undefined],
      [404, 'GET', `/api/v1/boards/${id}/config/diff?from=99`, undefined],
      [400, 'POST', `/api/v1/boards/${id}/config/restore`, {}],
      [400, 'POST', `/api/v1/boards/${id}/config/restore`, { version_id: 'v1' }],
      [400, 'POST', `/api/v1/boards/${id}/config/restore`, { version_id: none, fields: [] }],
      [400, 'POST', `/api/v1/boards/${id}/config/restore`, { version_id: none, fields: ['password'] }],
      [400, 'POST', `/api/v1/boards/${id}/config/restore`, { version_id: none, fields: ['hostname', 'hostname'] }],
      [404, 'POST', `/api/v1/boards/${id}/config/restore`, { version_id: none }],
      [409, 'POST', `/api/v1/boards/${ids.get(20)}/config/restore`, { version_id: (await versions(5))[0]!.id }],
      [409, 'POST', `/api/v1/boards/${ids.get(20)}/config/backups`, undefined],
      [404, 'POST', `/api/v1/boards/${none}/config/backups`, undefined],
      [400, 'PATCH', `/api/v1/boards/${id}/config`, {}],
      [400, 'PATCH', `/api/v1/boards/${id}/config`, { backup_interval_seconds: 5 }],
      [422, 'PATCH', `/api/v1/boards/${id}/config`, { template_id: none }],
      [409, 'PATCH', `/api/v1/boards/${ids.get(21)}/config`, { auto_reapply: true }], // not bound to a template
      [400, 'PATCH', '/api/v1/config-backups/policy', { keep_versions: 0 }],
      [400, 'PATCH', '/api/v1/config-backups/policy', { shred: true }],
      [400, 'POST', '/api/v1/config-backups/run', { selector: 'a=b=c' }],
      [400, 'GET', '/api/v1/config-backups/export?selector=%3D%3D', undefined],
      [400, 'POST', '/api/v1/config-backups/import', { archive: '' }],
      [400, 'POST', '/api/v1/config-backups/import', { nope: 1 }],
      [400, 'POST', '/api/v1/config-backups/import', { archive: '{"kind":"something-else"}' }],
      [400, 'POST', '/api/v1/config-templates', {}],
      [400, 'POST', '/api/v1/config-templates', { name: 'only-name' }],
      [400, 'POST', '/api/v1/config-templates', { name: 'x', hostname_pattern: '{colour}' }],
      [400, 'POST', '/api/v1/config-templates', { name: 'x', hostname_pattern: 'a.b-{slot}' }],
      [400, 'POST', '/api/v1/config-templates', { name: 'x', ntp_servers: ['bad server'] }],
      [
        400,
        'POST',
        '/api/v1/config-templates',
        { name: 'x', ntp_servers: Array.from({ length: 9 }, (_, k) => `n${k}`) },
      ],
      [400, 'POST', '/api/v1/config-templates', { name: 'x', nodes: [{ id: 5, name: 'n' }] }],
      [400, 'POST', '/api/v1/config-templates', { name: 'x', nodes: [{ id: 1 }] }],
      [
        400,
        'POST',
        '/api/v1/config-templates',
        {
          name: 'x',
          nodes: [
            { id: 1, name: 'a' },
            { id: 1, name: 'b' },
          ],
        },
      ],
      [
        400,
        'POST',
        '/api/v1/config-templates',
        { name: 'x', firmware_sources: { sources: [{ id: 'a', kind: 'ftp', label: 'a', location: 'x' }] } },
      ],
      [409, 'POST', '/api/v1/config-templates', { name: 'rack-standard', ntp_servers: [] }],
      [400, 'GET', '/api/v1/config-templates/xyz', undefined],
      [404, 'GET', `/api/v1/config-templates/${none}`, undefined],
      [404, 'PUT', `/api/v1/config-templates/${none}`, { name: 'y', ntp_servers: [] }],
      [404, 'DELETE', `/api/v1/config-templates/${none}`, undefined],
      [400, 'POST', `/api/v1/config-templates/${tid}/push`, {}],
      [400, 'POST', `/api/v1/config-templates/${tid}/push`, { selector: 'group=cfg', concurrency: 0 }],
      [400, 'POST', `/api/v1/config-templates/${tid}/push`, { selector: 'group=cfg', stop_on_failure_ratio: 2 }],
      [400, 'POST', `/api/v1/config-templates/${tid}/push`, { selector: 'group=cfg', bind: false, auto_reapply: true }],
      [400, 'POST', `/api/v1/config-templates/${tid}/push`, { selector: '!!bad' }],
      [422, 'POST', `/api/v1/config-templates/${tid}/push`, { selector: 'group=nothing-here' }],
      [404, 'POST', `/api/v1/config-templates/${none}/push`, { selector: 'group=cfg' }],
      [400, 'GET', '/api/v1/config-pushes/xyz', undefined],
      [404, 'GET', `/api/v1/config-pushes/${none}`, undefined],
      [404, 'GET', `/api/v1/config-restores/${none}`, undefined],
      [404, 'GET', `/api/v1/config-versions/${none}`, undefined],
      [400, 'GET', '/api/v1/config-drift?status=sideways', undefined],
    ];
    for (const [expected, method, path, body] of cases) {
      const res: ApiResponse = await api(method, path, body);
      expect({ method, path, body, status: res.status }).toEqual({ method, path, body, status: expected });
      expect(res.type).toContain('application/problem+json');
      expect(typeof res.body.detail).toBe('string');
    }
    const malformed = await api('POST', `/api/v1/config-templates`, undefined, { raw: '{"name":' });
    expect(malformed.status).toBe(400);
    const doc = await api('GET', '/api/openapi.json');
    expect(doc.status).toBe(200);
    for (const path of [
      '/api/v1/boards/{id}/config/restore',
      '/api/v1/boards/{id}/config/diff',
      '/api/v1/config-templates/{id}/push',
      '/api/v1/config-backups/export',
    ]) {
      expect(doc.body.paths).toHaveProperty([path]);
    }
    // Roles: a viewer reads but cannot restore or push.
    const viewer = await api('POST', '/api/v1/tokens', { name: 'cfg-viewer', role: 'viewer' });
    const token = viewer.body.token as string;
    expect((await api('GET', `/api/v1/boards/${id}/config`, undefined, { token })).status).toBe(200);
    expect((await api('POST', `/api/v1/boards/${id}/config/backups`, undefined, { token })).status).toBe(403);
    expect(
      (await api('POST', `/api/v1/config-templates/${tid}/push`, { selector: 'group=cfg' }, { token })).status,
    ).toBe(403);
  });
});
