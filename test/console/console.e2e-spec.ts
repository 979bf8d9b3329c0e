// The operator console in a real browser (Debian's Chromium via playwright-core) against the fleet manager, real
// PostgreSQL and Redis, a `board-agent rack` process and a local firmware host: sign in, see the rack, open a
// board, power a node on and see the board confirm it, watch a rollout of 10 boards complete wave by wave,
// acknowledge an alert, and a viewer who is offered no control. Each page's screenshot goes to a temporary folder,
// or to docs/console/ with CONSOLE_SCREENSHOTS=1 (how the README's pictures are refreshed).
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { FakeFirmwareHost } from '../../apps/agent/test/support/firmware-server.js';
import { EventsController } from '../../src/events/events.controller.js';
import { apiClient, waitFor } from '../boards/api.js';
import { startRack, type RackProcess } from '../boards/rack.js';
import { pushSources, registerBoards, startFirmwareHost, TARGET, waitOnline, type Api } from '../firmware/helpers.js';
import { startTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../support/app.js';
import { launchBrowser, requireChromium, type TestBrowser } from '../support/browser.js';
import { REFRESH_CONSOLE_SCREENSHOTS } from '../support/env.js';
import { requireRedis } from '../support/redis.js';

const redis = requireRedis();
const chromium = requireChromium();
const BOARDS = 12;
// A test run must not rewrite tracked files: only an explicit refresh writes the README's screenshots.
const SHOTS = REFRESH_CONSOLE_SCREENSHOTS
  ? join(process.cwd(), 'docs', 'console')
  : join(tmpdir(), `tpfleet-console-shots-${process.pid}`);

const run = (fn: () => void) => redis.describe('the operator console in a browser', () => chromium.describe('', fn));

run(() => {
  let rack: RackProcess;
  let app: TestApp;
  let api: Api;
  let host: FakeFirmwareHost;
  let browser: TestBrowser;
  let page: Page;
  let ids: Map<number, string>;

  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    host = await startFirmwareHost();
    rack = await startRack(BOARDS, ['--boot-delay-ms', '300', '--trust-loopback']);
    app = await startTestApp({
      redisUrl: redis.url,
      env: { POLL_INTERVAL_SECONDS: '2', POLL_SLOW_INTERVAL_SECONDS: '5', POLL_TIMEOUT_MS: '5000' },
    });
    api = apiClient(app.baseUrl) as Api;
    ids = await registerBoards(
      api,
      rack,
      1,
      BOARDS,
      (i) => ({ group: i <= 10 ? 'wave' : 'spare' }),
      (i) => (i <= 8 ? 'rack-a' : 'rack-b'),
    );
    await waitOnline(api, '', BOARDS, 60_000);
    await pushSources(api, host, '', 60_000);
    browser = await launchBrowser();
    page = await browser.context.newPage();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await rack?.stop();
    await host?.close();
  });

  it('signs in with an API token, keeps it out of page storage, and shows every rack with its boards', async () => {
    await page.goto(`${app.baseUrl}/`);
    // The form renders once the console has asked whether a session exists: wait for it, do not sample it.
    await page.getByLabel('API token').waitFor();
    await shot('sign-in');
    await page.getByLabel('API token').fill(TEST_ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('.rack[data-rack="rack-a"] .tile').nth(7).waitFor();
    expect(page.url()).toBe(`${app.baseUrl}/console/`);
    await expect(page.locator('.rack[data-rack="rack-a"] .tile').count()).resolves.toBe(8);
    await expect(page.locator('.rack[data-rack="rack-b"] .tile').count()).resolves.toBe(4);
    await expect(page.locator('.count-online .count-n').textContent()).resolves.toBe(String(BOARDS));
    // The simulated boards report temperatures: each tile shows its hottest sensor.
    await page.locator('.tile.heat-cool, .tile.heat-warm, .tile.heat-hot').first().waitFor();
    await page.getByText('Live', { exact: true }).waitFor();
    // The session is an HttpOnly cookie: nothing in document.cookie, localStorage or sessionStorage.
    const stored = await page.evaluate<string>(
      'document.cookie + JSON.stringify(localStorage) + JSON.stringify(sessionStorage)',
    );
    expect(stored).not.toContain(TEST_ADMIN_TOKEN);
    expect(stored).toBe('{}{}');
    await shot('overview');
  }, 60_000);

  it('says so when the event stream is lost, and goes live again when it reconnects', async () => {
    await page.getByText('Live', { exact: true }).waitFor();
    // The server ends every open stream (as on a restart) while new ones are refused at the network level.
    await page.route('**/api/v1/events*', (route) => route.abort('connectionrefused'));
    app.app.get(EventsController).onModuleDestroy();
    try {
      await page.getByText('Connection lost, reconnecting…').waitFor({ timeout: 15_000 });
    } finally {
      await page.unroute('**/api/v1/events*');
    }
    await page.getByText('Live', { exact: true }).waitFor({ timeout: 20_000 });
  }, 45_000);

  it('lists boards in a sortable, filterable table whose filters live in the URL', async () => {
    await page.getByRole('link', { name: 'Boards', exact: true }).click();
    await page.getByRole('cell', { name: 'fw1', exact: true }).waitFor();
    await expect(page.locator('tbody tr').count()).resolves.toBe(BOARDS);
    await page.getByLabel('Label selector').fill('group=spare');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/selector=group%3Dspare/);
    await waitFor(
      'the filtered table',
      () => page.locator('tbody tr').count(),
      (n) => n === 2,
      10_000,
    );
    await shot('boards');
  }, 30_000);

  it('opens a board from its tile, powers a node on, and the board confirms it', async () => {
    const id = ids.get(3)!;
    // Start from node 2 off, whatever the simulator booted with.
    await api('POST', `/api/v1/boards/${id}/nodes/2/actions`, { action: 'power_off' });
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.locator(`a.tile[href="/console/boards/${id}"]`).click();
    await page.getByRole('heading', { name: 'fw3' }).waitFor();
    const node2 = page.locator('.node[data-node="2"]');
    await node2.getByText('off', { exact: true }).waitFor();
    await node2.getByRole('button', { name: 'Power on' }).click();
    await page.getByText('fw3: power on node 2 done (the board confirmed)').waitFor();
    await node2.getByText('on', { exact: true }).waitFor();
    const nodes = await api('GET', `/api/v1/boards/${id}/nodes`);
    expect(nodes.body.nodes[1]).toEqual({ node: 2, power: 'on' });
    // Powering off asks first, naming the node and the board.
    await node2.getByRole('button', { name: 'Power off' }).click();
    await page.getByRole('dialog').getByText('cuts power to node 2 of board fw3').waitFor();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    expect((await api('GET', `/api/v1/boards/${id}/nodes`)).body.nodes[1].power).toBe('on');
    await expect(page.getByLabel('USB routing').textContent()).resolves.toMatch(/on node \d, routed to the/);
    await page.locator('.chart canvas').first().waitFor();
    await page.getByText('power_on node 2: done').waitFor();
    await shot('board');
  }, 60_000);

  it('previews a rollout of 10 boards, starts it, and watches its waves complete live', async () => {
    await page.getByRole('link', { name: 'Rollouts' }).click();
    await page.getByText('No rollout yet.').waitFor();
    const form = page.locator('.create-rollout');
    await form.getByLabel('Name').fill('console-rollout');
    await form.getByLabel('Version').fill(TARGET);
    await form.getByLabel('Source').fill('test-http');
    await form.getByLabel('Label selector').fill('group=wave');
    await form.getByLabel('Canary boards').fill('2');
    await form.getByLabel('Waves after the canary').fill('3');
    await form.getByRole('button', { name: 'Preview' }).click();
    const preview = page.getByLabel('Preview');
    await preview.getByText('Preview: 10 boards will install, 0 skipped, 0 blocked').waitFor();
    await preview.getByText('wave 1: 2 · wave 2: 3 · wave 3: 5').waitFor();
    // The preview created nothing.
    expect((await api('GET', '/api/v1/firmware/rollouts')).body.items).toHaveLength(0);
    await preview.getByRole('button', { name: 'Start rollout' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText(`Installs ${TARGET} on 10 boards in 3 waves`).waitFor();
    await dialog.getByRole('button', { name: 'Start' }).click();
    const view = page.getByLabel('Rollout console-rollout');
    await view.locator('.wave').nth(2).waitFor();
    await shot('rollout-running');
    // No reload from here on: the page follows the rollout by itself.
    await view.locator('.badge.state-completed').waitFor({ timeout: 150_000 });
    await expect(view.locator('.wave-counts').allTextContents()).resolves.toEqual(['2/2 done', '3/3 done', '5/5 done']);
    const rollouts = (await api('GET', '/api/v1/firmware/rollouts')).body.items;
    expect(rollouts).toHaveLength(1);
    expect(rollouts[0]).toMatchObject({ name: 'console-rollout', status: 'completed' });
    await shot('rollouts');
  }, 180_000);

  it('acknowledges a firing alert in place, and shows it acknowledged', async () => {
    // A rule that fires at once on the two spare boards (the simulated boards run at about 48 °C).
    const rule = await api('POST', '/api/v1/alert-rules', {
      name: 'console_warm',
      kind: 'temperature',
      severity: 'warning',
      threshold: 30,
      dwell_seconds: 0,
      selector: 'group=spare',
      description: 'a spare board above 30 °C',
    });
    expect(rule.status).toBe(201);
    await waitFor(
      'the alert to fire',
      () => api('GET', '/api/v1/alerts?status=firing'),
      (r) => r.body.items.some((a: { rule: string }) => a.rule === 'console_warm'),
      30_000,
      250,
    );
    await page.getByRole('link', { name: 'Alerts' }).click();
    // The rule fires on both spare boards, each when its poll reads the temperature: the list can gain the second
    // alert at any moment, newest first. The row is held by its alert's id, not by its place in the list.
    const first = page.locator('tr', { hasText: 'console_warm' }).first();
    await first.getByRole('button', { name: 'Acknowledge' }).waitFor();
    const alertId = await first.getAttribute('data-alert');
    const row = page.locator(`tr[data-alert="${alertId}"]`);
    await row.getByRole('button', { name: 'Acknowledge' }).click();
    await page.getByText('Alert acknowledged').waitFor();
    await row.getByText('by bootstrap admin').waitFor();
    const alerts = (await api('GET', '/api/v1/alerts?status=firing')).body.items as Array<{
      id: string;
      acknowledged: { by: string } | null;
    }>;
    expect(alerts.find((a) => a.id === alertId)?.acknowledged?.by).toBe('bootstrap admin');
    // The overview lists it among the firing alerts.
    await page.getByRole('link', { name: 'Overview' }).click();
    await page
      .locator('aside')
      .getByText(/console_warm/)
      .first()
      .waitFor();
    await page.getByRole('link', { name: 'Alerts' }).click();
    await shot('alerts');
  }, 60_000);

  it('shows the tokens page to an admin, and a refusal’s detail to the person', async () => {
    await page.getByRole('link', { name: 'Tokens' }).click();
    await page.getByRole('cell', { name: 'bootstrap admin' }).waitFor();
    await shot('tokens');
    // A refusal: the server's own words, not a generic error.
    await page.goto(`${app.baseUrl}/console/boards/5a0c4c8e-0000-4000-8000-000000000000`);
    await page.getByText('no board with id 5a0c4c8e-0000-4000-8000-000000000000').waitFor();
  }, 30_000);

  it('offers a viewer no control that the API would refuse', async () => {
    const viewer = await api('POST', '/api/v1/tokens', { name: 'console viewer', role: 'viewer' });
    const other = await launchBrowser();
    try {
      const p = await other.context.newPage();
      await p.goto(`${app.baseUrl}/console/`);
      await p.getByLabel('API token').fill(viewer.body.token);
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.getByText('console viewer').waitFor();
      await p.locator('.rack .tile').first().waitFor();
      await expect(p.getByRole('link', { name: 'Tokens' }).count()).resolves.toBe(0);
      await p.goto(`${app.baseUrl}/console/boards/${ids.get(3)}`);
      await p.locator('.node[data-node="2"]').getByText('on', { exact: true }).waitFor();
      await p.getByRole('heading', { name: 'Config versions' }).waitFor();
      await expect(p.getByRole('button', { name: /Power on|Power off|Reset|restore/ }).count()).resolves.toBe(0);
      await p.goto(`${app.baseUrl}/console/rollouts`);
      await p.getByRole('link', { name: 'console-rollout' }).click();
      await p.getByLabel('Rollout console-rollout').waitFor();
      await expect(p.getByText('New rollout').count()).resolves.toBe(0);
      await expect(p.getByRole('button', { name: /Pause|Resume|Approve|Retry|Cancel|Preview/ }).count()).resolves.toBe(
        0,
      );
      await p.goto(`${app.baseUrl}/console/alerts`);
      await p.locator('tr', { hasText: 'console_warm' }).first().waitFor();
      await expect(p.getByRole('button', { name: /Acknowledge|Silence/ }).count()).resolves.toBe(0);
      await p.screenshot({ path: join(SHOTS, 'viewer-board.png'), fullPage: true });
    } finally {
      await other.close();
    }
  }, 60_000);
});
