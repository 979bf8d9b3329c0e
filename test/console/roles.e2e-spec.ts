// Which process serves the console: the api and all roles do (it is a face of the API); a `--role worker` process
// runs jobs and clocks and answers /console/ and / with a 404 problem, never the app.
import { afterAll, describe, expect, it } from '@jest/globals';
import { request } from 'undici';
import { startTestApp, type TestApp } from '../support/app.js';

describe('the console by role', () => {
  const apps: TestApp[] = [];
  afterAll(async () => {
    for (const app of apps) {
      await app.close();
    }
  });

  async function get(app: TestApp, path: string) {
    const res = await request(`${app.baseUrl}${path}`);
    return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
  }

  it.each(['api', 'all'])('role %s serves the console and redirects / to it', async (role) => {
    const app = await startTestApp({ env: { ROLE: role } });
    apps.push(app);
    const root = await get(app, '/');
    expect(root.status).toBe(302);
    expect(root.headers.location).toBe('/console/');
    const index = await get(app, '/console/');
    expect(index.status).toBe(200);
    expect(index.text).toContain('<div id="root">');
  });

  it('role worker serves no console: 404 problems for /console/, its pages and /', async () => {
    const app = await startTestApp({ env: { ROLE: 'worker' } });
    apps.push(app);
    for (const path of ['/console/', '/console/boards', '/console', '/']) {
      const res = await get(app, path);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      expect(String(res.headers['content-type'])).toContain('application/problem+json');
      expect(res.text).not.toContain('<div id="root">');
    }
  });
});
