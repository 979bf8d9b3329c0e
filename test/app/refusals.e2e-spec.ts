// Refusals the framework makes before any handler runs (Fastify's router, body parser, limits, Node's HTTP parser)
// are RFC 9457 problem+json with a useful detail, like the app's own: asked at the HTTP layer, over real sockets.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestApp, type TestApp } from '../support/app.js';
import { apiClient } from '../boards/api.js';

/**
 * Sends raw bytes and returns status, content type and body (for what an HTTP client library would not send), then
 * ends its side unless `end: false` (a client that stalls: the connection stays open until the server closes it). Waits
 * for the connection to close, and fails if it was reset at any point (even after the answer was read): a client
 * that sees a reset may drop the answer.
 */
async function raw(
  baseUrl: string,
  text: string,
  { end = true }: { end?: boolean } = {},
): Promise<{ status: number; type: string; body: any }> {
  const { hostname, port } = new URL(baseUrl);
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => (end ? socket.end(text) : socket.write(text)));
    let out = '';
    let failure: Error | undefined;
    socket.on('data', (d: Buffer) => (out += d.toString()));
    socket.on('error', (err) => (failure = err));
    socket.on('close', () => (failure ? reject(failure) : resolve(out)));
  });
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
  const type = /\r\ncontent-type: ([^\r]+)/i.exec(head)?.[1] ?? '';
  return { status, type, body: type.includes('json') && body ? JSON.parse(body) : body };
}

describe('framework refusals as problem+json', () => {
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    app = await startTestApp();
    api = apiClient(app.baseUrl);
  }, 60_000);

  afterAll(async () => {
    await app?.close();
  });

  const expectProblem = (res: { status: number; type: string; body: any }, status: number, detail: RegExp) => {
    expect({ status: res.status, type: res.type }).toEqual({
      status,
      type: expect.stringContaining('application/problem+json'),
    });
    expect(res.body).toMatchObject({ type: 'about:blank', status, title: expect.any(String) });
    expect(res.body.detail).toMatch(detail);
    expect(JSON.stringify(res.body)).not.toMatch(/FST_|statusCode/);
  };

  it('414: a path parameter longer than the router accepts', async () => {
    expectProblem(await api('GET', `/api/v1/boards/${'a'.repeat(300)}`), 414, /longer than/i);
  });

  it('404: a route that does not exist names the method and path', async () => {
    expectProblem(await api('GET', '/api/v1/no-such-thing'), 404, /GET \/api\/v1\/no-such-thing/);
  });

  it('405 for a method the path does not have: the methods it has in the detail and in Allow, before authentication', async () => {
    const cases: Array<[method: 'DELETE' | 'PUT' | 'POST', path: string, allow: string]> = [
      ['DELETE', '/api/v1/boards', 'GET, HEAD, POST'],
      ['PUT', '/api/v1/boards', 'GET, HEAD, POST'],
      ['PUT', '/api/v1/tokens', 'GET, HEAD, POST'],
      ['PUT', '/api/v1/tokens/00000000-0000-4000-8000-000000000000', 'DELETE'],
      ['POST', '/api/v1/boards/00000000-0000-4000-8000-000000000000?x=1', 'DELETE, GET, HEAD, PATCH'],
    ];
    for (const [method, path, allow] of cases) {
      for (const token of [undefined, null]) {
        const res = await api(method, path, undefined, { token });
        expectProblem(res, 405, new RegExp(`${method} ${path.split('?')[0]}.*${allow}`));
        expect(res.headers['allow']).toBe(allow);
      }
    }
    // A path no route has stays 404, with or without a token.
    expectProblem(await api('DELETE', '/api/v1/no-such-thing', undefined, { token: null }), 404, /no-such-thing/);
  });

  it('405 on every path of the OpenAPI document, for a method the document does not list there', async () => {
    const doc = await api('GET', '/api/openapi.json');
    expect(doc.status).toBe(200);
    const paths = Object.entries(doc.body.paths as Record<string, Record<string, unknown>>);
    expect(paths.length).toBeGreaterThan(50);
    for (const [template, operations] of paths) {
      const listed = Object.keys(operations).map((m) => m.toUpperCase());
      const method = (['PUT', 'PATCH', 'DELETE', 'POST'] as const).find((m) => !listed.includes(m))!;
      const path = template.replace(/\{[^}]+\}/g, 'x1');
      const res = await api(method, path);
      expect({ path: template, method, status: res.status }).toEqual({ path: template, method, status: 405 });
      const allow = String(res.headers['allow']).split(', ');
      expect(allow).toEqual(expect.arrayContaining(listed));
      expect(allow).not.toContain(method);
    }
  });

  it('400: a body that is not JSON', async () => {
    expectProblem(await api('POST', '/api/v1/boards', undefined, { raw: '{"name":' }), 400, /JSON/i);
  });

  it('415: a body of a type the API does not read', async () => {
    const res = await api('POST', '/api/v1/boards', undefined, { raw: '<board/>', contentType: 'application/xml' });
    expectProblem(res, 415, /application\/xml/);
  });

  it('413: a body over the limit', async () => {
    const res = await api('POST', '/api/v1/boards/bulk', undefined, { raw: `"${'x'.repeat(3 * 1024 * 1024)}"` });
    expectProblem(res, 413, /too large|limit/i);
  });

  it('431: request headers over the limit', async () => {
    const res = await raw(
      app.baseUrl,
      `GET /api/v1/boards HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(64 * 1024)}\r\nconnection: close\r\n\r\n`,
    );
    expectProblem(res, 431, /header/i);
  });

  it('431 and a clean close while the client is still sending its headers (8 MiB, more than the socket buffers)', async () => {
    const res = await raw(
      app.baseUrl,
      `GET /api/v1/boards HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(8 * 1024 * 1024)}\r\nconnection: close\r\n\r\n`,
    );
    expectProblem(res, 431, /header/i);
  });

  it('400: a request line that is not HTTP', async () => {
    const res = await raw(app.baseUrl, 'NOT HTTP AT ALL\r\n\r\n');
    expectProblem(res, 400, /malformed|parse|invalid/i);
  });

  it('400 naming the field: a 100 KB string where a label name or a source id belongs', async () => {
    const huge = 'a'.repeat(100 * 1024);
    const receiver = await api('POST', '/api/v1/alert-receivers', {
      name: 'hook',
      type: 'webhook',
      url: 'http://127.0.0.1:9/hook',
      group_by: [huge],
    });
    expectProblem(receiver, 400, /group_by\.0: .*128/);
    const template = await api('POST', '/api/v1/config-templates', {
      name: 'big',
      firmware_sources: { sources: [{ id: huge, kind: 'http', label: 'x', location: 'http://127.0.0.1:9/' }] },
    });
    expectProblem(template, 400, /firmware_sources\.sources\.0\.id: /);
    // Refused before anything was written.
    expect((await api('GET', '/api/v1/alert-receivers')).body.items).toEqual([]);
    expect((await api('GET', '/api/v1/config-templates')).body.items).toEqual([]);
  });
});

describe('a request whose headers do not arrive in time', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ env: { HTTP_HEADERS_TIMEOUT_SECONDS: '1' } });
  }, 60_000);

  afterAll(async () => {
    await app?.close();
  });

  it('408 problem+json to a client that stops in the middle of its headers, then a clean close', async () => {
    // No blank line: the headers never end, and the client keeps the connection open until the server gives up.
    const res = await raw(app.baseUrl, 'GET /api/v1/boards HTTP/1.1\r\nhost: x\r\nx-slow: ', { end: false });
    expect({ status: res.status, type: res.type }).toEqual({
      status: 408,
      type: expect.stringContaining('application/problem+json'),
    });
    expect(res.body).toMatchObject({ type: 'about:blank', status: 408, title: 'Request Timeout' });
    expect(res.body.detail).toMatch(/not received in time/);
  }, 15_000);
});
