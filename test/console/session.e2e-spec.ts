// The console's session and static files against a real fleet manager and PostgreSQL: the token-for-cookie
// exchange (HttpOnly, SameSite=Strict, /api), CSRF on changes made through the cookie, tampering, revocation and
// sign-out; the built console's caching and CSP, its SPA fallback, and the Swagger UI reference.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request } from 'undici';
import { startTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../support/app.js';
import { apiClient } from '../boards/api.js';

describe('console session and static files', () => {
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    app = await startTestApp();
    api = apiClient(app.baseUrl);
  }, 60_000);

  afterAll(async () => {
    await app?.close();
  });

  async function call(method: string, path: string, headers: Record<string, string> = {}, body?: unknown) {
    const res = await request(`${app.baseUrl}${path}`, {
      method: method as 'GET',
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    const json = text && String(res.headers['content-type']).includes('json') ? JSON.parse(text) : text;
    return { status: res.statusCode, headers: res.headers, body: json as any };
  }

  async function signIn(token: string) {
    const res = await call('POST', '/api/v1/session', {}, { token });
    const setCookie = String(res.headers['set-cookie'] ?? '');
    return { res, setCookie, cookie: setCookie.split(';')[0]! };
  }

  it('exchanges an API token for an HttpOnly, SameSite=Strict cookie scoped to /api, and names the role', async () => {
    const { res, setCookie, cookie } = await signIn(TEST_ADMIN_TOKEN);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'bootstrap admin', role: 'admin' });
    expect(res.body.csrf_token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(setCookie).toMatch(/^tpfleet_session=/);
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Strict/i);
    expect(setCookie).toMatch(/Path=\/api(;|$)/);
    // The cookie carries neither the token nor its hash in the clear.
    expect(cookie).not.toContain(TEST_ADMIN_TOKEN);
    const who = await call('GET', '/api/v1/session', { cookie });
    expect(who.status).toBe(200);
    expect(who.body).toMatchObject({ role: 'admin', csrf_token: res.body.csrf_token });
    expect((await call('GET', '/api/v1/boards', { cookie })).status).toBe(200);
  });

  it('refuses a wrong token with 401 and a detail, and sets no cookie', async () => {
    const { res, setCookie } = await signIn('tpf_not-a-real-token-at-all');
    expect(res.status).toBe(401);
    expect(res.body.detail).toMatch(/unknown, expired or revoked/);
    expect(setCookie).toBe('');
    const empty = await call('POST', '/api/v1/session', {}, { token: '' });
    expect(empty.status).toBe(400);
    expect(empty.body.errors[0].path).toBe('token');
  });

  it('refuses a change through the cookie without the session’s CSRF token, and accepts it with it', async () => {
    const { res, cookie } = await signIn(TEST_ADMIN_TOKEN);
    const body = { name: 'csrf-probe', role: 'viewer' };
    const none = await call('POST', '/api/v1/tokens', { cookie }, body);
    expect(none.status).toBe(403);
    expect(none.body.detail).toMatch(/CSRF token in x-csrf-token/);
    const wrong = await call('POST', '/api/v1/tokens', { cookie, 'x-csrf-token': 'x'.repeat(32) }, body);
    expect(wrong.status).toBe(403);
    const ok = await call('POST', '/api/v1/tokens', { cookie, 'x-csrf-token': res.body.csrf_token }, body);
    expect(ok.status).toBe(201);
    // The audit log names the token behind the session.
    const other = await signIn(TEST_ADMIN_TOKEN);
    expect(other.res.body.csrf_token).not.toBe(res.body.csrf_token);
    expect(
      (await call('POST', '/api/v1/tokens', { cookie, 'x-csrf-token': other.res.body.csrf_token }, body)).status,
    ).toBe(403);
  });

  it('treats a tampered cookie as no session', async () => {
    const { cookie } = await signIn(TEST_ADMIN_TOKEN);
    const value = cookie.slice('tpfleet_session='.length);
    // Change one character of the signature for certain (the second to last: the last may carry only padding bits).
    const at = value.length - 2;
    const flipped = value.slice(0, at) + (value[at] === 'A' ? 'B' : 'A') + value.slice(at + 1);
    expect(flipped).not.toBe(value);
    const res = await call('GET', '/api/v1/boards', { cookie: `tpfleet_session=${flipped}` });
    expect(res.status).toBe(401);
  });

  it('ends the sessions of a revoked token, and gives a viewer session only viewer rights', async () => {
    const created = await api('POST', '/api/v1/tokens', { name: 'viewer-session', role: 'viewer' });
    const { res, cookie } = await signIn(created.body.token);
    expect(res.body.role).toBe('viewer');
    const refused = await call(
      'POST',
      '/api/v1/tokens',
      { cookie, 'x-csrf-token': res.body.csrf_token },
      {
        name: 'x',
        role: 'viewer',
      },
    );
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/needs the admin role/);
    expect((await api('DELETE', `/api/v1/tokens/${created.body.id}`)).status).toBe(200);
    const after = await call('GET', '/api/v1/boards', { cookie });
    expect(after.status).toBe(401);
    expect(after.body.detail).toMatch(/sign in again/);
  });

  it('signs out (CSRF-protected) by deleting the cookie', async () => {
    const { res, cookie } = await signIn(TEST_ADMIN_TOKEN);
    expect((await call('DELETE', '/api/v1/session', { cookie })).status).toBe(403);
    const out = await call('DELETE', '/api/v1/session', { cookie, 'x-csrf-token': res.body.csrf_token });
    expect(out.status).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(/^tpfleet_session=;.*Max-Age=0/i);
  });

  it('redirects / to /console/ and serves the console with its CSP, caching and SPA fallback', async () => {
    const root = await call('GET', '/');
    expect(root.status).toBe(302);
    expect(root.headers.location).toBe('/console/');
    const index = await call('GET', '/console/');
    expect(index.status).toBe(200);
    expect(index.headers['content-type']).toMatch(/text\/html/);
    expect(index.headers['cache-control']).toBe('no-cache');
    expect(index.headers['content-security-policy']).toMatch(/script-src 'self';/);
    expect(index.headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
    const asset = /src="(\/console\/assets\/[^"]+\.js)"/.exec(index.body as string)?.[1];
    expect(asset).toBeDefined();
    const js = await call('GET', asset!);
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toMatch(/javascript/);
    expect(js.headers['cache-control']).toMatch(/immutable/);
    // A page of the app (a bookmark) gets index.html; a missing asset is a 404, never HTML.
    const deep = await call('GET', '/console/boards/5a0c4c8e-0000-4000-8000-000000000000');
    expect(deep.status).toBe(200);
    expect(deep.body).toBe(index.body);
    const missing = await call('GET', '/console/assets/nope-123.js');
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toMatch(/no console file assets\/nope-123\.js/);
    expect((await call('GET', '/console/../package.json')).status).not.toBe(200);
  });

  it('answers the overview of an empty fleet, and refuses bad board ids on the node read with a problem', async () => {
    const overview = await api('GET', '/api/v1/overview');
    expect(overview.status).toBe(200);
    expect(overview.body).toEqual({ total: 0, counts: {}, racks: [] });
    const bad = await api('GET', '/api/v1/boards/not-a-uuid/nodes');
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatchObject({ path: 'id', message: 'expected a board id (uuid)' });
    const unknown = await api('GET', '/api/v1/boards/5a0c4c8e-0000-4000-8000-000000000000/nodes');
    expect(unknown.status).toBe(404);
    expect((await api('GET', '/api/v1/overview', undefined, { token: null })).status).toBe(401);
  });

  it('serves Swagger UI from the swagger-ui-dist package at /api/docs, and the console is not an API operation', async () => {
    const page = await call('GET', '/api/docs');
    expect(page.status).toBe(200);
    expect(page.body).toContain('/api/docs/swagger-ui-bundle.js');
    expect((await call('GET', '/api/docs/swagger-ui-bundle.js')).body).toContain('SwaggerUIBundle');
    expect((await call('GET', '/api/docs/nope.js')).status).toBe(404);
    const doc = await api('GET', '/api/openapi.json');
    expect(Object.keys(doc.body.paths).some((p: string) => p.startsWith('/console'))).toBe(false);
    expect(doc.body.paths['/api/v1/session'].post).toBeDefined();
    expect(doc.body.components.securitySchemes.session).toEqual({
      type: 'apiKey',
      in: 'cookie',
      name: 'tpfleet_session',
    });
  });
});
