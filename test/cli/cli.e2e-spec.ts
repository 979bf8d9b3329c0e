// The `tpfleet` binary, run as a subprocess against the fleet manager (real PostgreSQL and Redis), a simulated rack
// and a local firmware host: login and contexts, selectors as a table and JSON, a node powered and read back, a
// rollout planned, created and watched to completion, refusals with the server's detail, a viewer token refused.
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { FakeFirmwareHost } from '../../apps/agent/test/support/firmware-server.js';
import { apiClient } from '../boards/api.js';
import { startRack, type RackProcess } from '../boards/rack.js';
import {
  boardSlots,
  FROM,
  pushSources,
  registerBoards,
  startFirmwareHost,
  TARGET,
  waitOnline,
  type Api,
} from '../firmware/helpers.js';
import { startTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../support/app.js';
import { requireRedis } from '../support/redis.js';
import { BoardClient } from '@tpfleet/board-api/client';
import { waitFor } from '../boards/api.js';
import { type Document, responseChecker } from '../fleet-api/response-schemas.js';
import { killStartedClis, runCli, startCli } from './tpfleet.js';

const redis = requireRedis();

/** A port nothing listens on (bound, then released). */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

// Boards 1..6 in two racks; gpu on odd boards. Board 7 is registered through the CLI, 8 and 9 by a scan.
const rackOf = (i: number) => (i <= 3 ? 'r1' : 'r2');
const tierOf = (i: number) => (i % 2 === 1 ? 'gpu' : 'cpu');

redis.describe('tpfleet, the command line, against a fleet manager and a simulated rack', () => {
  let rack: RackProcess;
  let app: TestApp;
  let api: Api;
  let host: FakeFirmwareHost;
  let home: string;
  let env: Record<string, string>;
  const cli = (args: string[], input?: string, extra: Record<string, string> = {}, killAfterMs?: number) =>
    runCli(args, { ...env, ...extra }, input, killAfterMs);

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'tpfleet-cli-'));
    env = { HOME: home, XDG_CONFIG_HOME: join(home, '.config') };
    host = await startFirmwareHost();
    rack = await startRack(9, ['--boot-delay-ms', '300', '--trust-loopback']);
    app = await startTestApp({
      redisUrl: redis.url,
      env: {
        POLL_INTERVAL_SECONDS: '2',
        POLL_SLOW_INTERVAL_SECONDS: '5',
        POLL_TIMEOUT_MS: '5000',
        NODE_IMAGE_UPLOAD_DIR: join(home, 'uploads'),
      },
    });
    api = apiClient(app.baseUrl) as Api;
    await registerBoards(api, rack, 1, 6, (i) => ({ rack: rackOf(i), tier: tierOf(i) }), rackOf);
    await waitOnline(api, '', 6, 60_000);
    await pushSources(api, host, '', 60_000);
  }, 120_000);

  afterAll(async () => {
    killStartedClis();
    await app?.close();
    await rack?.stop();
    await host?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('login checks the token, stores a 0600 context and never prints the token', async () => {
    const bad = await cli(['login', '--url', app.baseUrl, '--token-stdin'], 'not-the-token\n');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^error: .+\(HTTP 401\)/m);

    const login = await cli(['login', '--url', app.baseUrl, '--name', 'lab', '--token-stdin'], `${TEST_ADMIN_TOKEN}\n`);
    expect(login).toMatchObject({ code: 0, stderr: '' });
    expect(login.stdout).toContain('context "lab" is current');
    const file = join(home, '.config', 'tpfleet', 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      current: 'lab',
      contexts: { lab: { url: app.baseUrl, token: TEST_ADMIN_TOKEN } },
    });

    const list = await cli(['context', 'list']);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^CURRENT\s+NAME\s+URL\n\*\s+lab\s+http:\/\/127\.0\.0\.1:\d+\n$/);
    for (const out of [login, list, await cli(['context', 'list', '-o', 'json'])]) {
      expect(out.stdout + out.stderr).not.toContain(TEST_ADMIN_TOKEN);
    }
  });

  it('registers a board with the password from stdin', async () => {
    const res = await cli(
      ['boards', 'register', 'cli-7', rack.boardUrl(7), '--rack', 'r3', '--label', 'tier=gpu', '--password-stdin'],
      'turing\n',
    );
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^board cli-7 registered \([0-9a-f-]{36}\): online/);
    const stored = await api('GET', '/api/v1/boards?q=cli-7');
    expect(stored.body.items[0]).toMatchObject({
      rack: 'r3',
      labels: { tier: 'gpu' },
      credentials: { kind: 'password' },
    });
  });

  it('lists with a label selector as a table and as JSON', async () => {
    const table = await cli(['boards', 'list', '-l', 'rack=r1,tier=gpu']);
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+STATE\s+RACK\s+FIRMWARE\s+LABELS\s+SINCE$/);
    expect(lines.slice(1).map((l) => l.split(/\s+/).slice(0, 4))).toEqual([
      ['fw1', 'online', 'r1', FROM],
      ['fw3', 'online', 'r1', FROM],
    ]);

    const json = await cli(['boards', 'list', '-l', 'tier=gpu', '-o', 'json']);
    expect(json.code).toBe(0);
    const boards = JSON.parse(json.stdout) as Array<{ name: string; labels: Record<string, string> }>;
    expect(boards.map((b) => b.name).sort()).toEqual(['cli-7', 'fw1', 'fw3', 'fw5']);
    expect(boards.every((b) => b.labels.tier === 'gpu')).toBe(true);

    const names = await cli(['boards', 'list', '-l', 'rack=r2', '-o', 'name']);
    expect(names.stdout).toBe('fw4\nfw5\nfw6\n');
  });

  it('powers a node on and off by board name and reads it back from the board', async () => {
    const on = await cli(['nodes', 'power', 'on', 'fw2', '3']);
    expect(on).toMatchObject({ code: 0, stdout: 'board fw2 node 3: on done\n' });
    const read = await cli(['nodes', 'list', 'fw2', '-o', 'json']);
    expect(JSON.parse(read.stdout)).toEqual([
      { node: 1, power: 'off' },
      { node: 2, power: 'off' },
      { node: 3, power: 'on' },
      { node: 4, power: 'off' },
    ]);
    expect(await rack.metrics(2)).toMatch(/bmcd_node_power_state\{node="node3"\} 1/);

    expect((await cli(['nodes', 'power', 'off', 'fw2', '3'])).code).toBe(0);
    const table = await cli(['nodes', 'list', 'fw2']);
    expect(table.stdout).toMatch(/^NODE\s+POWER\n1\s+off\n2\s+off\n3\s+off\n4\s+off\n$/);
  });

  it('flashes a node from a local file: streamed to the fleet, written by the job, the eMMC matches its SHA-256', async () => {
    const image = Buffer.alloc(3 * 1024 * 1024);
    for (let at = 0; at < image.length; at += 512) {
      image.writeUInt32LE((at * 2654435761) >>> 0, at);
    }
    const file = join(home, 'my os.img');
    writeFileSync(file, image);
    const digest = createHash('sha256').update(image).digest('hex');
    const flashed = await cli(['nodes', 'flash', 'fw2', '2', '--file', file, '--sha256', digest]);
    expect(flashed.code).toBe(0);
    expect(flashed.stdout).toMatch(/^board fw2 node 2: image upload:my_os\.img succeeded \(job [0-9a-f-]{36}\)\n$/);
    // Without a terminal, progress goes to stderr as lines.
    expect(flashed.stderr).toContain('uploading my_os.img: 100%');
    const onBoard = readFileSync(join(rack.stateDir, 'boards', '2', 'emmc', 'node2.img'));
    expect(createHash('sha256').update(onBoard).digest('hex')).toBe(digest);
    expect(readdirSync(join(home, 'uploads'))).toEqual([]);

    const wrong = await cli(['nodes', 'flash', 'fw2', '2', '--file', file, '--sha256', 'c'.repeat(64)]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain(`the uploaded image’s SHA-256 is ${digest}, not the declared ${'c'.repeat(64)}`);
    expect((await cli(['nodes', 'flash', 'fw2', '2'])).code).toBe(2);
  }, 90_000);

  it('a bulk power action: --dry-run lists the boards, without a terminal it needs --yes, with --yes it runs', async () => {
    const dry = await cli(['nodes', 'power', 'on', '-l', 'rack=r2', '--nodes', '1', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(
      dry.stdout
        .split('\n')
        .slice(1, -1)
        .map((l) => l.split(/\s+/).slice(0, 3)),
    ).toEqual([
      ['fw4', '1', 'will_run'],
      ['fw5', '1', 'will_run'],
      ['fw6', '1', 'will_run'],
    ]);
    const unconfirmed = await cli(['nodes', 'power', 'on', '-l', 'rack=r2', '--nodes', '1']);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain('pass --yes to confirm');
    expect(await rack.metrics(4)).toMatch(/bmcd_node_power_state\{node="node1"\} 0/); // nothing was sent

    const run = await cli(['nodes', 'power', 'on', '-l', 'rack=r2', '--nodes', '1', '--yes']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/fw4\s+1\s+succeeded/);
    for (const i of [4, 5, 6]) {
      expect(await rack.metrics(i)).toMatch(/bmcd_node_power_state\{node="node1"\} 1/);
    }
  });

  it('plans, creates and watches a rollout to completion (exit 0); a refused action exits 1 with the detail', async () => {
    const plan = await cli([
      'rollouts',
      'plan',
      TARGET,
      '--source',
      'test-http',
      '-l',
      'rack=r1',
      '--canary',
      '1',
      '-o',
      'json',
    ]);
    expect(plan.code).toBe(0);
    const planned = JSON.parse(plan.stdout);
    expect(planned.waves).toEqual([
      { wave: 1, size: 1 },
      { wave: 2, size: 2 },
    ]);
    expect(planned.summary).toMatchObject({ will_install: 3 });

    const created = await cli([
      'rollouts',
      'create',
      TARGET,
      '--source',
      'test-http',
      '-l',
      'rack=r1',
      '--canary',
      '1',
      '--name',
      'r1-upgrade',
      '--yes',
      '-o',
      'name',
    ]);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const id = created.stdout.trim();

    const watch = await cli(['rollouts', 'watch', id, '--timeout', '100'], undefined, {}, 120_000);
    expect(watch).toMatchObject({ code: 0, stderr: '' });
    expect(watch.stdout).toMatch(/^rollout r1-upgrade → 2\.31\.0: running/m);
    expect(watch.stdout).toMatch(/fw1: .*→ succeeded/);
    expect(watch.stdout.trimEnd().split('\n').at(-1)).toBe('rollout r1-upgrade completed: 3 succeeded');
    // Each board says so itself.
    for (const i of [1, 2, 3]) {
      expect((await boardSlots(rack, i)).running.version).toBe(TARGET);
    }

    // Pausing a finished rollout is refused: exit 1, and the server's own detail on stderr.
    const pause = await cli(['rollouts', 'pause', id]);
    const direct = await api('POST', `/api/v1/firmware/rollouts/${id}/pause`);
    expect(direct.status).toBe(409);
    expect(pause).toMatchObject({ code: 1, stdout: '' });
    expect(pause.stderr).toBe(`error: ${direct.body.detail} (HTTP 409)\n`);
  }, 180_000);

  it('refusals exit 1 with the server detail; usage errors exit 2', async () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    const get = await cli(['boards', 'get', missing]);
    const direct = await api('GET', `/api/v1/boards/${missing}`);
    expect(get).toMatchObject({ code: 1, stderr: `error: ${direct.body.detail} (HTTP 404)\n` });

    const badName = await cli(['boards', 'register', 'no spaces allowed', 'http://127.0.0.1:9']);
    expect(badName.code).toBe(1);
    expect(badName.stderr).toMatch(/^error: .*name/);
    expect(badName.stderr).toContain('(HTTP 400)');

    expect((await cli(['boards', 'get', 'no-such-board'])).stderr).toBe('error: no board named "no-such-board"\n');
    const usage = await cli(['nodes', 'power', 'sideways', 'fw1', '1']);
    expect(usage).toMatchObject({ code: 2, stderr: 'error: "sideways": expected on, off or reset\n' });
    expect((await cli(['nodes', 'power', 'on', 'fw1', '5'])).code).toBe(2);
    expect((await cli(['boards', 'list', '--no-such-flag'])).code).toBe(2);
    expect((await cli(['boards', 'list', '-o', 'xml'])).code).toBe(2);

    const unreachable = await cli(['boards', 'list'], undefined, {
      TPFLEET_URL: `http://127.0.0.1:${await closedPort()}`,
      TPFLEET_TOKEN: 'x',
    });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/^error: cannot reach the fleet manager: .*ECONNREFUSED/);
  });

  it('a viewer token reads but is refused on mutations (403 with the detail)', async () => {
    const created = await cli(['tokens', 'create', 'dashboards', '--role', 'viewer', '-o', 'json']);
    expect(created.code).toBe(0);
    const { token } = JSON.parse(created.stdout) as { token: string };
    const asViewer = { TPFLEET_URL: app.baseUrl, TPFLEET_TOKEN: token };

    const read = await cli(['boards', 'list', '-l', 'rack=r1', '-o', 'name'], undefined, asViewer);
    expect(read).toMatchObject({ code: 0, stdout: 'fw1\nfw2\nfw3\n' });

    const power = await cli(['nodes', 'power', 'on', 'fw1', '1'], undefined, asViewer);
    expect(power.code).toBe(1);
    expect(power.stderr).toMatch(/^error: .*operator.*\(HTTP 403\)\n$/);
    expect(await rack.metrics(1)).toMatch(/bmcd_node_power_state\{node="node1"\} 0/);

    const label = await cli(['boards', 'label', 'fw1', 'owner=me'], undefined, asViewer);
    expect(label.code).toBe(1);
    expect(label.stderr).toContain('(HTTP 403)');
  });

  it('a stored token is never sent to another URL named by TPFLEET_URL', async () => {
    const res = await cli(['boards', 'list'], undefined, { TPFLEET_URL: 'http://127.0.0.1:9' });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^error: no token for http:\/\/127\.0\.0\.1:9/);
  });

  it('prints completion scripts and completes from the command tree', async () => {
    const bash = await cli(['completion', 'bash']);
    expect(bash.stdout).toContain('complete -o default -F _tpfleet tpfleet');
    expect((await cli(['completion', 'fish'])).stdout).toContain('complete -c tpfleet');
    expect((await cli(['completion', 'zsh'])).stdout).toContain('compdef _tpfleet tpfleet');
    expect((await cli(['__complete', 'rollouts', 'w'])).stdout).toBe('watch\n');
    expect((await cli(['__complete', 'boards', 'list', '--sel'])).stdout).toBe('--selector\n');
    expect((await cli(['completion', 'tcsh'])).code).toBe(2);
  });
  it('the answers of rollouts, the catalogue, tokens, sources and installs are what the OpenAPI document says', async () => {
    const doc = (await api('GET', '/api/openapi.json')).body as Document;
    const check = responseChecker(doc);
    const errors: string[] = [];
    const expectDocumented = (method: string, path: string, res: { status: number; body: unknown }) =>
      errors.push(...check(method, path, res.status, res.body));

    const list = await api('GET', '/api/v1/firmware/rollouts');
    expect(list.body.items.length).toBeGreaterThan(0);
    expectDocumented('GET', '/api/v1/firmware/rollouts', list);
    const id = list.body.items[0].id as string;
    expectDocumented('GET', '/api/v1/firmware/rollouts/{id}', await api('GET', `/api/v1/firmware/rollouts/${id}`));
    const rollout = { version: TARGET, source: 'test-http', selector: { labels: 'rack=r2' } };
    const plan = await api('POST', '/api/v1/firmware/rollouts', { ...rollout, name: 'plan', dry_run: true });
    expect(plan.status).toBe(200);
    expect(plan.body.boards.length).toBe(3);
    errors.push(...check('POST', '/api/v1/firmware/rollouts', 201, plan.body)); // one schema for both answers
    const manual = await api('POST', '/api/v1/firmware/rollouts', { ...rollout, name: 'manual', start: 'manual' });
    expect(manual.status).toBe(201);
    expectDocumented('POST', '/api/v1/firmware/rollouts', manual);
    const fw2 = (await api('GET', '/api/v1/boards?q=fw2')).body.items[0].id as string;
    const action = await api('POST', `/api/v1/boards/${fw2}/nodes/2/actions`, { action: 'power_off' });
    expect(action.body).toMatchObject({ node: 2, action: 'power_off', status: 'succeeded' });
    expectDocumented('POST', '/api/v1/boards/{id}/nodes/{node}/actions', action);
    const thermal = await api('GET', `/api/v1/boards/${fw2}/thermal`);
    expect(thermal.body.items.length).toBeGreaterThan(0);
    expectDocumented('GET', '/api/v1/boards/{id}/thermal', thermal);
    const cancelled = await api('POST', `/api/v1/firmware/rollouts/${manual.body.id}/cancel`);
    expect(cancelled.body.status).toBe('cancelled');
    expectDocumented('POST', '/api/v1/firmware/rollouts/{id}/{action}', cancelled);

    const catalogue = await api('GET', '/api/v1/firmware/catalogue?selector=rack%3Dr1');
    expect(catalogue.body.answered).toBe(3);
    expect(catalogue.body.versions.length).toBeGreaterThan(0);
    expectDocumented('GET', '/api/v1/firmware/catalogue', catalogue);

    const token = await api('POST', '/api/v1/tokens', { name: 'schema-check', role: 'viewer', expires_in_days: 1 });
    expectDocumented('POST', '/api/v1/tokens', token);
    expectDocumented('GET', '/api/v1/tokens', await api('GET', '/api/v1/tokens'));
    expectDocumented('DELETE', '/api/v1/tokens/{id}', await api('DELETE', `/api/v1/tokens/${token.body.id}`));
    const sources = await api('GET', '/api/v1/firmware/sources');
    expect(sources.body.sources[0]).toMatchObject({ id: 'test-http' });
    expectDocumented('GET', '/api/v1/firmware/sources', sources);
    const put = await api('PUT', '/api/v1/firmware/sources', { sources: sources.body.sources });
    expect(put.body.revision).toBe(sources.body.revision + 1);
    expectDocumented('PUT', '/api/v1/firmware/sources', put);
    const dryPush = await api('POST', '/api/v1/firmware/sources/push', { selector: 'rack=r1', dry_run: true });
    expect(dryPush.body.boards).toHaveLength(3);
    expectDocumented('POST', '/api/v1/firmware/sources/push', dryPush);
    const push = await api('POST', '/api/v1/firmware/sources/push', { selector: 'rack=r1' });
    expectDocumented('POST', '/api/v1/firmware/sources/push', push);
    const pushed = await waitFor(
      'the sources pushed to r1',
      () => api('GET', `/api/v1/firmware/sources/pushes/${push.body.id}`),
      (r) => r.body.summary?.succeeded === 3,
      30_000,
    );
    expectDocumented('GET', '/api/v1/firmware/sources/pushes/{id}', pushed.value);
    // fw1 already runs the target: a stage-only install that finishes at once.
    const fw1 = (await api('GET', '/api/v1/boards?q=fw1')).body.items[0].id as string;
    const install = await api('POST', `/api/v1/boards/${fw1}/firmware/install`, {
      source: 'test-http',
      version: TARGET,
      activate: false,
    });
    expect(install.status).toBe(202);
    expectDocumented('POST', '/api/v1/boards/{id}/firmware/install', install);
    const installed = await waitFor(
      'the install on fw1 to finish',
      () => api('GET', `/api/v1/firmware/installs/${install.body.install_id}`),
      (r) => r.body.finished_at !== null,
      60_000,
    );
    expectDocumented('GET', '/api/v1/firmware/installs/{id}', installed.value);
    expectDocumented('GET', '/api/openapi.json', { status: 200, body: doc });
    for (const path of ['/healthz', '/readyz']) {
      expectDocumented('GET', path, await api('GET', path));
    }
    expect(errors).toEqual([]);
    // The checker is not blind: a body missing a documented field is refused.
    expect(check('GET', '/api/v1/firmware/rollouts/{id}', 200, { ...cancelled.body, waves: undefined })).not.toEqual(
      [],
    );
  });

  it('config push sets the boards’ hostnames; config restore puts one back, with a job event on events tail', async () => {
    const boardClient = new BoardClient({ baseUrl: rack.boardUrl(6) });
    const fw6 = (await api('GET', '/api/v1/boards?q=fw6')).body.items[0].id as string;
    const backup = await api('POST', `/api/v1/boards/${fw6}/config/backups`);
    expect(backup.status).toBe(202);
    await waitFor(
      'the first backup of fw6',
      () => api('GET', `/api/v1/boards/${fw6}/config/versions`),
      (r) => r.body.items?.length === 1,
      20_000,
    );
    const original = (await boardClient.getHostname()).hostname;
    const template = await api('POST', '/api/v1/config-templates', {
      name: 'cli-host',
      hostname_pattern: 'cli-{name}',
    });
    expect(template.status).toBe(201);

    const dry = await cli(['config', 'push', 'cli-host', '-l', 'rack=r2', '--dry-run', '-o', 'json']);
    expect(dry.code).toBe(0);
    const planned = JSON.parse(dry.stdout) as { boards: Array<{ name: string; changes: Array<{ to: unknown }> }> };
    expect(planned.boards.map((b) => [b.name, b.changes.map((c) => c.to)])).toEqual([
      ['fw4', ['cli-fw4']],
      ['fw5', ['cli-fw5']],
      ['fw6', ['cli-fw6']],
    ]);
    expect((await boardClient.getHostname()).hostname).toBe(original); // a dry run sends nothing
    const unconfirmed = await cli(['config', 'push', 'cli-host', '-l', 'rack=r2']);
    expect(unconfirmed).toMatchObject({ code: 2, stdout: '' });
    expect(unconfirmed.stderr).toContain('pass --yes to confirm');
    const missing = await cli(['config', 'push', 'no-such-template', '-l', 'rack=r2', '--yes']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: .*no-such-template/);

    const pushed = await cli(['config', 'push', 'cli-host', '-l', 'rack=r2', '--yes', '-o', 'json']);
    expect(pushed).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(pushed.stdout).boards).toHaveLength(3);
    await waitFor(
      'fw6 renamed by the push',
      () => boardClient.getHostname(),
      (h) => h.hostname === 'cli-fw6',
      30_000,
    );

    const tail = startCli(['events', 'tail', '--types', 'job', '-o', 'json'], env);
    await new Promise((r) => setTimeout(r, 1500)); // the stream is open before the action
    const restored = await cli(['config', 'restore', 'fw6', '1', '--fields', 'hostname', '--yes', '-o', 'json']);
    expect(restored).toMatchObject({ code: 0, stderr: '' });
    const restore = JSON.parse(restored.stdout) as { id: string; status: string };
    expect(restore.status).toBe('pending');
    await waitFor(
      'fw6 restored',
      () => boardClient.getHostname(),
      (h) => h.hostname === original,
      30_000,
    );
    await tail.waitForOutput(/"type":"job","action":"completed"/);
    const ended = await tail.stop('SIGINT');
    expect(ended).toMatchObject({ code: 0, stderr: '' });
    const events = ended.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; action: string });
    expect(events.some((e) => e.type === 'job' && e.action === 'completed')).toBe(true);

    const diff = await api('GET', `/api/v1/boards/${fw6}/config/diff?from=1&to=live`);
    expect(diff.body).toMatchObject({ identical: true, changes: [] });
    const check = responseChecker((await api('GET', '/api/openapi.json')).body as Document);
    expect(check('GET', '/api/v1/boards/{id}/config/diff', 200, diff.body)).toEqual([]);
    // The template and drift answers are what the document says.
    const answers: Array<[string, string, { status: number; body: unknown }]> = [
      ['POST', '/api/v1/config-templates', template],
      ['GET', '/api/v1/config-templates', await api('GET', '/api/v1/config-templates')],
      ['GET', '/api/v1/config-templates/{id}', await api('GET', `/api/v1/config-templates/${template.body.id}`)],
      [
        'PUT',
        '/api/v1/config-templates/{id}',
        await api('PUT', `/api/v1/config-templates/${template.body.id}`, {
          name: 'cli-host',
          hostname_pattern: 'cli-{name}',
          ntp_servers: ['ntp1.example.net'],
        }),
      ],
      ['GET', '/api/v1/config-drift', await api('GET', '/api/v1/config-drift')],
    ];
    expect((answers[4]![2].body as { items: unknown[] }).items.length).toBe(3); // the pushed boards are bound
    const policy = await api('GET', '/api/v1/config-backups/policy');
    const status = await api('GET', `/api/v1/boards/${fw6}/config`);
    expect(status.body).toMatchObject({ name: 'fw6', template: { name: 'cli-host' } });
    const { value: restores } = await waitFor(
      'the restore reported applied',
      () => api('GET', `/api/v1/boards/${fw6}/config/restores`),
      (r) => r.body.items?.[0]?.status === 'applied',
      20_000,
    );
    expect(restores.body.items[0].id).toBe(restore.id);
    answers.push(
      ['POST', '/api/v1/boards/{id}/config/backups', backup],
      ['GET', '/api/v1/boards/{id}/config', status],
      [
        'PATCH',
        '/api/v1/boards/{id}/config',
        await api('PATCH', `/api/v1/boards/${fw6}/config`, { auto_reapply: false }),
      ],
      ['GET', '/api/v1/boards/{id}/config/restores', restores],
      ['POST', '/api/v1/config-backups/run', await api('POST', '/api/v1/config-backups/run', { selector: 'rack=r2' })],
      ['GET', '/api/v1/config-backups/policy', policy],
      [
        'PATCH',
        '/api/v1/config-backups/policy',
        await api('PATCH', '/api/v1/config-backups/policy', { keep_versions: policy.body.keep_versions }),
      ],
    );
    // An archive of r2’s versions imported back: every line a duplicate.
    const archive = await fetch(`${app.baseUrl}/api/v1/config-backups/export?selector=rack%3Dr2`, {
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    });
    expect(archive.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const imported = await api('POST', '/api/v1/config-backups/import', { archive: await archive.text() });
    expect(imported.body).toMatchObject({ imported: 0, errors: [] });
    expect(imported.body.duplicates).toBeGreaterThan(0);
    answers.push(['POST', '/api/v1/config-backups/import', imported]);
    expect(answers.flatMap(([method, path, res]) => check(method, path, res.status, res.body))).toEqual([]);
    const cliDiff = await cli(['config', 'diff', 'fw6', '--from', '1', '-o', 'json']);
    expect(JSON.parse(cliDiff.stdout)).toMatchObject({ identical: true, changes: [] });

    const noVersion = await cli(['config', 'restore', 'fw6', '99', '--yes']);
    expect(noVersion.code).toBe(1);
    expect(noVersion.stderr).toContain('(HTTP 404)');
    const badField = await cli(['config', 'restore', 'fw6', '1', '--fields', 'colour', '--yes']);
    expect(badField).toMatchObject({ code: 2, stderr: expect.stringContaining('--fields: "colour"') });
    expect(await cli(['config', 'restore', 'fw6', 'latest', '--yes'])).toMatchObject({
      code: 2,
      stderr: 'error: <version>: expected a whole number from 1, got "latest"\n',
    });
  }, 120_000);

  it('silences alerts by label for a while; a silence without a matcher or with a bad duration is a usage error', async () => {
    const res = await cli([
      'alerts',
      'silence',
      '--match',
      'board=fw1',
      '--for',
      '30m',
      '-m',
      'r1 maintenance',
      '-o',
      'json',
    ]);
    expect(res).toMatchObject({ code: 0, stderr: '' });
    const silence = JSON.parse(res.stdout) as { id: string };
    const stored = await api('GET', `/api/v1/silences/${silence.id}`);
    expect(stored.body).toMatchObject({
      state: 'active',
      comment: 'r1 maintenance',
      matchers: [{ name: 'board', value: 'fw1', is_regex: false }],
    });
    const minutes = (Date.parse(stored.body.ends_at) - Date.parse(stored.body.starts_at)) / 60_000;
    expect(minutes).toBe(30);
    expect((await cli(['alerts', 'silences', '-o', 'name'])).stdout).toContain(silence.id);
    expect(await cli(['alerts', 'silence', '-m', 'x'])).toMatchObject({ code: 2 });
    expect(await cli(['alerts', 'silence', '--match', 'board=fw1', '--for', 'soon', '-m', 'x'])).toMatchObject({
      code: 2,
      stderr: 'error: duration "soon": expected e.g. 30m, 2h or 1d\n',
    });
  });

  it('polls a board now; an unknown board is refused', async () => {
    const res = await cli(['boards', 'poll', 'fw2', '-o', 'json']);
    expect(res).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(res.stdout)).toMatchObject({ name: 'fw2', state: 'online' });
    expect(await cli(['boards', 'poll', 'nope'])).toMatchObject({ code: 1, stderr: 'error: no board named "nope"\n' });
  });

  it('scans a range and registers the boards that answer', async () => {
    const port = new URL(rack.url).port;
    const args = ['boards', 'scan', '127.0.0.1', '--scheme', 'http', '--port', port, '--port', '9'];
    const paths = ['--path', '/boards/8', '--path', '/boards/9', '--path', '/boards/1', '--label', 'found=cli'];
    const dry = await cli([...args, ...paths, '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toBe('probed 6: 3 answered (1 already registered), registered none\n');

    const res = await cli([...args, ...paths, '-o', 'json']);
    expect(res).toMatchObject({ code: 0, stderr: '' });
    const scanned = JSON.parse(res.stdout);
    const check = responseChecker((await api('GET', '/api/openapi.json')).body as Document);
    expect(check('POST', '/api/v1/boards/scan', 200, scanned)).toEqual([]);
    const names = (scanned.registered as Array<{ name: string }>).map((b) => b.name);
    expect(names).toHaveLength(2);
    const listed = await cli(['boards', 'list', '-l', 'found=cli', '-o', 'name']);
    expect(listed.stdout.trimEnd().split('\n').sort()).toEqual([...names].sort());
    expect((await cli([...args, ...paths])).stdout).toBe(
      'probed 6: 3 answered (3 already registered), registered none\n',
    );
    expect((await cli(['boards', 'scan', '127.0.0.1', '--scheme', 'ftp'])).code).toBe(2);
    const refused = await cli(['boards', 'scan', '127.0.0.1', '10.0.0.1']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('(HTTP 400)');
  });

  it('acknowledges a firing alert: it shows acknowledged; an unknown alert is refused with the detail', async () => {
    // A rule that fires at once on the scanned boards (any reading above 1 °C).
    const rule = await api('POST', '/api/v1/alert-rules', {
      name: 'cli_warm',
      kind: 'temperature',
      severity: 'info',
      threshold: 1,
      dwell_seconds: 0,
      selector: 'found=cli',
    });
    expect(rule.status).toBe(201);
    const firing = await waitFor(
      'a cli_warm alert firing',
      () => api('GET', '/api/v1/alerts?rule=cli_warm&status=firing'),
      (r) => r.body.items?.length > 0,
      30_000,
    );
    const id = firing.value.body.items[0].id as string;
    const listed = await cli(['alerts', 'list', '--unacknowledged', '-o', 'name']);
    expect(listed.stdout.split('\n')).toContain(id);

    const ack = await cli(['alerts', 'ack', id, '-m', 'looking at it', '-o', 'json']);
    expect(ack).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(ack.stdout)).toMatchObject({
      id,
      acknowledged: { by: expect.any(String), comment: 'looking at it' },
    });
    expect((await api('GET', `/api/v1/alerts/${id}`)).body.acknowledged).toMatchObject({ comment: 'looking at it' });
    expect((await cli(['alerts', 'list', '--unacknowledged', '-o', 'name'])).stdout.split('\n')).not.toContain(id);

    const missing = '00000000-0000-4000-8000-000000000000';
    const unknown = await cli(['alerts', 'ack', missing]);
    const direct = await api('POST', `/api/v1/alerts/${missing}/acknowledge`, {});
    expect(unknown).toMatchObject({ code: 1, stderr: `error: ${direct.body.detail} (HTTP ${direct.status})\n` });
    expect(direct.status).toBe(404);
    expect((await cli(['alerts', 'ack'])).code).toBe(2);
    expect((await api('DELETE', `/api/v1/alert-rules/${rule.body.id}`)).status).toBeLessThan(300);

    // A receiver nobody listens on: the test notification fails, and the delivery log says so.
    const receiver = await api('POST', '/api/v1/alert-receivers', {
      name: 'cli-hook',
      type: 'webhook',
      url: `http://127.0.0.1:${await closedPort()}/hook`,
    });
    expect(receiver.status).toBe(201);
    const sent = await api('POST', `/api/v1/alert-receivers/${receiver.body.id}/test`);
    expect(sent.body).toMatchObject({ ok: false, error: expect.any(String) });
    const deliveries = await api('GET', `/api/v1/alert-receivers/${receiver.body.id}/deliveries`);
    expect(deliveries.body.items[0]).toMatchObject({ ok: false, test: true });
    const check = responseChecker((await api('GET', '/api/openapi.json')).body as Document);
    expect([
      ...check('POST', '/api/v1/alert-receivers/{id}/test', 200, sent.body),
      ...check('GET', '/api/v1/alert-receivers/{id}/deliveries', 200, deliveries.body),
    ]).toEqual([]);
  }, 60_000);

  it('decommissions a board after confirmation: it leaves the list', async () => {
    const unconfirmed = await cli(['boards', 'decommission', 'cli-7']);
    expect(unconfirmed.code).toBe(2);
    const res = await cli(['boards', 'decommission', 'cli-7', '--yes', '-o', 'json']);
    expect(res).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(res.stdout)).toMatchObject({ name: 'cli-7', state: 'decommissioned' });
    expect((await cli(['boards', 'list', '-o', 'name'])).stdout.split('\n')).not.toContain('cli-7');
    expect((await cli(['boards', 'list', '--all', '-o', 'name'])).stdout.split('\n')).toContain('cli-7');
    const unknown = await cli(['boards', 'decommission', 'cli-77', '--yes']);
    expect(unknown).toMatchObject({ code: 1, stderr: 'error: no board named "cli-77"\n' });
  });
});
