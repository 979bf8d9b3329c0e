// Issue #14 (Low): receivers and scans do not reach loopback, link-local or cloud metadata addresses unless
// OUTBOUND_ALLOWED_NETWORKS names them, and a receiver URL carrying user:password@ is refused. Every refusal is a 400
// problem naming the field. A fleet manager with the production default (no allow-list), real PostgreSQL, and a
// real HTTP receiver on loopback that must receive nothing.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { apiClient } from '../boards/api.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.js';

describe('outbound policy (default: no allow-list)', () => {
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  let hook: WebhookReceiver;

  beforeAll(async () => {
    app = await startTestApp({ env: { OUTBOUND_ALLOWED_NETWORKS: '' } });
    api = apiClient(app.baseUrl);
    hook = await startWebhookReceiver('loopback-secret-0123456789');
  });

  afterAll(async () => {
    await hook?.stop();
    await app?.close();
  });

  const refusedUrls: Array<[string, string, RegExp]> = [
    ['cloud metadata', 'http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is a cloud metadata address/],
    ['metadata as a decimal host', 'http://2852039166/', /169\.254\.169\.254 is a cloud metadata address/],
    ['IPv4-mapped metadata', 'http://[::ffff:169.254.169.254]/', /cloud metadata address/],
    ['AWS IPv6 metadata', 'http://[fd00:ec2::254]/', /cloud metadata address/],
    ['link-local', 'http://169.254.10.1:9093', /169\.254\.10\.1 is a link-local address/],
    ['IPv6 link-local', 'http://[fe80::1]:9093', /is a link-local address/],
    ['loopback', 'http://127.0.0.1:9093', /127\.0\.0\.1 is a loopback address/],
    ['IPv6 loopback', 'http://[::1]:9093', /is a loopback address/],
    ['localhost', 'http://localhost:9093', /localhost is a loopback address/],
    ['user:password@', 'https://ops:hunter2@alerts.example.com/hook', /user:password@ is refused/],
  ];

  it.each(refusedUrls)('a receiver on %s is refused with 400 naming url', async (_what, url, detail) => {
    for (const type of ['webhook', 'alertmanager']) {
      const res = await api('POST', '/api/v1/alert-receivers', { name: `r-${type}`, type, url });
      expect(res.status).toBe(400);
      expect(res.type).toContain('application/problem+json');
      expect(res.body.detail).toMatch(/^the request is not valid: url: /);
      expect(res.body.detail).toMatch(detail);
      expect(res.body.errors).toEqual([{ path: 'url', message: expect.stringMatching(detail) }]);
      expect(JSON.stringify(res.body)).not.toContain('hunter2');
    }
    expect((await api('GET', '/api/v1/alert-receivers')).body.items).toEqual([]);
  });

  it('names the allow-list in the refusal, and refuses a change of url to a denied address', async () => {
    const ok = await api('POST', '/api/v1/alert-receivers', {
      name: 'elsewhere',
      type: 'webhook',
      url: 'http://192.0.2.10/hook', // TEST-NET-1: allowed, nothing answers
    });
    expect(ok.status).toBe(201);
    const res = await api('PATCH', `/api/v1/alert-receivers/${ok.body.id}`, { url: 'http://169.254.169.254/' });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/url: .*OUTBOUND_ALLOWED_NETWORKS/);
    expect((await api('GET', `/api/v1/alert-receivers/${ok.body.id}`)).body.url).toBe('http://192.0.2.10/hook');
    expect((await api('DELETE', `/api/v1/alert-receivers/${ok.body.id}`)).status).toBe(204);
  });

  it('a receiver stored before the policy is not sent to: the delivery log says why', async () => {
    // As if created by an older version: straight into the table.
    const sql = new pg.Client({ connectionString: app.db.url });
    await sql.connect();
    try {
      await sql.query(
        `INSERT INTO "AlertReceiver" ("id", "name", "type", "url", "updatedAt") VALUES (gen_random_uuid(), 'legacy', 'webhook', $1, now())`,
        [hook.url],
      );
    } finally {
      await sql.end();
    }
    const legacy = (
      (await api('GET', '/api/v1/alert-receivers')).body.items as Array<{ id: string; name: string }>
    ).find((r) => r.name === 'legacy')!;
    const res = await api('POST', `/api/v1/alert-receivers/${legacy.id}/test`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ok: false, status: null });
    expect(res.body.error).toMatch(/^not sent: 127\.0\.0\.1 is a loopback address/);
    expect(hook.deliveries).toEqual([]);
  });

  it('a node image from a metadata or link-local address is refused; loopback and userinfo are not', async () => {
    const board = await api('POST', '/api/v1/boards', { name: 'imaged', base_url: 'http://127.0.0.1:9' });
    expect(board.status).toBe(201);
    const image = (url: string) => api('POST', `/api/v1/boards/${board.body.id}/nodes/1/image`, { url });
    for (const url of ['http://169.254.169.254/latest/meta-data/iam/x.img', 'http://[fe80::1]/os.img']) {
      const res = await image(url);
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([
        { path: 'url', message: expect.stringMatching(/address, which a node image download may not reach/) },
      ]);
    }
    // Past the address check: refused only because this board was never reached (its dialect is unknown).
    const local = await image('http://user:signed@127.0.0.1:8080/os.img');
    expect(local.status).toBe(409);
    expect(local.body.detail).not.toMatch(/OUTBOUND_ALLOWED_NETWORKS/);
  });

  it('a scan of loopback or link-local addresses is refused with 400 naming the field', async () => {
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ from: '127.0.0.1' }, 'from', /127\.0\.0\.1 is a loopback address, which a scan may not reach/],
      [{ from: '169.254.169.254' }, 'from', /cloud metadata address/],
      [
        { from: '169.253.255.254', to: '169.254.0.1' },
        'from',
        /the range 169\.253\.255\.254–169\.254\.0\.1 includes 169\.254\.0\.0 is a link-local/,
      ],
    ];
    for (const [body, field, detail] of cases) {
      const res = await api('POST', '/api/v1/boards/scan', { ports: [9], scheme: 'http', dry_run: true, ...body });
      expect(res.status).toBe(400);
      expect(res.type).toContain('application/problem+json');
      expect(res.body.errors).toEqual([{ path: field, message: expect.stringMatching(detail) }]);
      expect(res.body.detail).toContain(`${field}: `);
    }
  });
});
