// A registration that collides with another board names exactly the fields that collide (real PostgreSQL, whose
// unique violation names only one constraint).
import { afterAll, beforeAll, expect, it, describe } from '@jest/globals';
import { startTestApp, type TestApp } from '../support/app.js';
import { apiClient } from './api.js';

describe('duplicate registrations', () => {
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    app = await startTestApp();
    api = apiClient(app.baseUrl);
    const first = await api('POST', '/api/v1/boards', { name: 'taken', base_url: 'http://127.0.0.1:9/a' });
    expect(first.status).toBe(201);
  }, 60_000);

  afterAll(async () => {
    await app?.close();
  });

  it.each([
    ['only the base URL', { name: 'fresh', base_url: 'http://127.0.0.1:9/a' }, ['base URL'], /this base URL$/],
    ['only the name', { name: 'taken', base_url: 'http://127.0.0.1:9/b' }, ['name'], /this name$/],
    ['both', { name: 'taken', base_url: 'http://127.0.0.1:9/a' }, ['name', 'base URL'], /this name and base URL$/],
  ])('names %s when that is what collides', async (_what, body, fields, detail) => {
    const res = await api('POST', '/api/v1/boards', body);
    expect(res.status).toBe(409);
    expect(res.type).toContain('application/problem+json');
    expect(res.body.fields).toEqual(fields);
    expect(res.body.detail).toMatch(detail);
  });

  it('names the base URL when a rename keeps the name free but moves onto a taken URL', async () => {
    const other = await api('POST', '/api/v1/boards', { name: 'other', base_url: 'http://127.0.0.1:9/c' });
    const res = await api('PATCH', `/api/v1/boards/${other.body.id}`, { base_url: 'http://127.0.0.1:9/a' });
    expect(res.status).toBe(409);
    expect(res.body.fields).toEqual(['base URL']);
  });
});
