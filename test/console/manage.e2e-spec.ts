// The console's management pages in a real browser (Debian's Chromium via playwright-core) against the fleet manager,
// real PostgreSQL and Redis and a `board-agent rack` process: alert rules and receivers (admin; a receiver's secret is
// write-only), silencing an alert, tokens (the secret shown once, revocation), a config restore with its per-field
// diff, bulk node actions over ticked boards or every board a filter matches, and what a viewer is not offered.
// Every refusal's detail must reach the person.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { BoardClient } from '@tpfleet/board-api/client';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { apiClient, waitFor } from '../boards/api.js';
import { startRack, type RackProcess } from '../boards/rack.js';
import { startTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../support/app.js';
import { launchBrowser, requireChromium, type TestBrowser } from '../support/browser.js';
import { REFRESH_CONSOLE_SCREENSHOTS } from '../support/env.js';
import { requireRedis } from '../support/redis.js';

const redis = requireRedis();
const chromium = requireChromium();
const BOARDS = 3;
const SECRET = 'receiver-signing-secret-0123456789';
const SHOTS = REFRESH_CONSOLE_SCREENSHOTS
  ? join(process.cwd(), 'docs', 'console')
  : join(tmpdir(), `tpfleet-console-shots-${process.pid}`);

const run = (fn: () => void) => redis.describe('the console’s management pages', () => chromium.describe('', fn));

run(() => {
  let rack: RackProcess;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  let browser: TestBrowser;
  let page: Page;
  const ids = new Map<number, string>();

  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const boardClient = (i: number) =>
    new BoardClient({ baseUrl: rack.boardUrl(i), credentials: { username: 'root', password: 'turing' } });

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    rack = await startRack(BOARDS);
    app = await startTestApp({
      redisUrl: redis.url,
      env: { POLL_INTERVAL_SECONDS: '2', POLL_SLOW_INTERVAL_SECONDS: '5', POLL_TIMEOUT_MS: '5000' },
    });
    api = apiClient(app.baseUrl);
    const res = await api('POST', '/api/v1/boards/bulk', {
      boards: Array.from({ length: BOARDS }, (_, k) => ({
        name: `m${k + 1}`,
        base_url: rack.boardUrl(k + 1),
        rack: 'r1',
        slot: k + 1,
        labels: { group: k === 0 ? 'hot' : 'cool' },
        credentials: { username: 'root', password: 'turing' },
      })),
    });
    expect(res.status).toBe(201);
    (res.body.items as Array<{ id: string }>).forEach((b, k) => ids.set(k + 1, b.id));
    await waitFor(
      'boards online',
      () => api('GET', '/api/v1/boards?state=online'),
      (r) => r.body.items.length === BOARDS,
      60_000,
      250,
    );
    browser = await launchBrowser();
    page = await browser.context.newPage();
    await page.goto(`${app.baseUrl}/console/`);
    await page.getByLabel('API token').fill(TEST_ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('bootstrap admin').waitFor();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await rack?.stop();
  });

  it('an admin creates and edits a receiver; its secret is never shown back, and a refusal’s detail is', async () => {
    await page.getByRole('link', { name: 'Alerts' }).click();
    const section = page.getByRole('region', { name: 'Receivers' });
    await section.getByText('No receiver').waitFor();
    await section.getByRole('button', { name: 'New receiver' }).click();
    const form = page.getByRole('form', { name: 'New receiver' });
    await form.getByLabel('Name').fill('ops-hook');
    await form.getByLabel('URL').fill('ftp://hooks.example/tpfleet');
    await form.getByLabel('Signing secret', { exact: true }).fill(SECRET);
    await form.getByRole('button', { name: 'Create receiver' }).click();
    await form.getByText('url: expected an http:// or https:// URL').waitFor();
    await form.getByLabel('URL').fill('http://127.0.0.1:9/hook');
    await form.getByRole('button', { name: 'Create receiver' }).click();
    await page.getByText('Receiver ops-hook created').waitFor();
    const row = section.locator('tr[data-receiver="ops-hook"]');
    await row.getByText('signed').waitFor();
    await expect(row.textContent()).resolves.toContain('from warning');
    const [stored] = (await api('GET', '/api/v1/alert-receivers')).body.items;
    expect(stored).toMatchObject({ name: 'ops-hook', url: 'http://127.0.0.1:9/hook', has_secret: true });
    expect(JSON.stringify(stored)).not.toContain(SECRET);

    await row.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('form', { name: 'Edit receiver ops-hook' });
    // The form offers to replace the secret, never shows it.
    await expect(edit.getByLabel('Signing secret', { exact: true }).inputValue()).resolves.toBe('');
    await expect(page.content()).resolves.not.toContain(SECRET);
    await edit.getByLabel('Minimum severity').selectOption('critical');
    await edit.getByRole('button', { name: 'Save receiver' }).click();
    await page.getByText('Receiver ops-hook saved').waitFor();
    await row.getByText('from critical').waitFor();
    const after = (await api('GET', `/api/v1/alert-receivers/${stored.id}`)).body;
    expect(after).toMatchObject({ min_severity: 'critical', has_secret: true }); // a blank secret kept the old one
    await shot('alert-receivers');
  }, 60_000);

  it('an admin creates and edits a rule, and sees the server’s refusal of a rule that cannot work', async () => {
    const section = page.getByRole('region', { name: 'Rules' });
    await section.getByRole('button', { name: 'New rule' }).click();
    const form = page.getByRole('form', { name: 'New rule' });
    await form.getByLabel('Name').fill('console_hot');
    await form.getByLabel('Description').fill('the hot group above 30 °C');
    await form.getByLabel('Board selector').fill('group=hot');
    // A temperature rule with neither a threshold nor a trip point to derive one from: refused, and told why.
    await form.getByRole('button', { name: 'Create rule' }).click();
    await form.getByText('threshold: a temperature rule needs threshold or threshold_from').waitFor();
    await form.getByRole('textbox', { name: 'Threshold', exact: true }).fill('95');
    await form.getByRole('button', { name: 'Create rule' }).click();
    await page.getByText('Rule console_hot created').waitFor();
    const row = section.locator('tr[data-rule="console_hot"]');
    await row.getByText('temperature > 95 on group=hot').waitFor();

    await row.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('form', { name: 'Edit rule console_hot' });
    await expect(edit.getByRole('textbox', { name: 'Threshold', exact: true }).inputValue()).resolves.toBe('95');
    // The simulated boards run at about 48 °C: 30 fires at once on the hot group's board.
    await edit.getByRole('textbox', { name: 'Threshold', exact: true }).fill('30');
    await edit.getByRole('button', { name: 'Save rule' }).click();
    await page.getByText('Rule console_hot saved').waitFor();
    await row.getByText('temperature > 30 on group=hot').waitFor();
    const rule = (await api('GET', '/api/v1/alert-rules')).body.items.find(
      (r: { name: string }) => r.name === 'console_hot',
    );
    expect(rule).toMatchObject({ threshold: 30, selector: 'group=hot', kind: 'temperature', enabled: true });
    await shot('alert-rules');
  }, 60_000);

  it('silences a firing alert for its rule and board, and lists the silence', async () => {
    await waitFor(
      'the alert to fire',
      () => api('GET', '/api/v1/alerts?status=firing&rule=console_hot'),
      (r) => r.body.items.length > 0,
      30_000,
      250,
    );
    await page.reload();
    const row = page.locator('tr', { hasText: 'console_hot' }).first();
    await row.getByRole('button', { name: 'Silence…' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText(`board_id="${ids.get(1)}"`).waitFor();
    await dialog.getByLabel('hours').fill('3');
    await dialog.getByRole('button', { name: 'Silence' }).click();
    await page.getByText('Silenced for 3 h').waitFor();
    const silences = page.getByRole('region', { name: 'Silences' });
    await silences.getByText('alertname="console_hot"').waitFor();
    await silences.getByText(`board_id="${ids.get(1)}"`).waitFor();
    const [silence] = (await api('GET', '/api/v1/silences?state=active')).body.items;
    expect(silence).toMatchObject({
      created_by: 'bootstrap admin',
      matchers: expect.arrayContaining([
        expect.objectContaining({ name: 'alertname', value: 'console_hot' }),
        expect.objectContaining({ name: 'board_id', value: ids.get(1) }),
      ]),
    });
    const hours = (Date.parse(silence.ends_at) - Date.now()) / 3600_000;
    expect(hours).toBeGreaterThan(2.9);
    expect(hours).toBeLessThanOrEqual(3);
  }, 60_000);

  it('creates a token whose secret is shown once and works, then revokes it', async () => {
    await page.getByRole('link', { name: 'Tokens' }).click();
    await page.getByLabel('Name').fill('ci-reader');
    await page.getByLabel('Role').selectOption('viewer');
    await page.getByRole('button', { name: 'Create token' }).click();
    const secret = (await page.locator('code.secret').textContent())!;
    expect(secret.length).toBeGreaterThan(20);
    expect((await api('GET', '/api/v1/boards', undefined, { token: secret })).status).toBe(200);
    const row = page.locator('tr', { hasText: 'ci-reader' });
    await row.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('Token revoked').waitFor();
    await row.getByText(/revoked/).waitFor();
    await waitFor(
      'the revoked token to be refused',
      () => api('GET', '/api/v1/boards', undefined, { token: secret }),
      (r) => r.status === 401,
      15_000,
      250,
    );
    // Shown once: a fresh visit of the page has no trace of it.
    await page.reload();
    await page.getByRole('cell', { name: 'ci-reader' }).waitFor();
    await expect(page.content()).resolves.not.toContain(secret);
  }, 60_000);

  it('restores a config version after showing its per-field diff, and the board’s hostname changes back', async () => {
    const id = ids.get(2)!;
    expect((await api('POST', `/api/v1/boards/${id}/config/backups`)).status).toBeLessThan(300);
    await waitFor(
      'the first config version',
      () => api('GET', `/api/v1/boards/${id}/config/versions`),
      (r) => r.body.items.length === 1,
      20_000,
      250,
    );
    const before = (await boardClient(2).getHostname()).hostname;
    await boardClient(2).setHostname('renamed-by-hand');
    await page.goto(`${app.baseUrl}/console/boards/${id}`);
    const v1 = page.locator('li[data-version="1"]');
    await v1.getByRole('button', { name: 'diff with live' }).click();
    await v1.getByText(`"${before}"`).waitFor();
    await v1.getByText('"renamed-by-hand"').waitFor();
    await v1.getByRole('button', { name: 'restore' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('Changes these fields on board m2 (live → v1)').waitFor();
    await expect(dialog.locator('.diff').textContent()).resolves.toBe(`hostname: "renamed-by-hand" → "${before}"`);
    await dialog.getByRole('button', { name: 'Restore' }).click();
    const outcome = page.getByRole('status', { name: 'Restore outcome' });
    await outcome.getByText('applied', { exact: true }).waitFor({ timeout: 30_000 });
    await page.getByText('m2: restore applied').waitFor();
    // The open diff follows the board: nothing differs from v1 any more.
    await v1.getByText('identical to the live config').waitFor({ timeout: 15_000 });
    expect((await boardClient(2).getHostname()).hostname).toBe(before);
    await shot('board-config-restore');
  }, 90_000);

  it('powers a node across selected boards, then across every board matching the filter, showing each board’s outcome', async () => {
    const node3 = async (i: number) =>
      (await api('GET', `/api/v1/boards/${ids.get(i)}/nodes`)).body.nodes[2].power as string;
    const settle = async (id: string) =>
      waitFor(
        'the bulk action',
        () => api('GET', `/api/v1/node-actions/${id}`),
        (r) => r.body.boards.every((b: { status: string }) => !['pending', 'running'].includes(b.status)),
        20_000,
        250,
      );
    // Node 3 off everywhere, whatever the simulator booted with.
    await settle(
      (await api('POST', '/api/v1/node-actions', { action: 'power_off', selector: '', nodes: [3] })).body.id,
    );
    await page.getByRole('link', { name: 'Boards', exact: true }).click();
    await page.getByRole('link', { name: 'm3' }).waitFor();
    await page.getByLabel('Select m1').check();
    await page.getByLabel('Select m3').check();
    const bar = page.getByRole('toolbar', { name: 'Bulk node actions' });
    await bar.getByText('2 boards').waitFor();
    await bar.getByLabel('Node').selectOption('3');
    await bar.getByRole('button', { name: 'Power on…' }).click();
    // The confirmation is the API's dry run: exactly the two ticked boards.
    const dialog = page.getByRole('dialog', { name: 'Power on node 3 on 2 boards?' });
    await dialog.waitFor(); // the dry run's answer, all boards at once
    await expect(dialog.locator('.bulk-boards li').allTextContents()).resolves.toEqual([
      'm1: will run ',
      'm3: will run ',
    ]);
    expect(await node3(1)).toBe('off'); // the dry run sent nothing
    await dialog.getByRole('button', { name: 'Power on' }).click();
    const outcome = bar.getByRole('status', { name: 'Bulk action outcome' });
    await outcome.getByText('Power on node 3: 2 succeeded').waitFor({ timeout: 20_000 });
    await expect(outcome.locator('li').allTextContents()).resolves.toEqual(['m1: succeeded ', 'm3: succeeded ']);
    expect([await node3(1), await node3(2), await node3(3)]).toEqual(['on', 'off', 'on']);

    // Every board the filter matches (group=cool: m2 and m3), not only the ticked rows.
    await page.getByLabel('Label selector').fill('group=cool');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/selector=group%3Dcool/);
    await expect(page.getByLabel('Select m3').isChecked()).resolves.toBe(false); // a new filter, a new selection
    await page.getByRole('button', { name: 'Select all matching boards' }).click();
    await bar.getByText('Every board matching the filter').waitFor();
    await bar.getByLabel('Node').selectOption('3');
    await bar.getByRole('button', { name: 'Power off…' }).click();
    const off = page.getByRole('dialog', { name: 'Power off node 3 on 2 boards?' });
    await off.waitFor();
    await expect(off.locator('.bulk-boards li').allTextContents()).resolves.toEqual(['m2: will run ', 'm3: will run ']);
    await shot('boards-bulk-confirm');
    await off.getByRole('button', { name: 'Power off' }).click();
    await outcome.getByText('Power off node 3: 2 succeeded').waitFor({ timeout: 20_000 });
    expect([await node3(1), await node3(2), await node3(3)]).toEqual(['on', 'off', 'off']);
    await shot('boards-bulk');
  }, 90_000);

  it('shows a viewer the rules read-only, and no receivers, silencing, token or bulk controls', async () => {
    const viewer = await api('POST', '/api/v1/tokens', { name: 'manage viewer', role: 'viewer' });
    const other = await launchBrowser();
    try {
      const p = await other.context.newPage();
      await p.goto(`${app.baseUrl}/console/alerts`);
      await p.getByLabel('API token').fill(viewer.body.token);
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.getByText('manage viewer').waitFor();
      await p.locator('tr[data-rule="console_hot"]').waitFor();
      await p.getByRole('region', { name: 'Silences' }).getByText('alertname="console_hot"').waitFor();
      await expect(p.getByRole('region', { name: 'Receivers' }).count()).resolves.toBe(0);
      await expect(
        p.getByRole('button', { name: /New rule|Edit|Delete|End silence|Silence|Acknowledge/ }).count(),
      ).resolves.toBe(0);
      await expect(p.getByRole('link', { name: 'Tokens' }).count()).resolves.toBe(0);
      await p.getByRole('link', { name: 'Boards', exact: true }).click();
      await p.getByRole('link', { name: 'm3' }).waitFor();
      await expect(p.getByRole('checkbox').count()).resolves.toBe(0);
      await expect(p.getByText('Select all matching boards').count()).resolves.toBe(0);
    } finally {
      await other.close();
    }
  }, 60_000);
});
