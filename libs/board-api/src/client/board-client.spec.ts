import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BoardClient, type BoardClientOptions } from './board-client.js';
import { detectDialect } from './detect.js';
import {
  BoardAuthError,
  BoardBannedError,
  BoardCapabilityError,
  BoardHttpError,
  BoardResponseInvalidError,
  BoardUnreachableError,
  errorReason,
} from './errors.js';

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  contentType: string | undefined;
  body: string;
  requestId: string | undefined;
}
type Handler = (req: Seen, res: ServerResponse) => void;

/** A tiny board on loopback: records every request and answers with the test's handler. */
class FakeBoard {
  readonly seen: Seen[] = [];
  handler: Handler = (_req, res) => json(res, 404, {});
  private server!: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const seen: Seen = {
          method: req.method ?? '',
          url: req.url ?? '',
          authorization: req.headers.authorization,
          requestId: req.headers['x-request-id'] as string | undefined,
          contentType: req.headers['content-type'],
          body: Buffer.concat(chunks).toString('utf8'),
        };
        this.seen.push(seen);
        this.handler(seen, res);
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Requests other than the login. */
  get calls(): Seen[] {
    return this.seen.filter((s) => !s.url.endsWith('/authenticate'));
  }

  get logins(): Seen[] {
    return this.seen.filter((s) => s.url.endsWith('/authenticate'));
  }
}

function json(res: ServerResponse, status: number, body: unknown, type = 'application/json'): void {
  res.writeHead(status, { 'content-type': type });
  res.end(JSON.stringify(body));
}

const ABOUT_COMMON = {
  api: '1.1',
  board_model: 'Turing Pi 2',
  board_revision: '2.5.2',
  board_serial: null,
  build_version: '2.36.3',
  buildroot: 'Buildroot 2024.05.1',
  buildtime: '2026-09-12 10:00:00-00:00',
  hostname: 'tp1',
  kernel: '6.1.33',
  version: 'v2.30.0',
};
const THERMAL = { sensors: [], cooling: [] };

/** Handler of a board that accepts root/secret, issues tok1, tok2, … and answers `answer` for everything else. */
function authenticatingBoard(answer: Handler, valid: () => Set<string>): Handler {
  let n = 0;
  return (req, res) => {
    if (req.url.endsWith('/authenticate')) {
      const creds = JSON.parse(req.body) as { username: string; password: string };
      if (creds.username !== 'root' || creds.password !== 'secret') {
        res.writeHead(403, { 'content-type': 'text/plain' });
        res.end('credentials incorrect');
        return;
      }
      const token = `tok${++n}`;
      valid().add(token);
      res.setHeader('x-auth-token', token);
      json(res, 200, { id: token, name: 'User Session', description: 'User Session', username: 'root' });
      return;
    }
    const token = req.authorization?.replace(/^Bearer /, '');
    if (!token || !valid().has(token)) {
      res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer realm="x"' });
      res.end(`token ${token} is not registered`);
      return;
    }
    answer(req, res);
  };
}

describe('BoardClient', () => {
  const board = new FakeBoard();
  const clients: BoardClient[] = [];
  const client = (options: Partial<BoardClientOptions> = {}) => {
    const c = new BoardClient({ baseUrl: board.url, timeoutMs: 2000, ...options });
    clients.push(c);
    return c;
  };

  beforeEach(async () => {
    board.seen.length = 0;
    await board.start();
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await board.stop();
  });

  describe('authentication', () => {
    const account = { username: 'root', password: 'secret' };

    it('logs in once and reuses the bearer token', async () => {
      const tokens = new Set<string>();
      board.handler = authenticatingBoard(
        (_req, res) => json(res, 200, THERMAL),
        () => tokens,
      );
      const seenTokens: (string | undefined)[] = [];
      const c = client({ credentials: account, onToken: (t) => seenTokens.push(t) });
      await Promise.all([c.thermal(), c.thermal()]);
      await c.thermal();
      expect(board.logins).toHaveLength(1);
      expect(JSON.parse(board.logins[0]!.body)).toEqual(account);
      expect(board.calls.map((s) => s.authorization)).toEqual(Array(3).fill('Bearer tok1'));
      expect(c.token).toBe('tok1');
      expect(seenTokens).toEqual(['tok1']);
    });

    it('logs in again once when the token expired, then carries on', async () => {
      const tokens = new Set<string>(['old']);
      board.handler = authenticatingBoard(
        (_req, res) => json(res, 200, THERMAL),
        () => tokens,
      );
      const c = client({ credentials: account, token: 'old' });
      await c.thermal();
      tokens.clear();
      await c.thermal();
      expect(board.logins).toHaveLength(1);
      expect(board.calls.map((s) => s.authorization)).toEqual(['Bearer old', 'Bearer old', 'Bearer tok1']);
    });

    it('gives up with BoardAuthError when a fresh token is refused too, without looping', async () => {
      // A board that issues tokens and then refuses every one of them.
      board.handler = authenticatingBoard(
        (_req, res) => json(res, 200, THERMAL),
        () => new Set(),
      );
      const c = client({ credentials: account, token: 'stale' });
      const err = await c.thermal().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BoardAuthError);
      expect(errorReason(err)).toBe('auth');
      expect(board.logins).toHaveLength(1);
      expect(board.calls).toHaveLength(2);
    });

    it('with login: false rides on the session only: no token or a refused one throws, and nothing logs in', async () => {
      const tokens = new Set<string>(['live']);
      board.handler = authenticatingBoard(
        (_req, res) => json(res, 200, THERMAL),
        () => tokens,
      );
      const fresh = client({ credentials: account });
      await expect(fresh.call('getThermal', {}, { login: false })).rejects.toBeInstanceOf(BoardAuthError);
      expect(board.seen).toHaveLength(0);

      const riding = client({ credentials: account, token: 'live' });
      await expect(riding.call('getThermal', {}, { login: false })).resolves.toEqual(THERMAL);
      tokens.clear();
      const err = await riding.call('getThermal', {}, { login: false }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BoardAuthError);
      expect((err as BoardAuthError).status).toBe(401);
      expect(board.logins).toHaveLength(0);
      // The token stays for the caller that owns the login, which then logs in once as usual.
      expect(riding.token).toBe('live');
      await riding.thermal();
      expect(board.logins).toHaveLength(1);
    });

    it('sends the current request id on every request, the login included', async () => {
      const tokens = new Set<string>();
      board.handler = authenticatingBoard(
        (_req, res) => json(res, 200, THERMAL),
        () => tokens,
      );
      let current: string | undefined = 'req-1';
      const c = client({ credentials: account, requestId: () => current });
      await c.thermal();
      current = undefined;
      await c.thermal();
      expect(board.seen.map((s) => [s.url.split('/').pop(), s.requestId])).toEqual([
        ['authenticate', 'req-1'],
        ['thermal', 'req-1'],
        ['thermal', undefined],
      ]);
    });

    it('reports a refused login (403) as BoardAuthError and sends nothing else', async () => {
      board.handler = authenticatingBoard(
        (_req, res) => json(res, 200, THERMAL),
        () => new Set(),
      );
      const c = client({ credentials: { username: 'root', password: 'wrong' } });
      const err = await c.thermal().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BoardAuthError);
      expect((err as BoardAuthError).status).toBe(403);
      expect(board.calls).toHaveLength(0);
    });

    it('uses a token-only credential as Bearer and never logs in', async () => {
      board.handler = authenticatingBoard(
        (_req, res) => json(res, 200, THERMAL),
        () => new Set(['given']),
      );
      const ok = client({ credentials: { token: 'given' } });
      await ok.thermal();
      expect(board.calls[0]!.authorization).toBe('Bearer given');
      const bad = client({ credentials: { token: 'revoked' } });
      await expect(bad.thermal()).rejects.toBeInstanceOf(BoardAuthError);
      expect(board.logins).toHaveLength(0);
    });

    it('turns 429 into BoardBannedError with Retry-After', async () => {
      board.handler = (_req, res) => {
        res.writeHead(429, { 'retry-after': '42', 'content-type': 'text/plain' });
        res.end('Exceeded allowed authentication attempts. Access blocked for 42s.');
      };
      const err = await client({ credentials: account })
        .thermal()
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BoardBannedError);
      expect((err as BoardBannedError).retryAfterSeconds).toBe(42);
      expect((err as BoardBannedError).operation).toBe('authenticate');
      expect(errorReason(err)).toBe('banned');
      expect(board.seen).toHaveLength(1);
    });
  });

  describe('failures', () => {
    it('times out as BoardUnreachableError (reason timeout)', async () => {
      board.handler = () => undefined; // never answers
      const err = await client({ timeoutMs: 150 })
        .thermal()
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BoardUnreachableError);
      expect(errorReason(err)).toBe('timeout');
    });

    it('cuts off an answer over maxResponseBytes instead of buffering it (reason invalid_response)', async () => {
      const sensors = Array.from({ length: 2000 }, (_, k) => ({ name: `s${k}`, temperature_c: 40 }));
      board.handler = (_req, res) => json(res, 200, { sensors, cooling: [] });
      const err = await client({ maxResponseBytes: 10_000 })
        .thermal()
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BoardUnreachableError);
      expect((err as BoardUnreachableError).code).toBe('UND_ERR_RES_EXCEEDED_MAX_SIZE');
      expect(errorReason(err)).toBe('invalid_response');
    });

    it('reports a refused connection with its code (reason unreachable)', async () => {
      const c = new BoardClient({ baseUrl: 'http://127.0.0.1:1', timeoutMs: 2000 });
      clients.push(c);
      const err = await c.thermal().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BoardUnreachableError);
      expect((err as BoardUnreachableError).code).toBe('ECONNREFUSED');
      expect(errorReason(err)).toBe('unreachable');
    });

    it('refuses a schema-invalid answer with the zod issues in the message', async () => {
      board.handler = (_req, res) => json(res, 200, { sensors: [{ name: 'x' }], cooling: [] });
      const err = await client()
        .thermal()
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BoardResponseInvalidError);
      expect((err as Error).message).toContain('sensors.0.present');
      expect(errorReason(err)).toBe('invalid_response');
    });

    it('read() keeps an answer that is exactly its schema as the board sent it, and validates like call()', async () => {
      const sensor = { name: 'bmc-thermal', temperature_c: 47.6, present: true, trips: [] };
      // The board's own spelling (member order, spacing): what read() hands back for the caller to store.
      const text =
        ' {"cooling": [], "sensors": [{"trips": [], "present": true, "temperature_c": 47.60, "name": "bmc-thermal"}]}';
      board.handler = (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(text);
      };
      expect(await client().read('getThermal')).toEqual({ value: { sensors: [sensor], cooling: [] }, json: text });

      // A member the schema does not name is dropped by validation, so the text is the validated value's.
      board.handler = (_req, res) => json(res, 200, { sensors: [{ ...sensor, extra: 1 }], cooling: [], more: true });
      const stripped = await client().read('getThermal');
      expect(stripped.value).toEqual({ sensors: [sensor], cooling: [] });
      expect(JSON.parse(stripped.json)).toEqual({ sensors: [sensor], cooling: [] });

      // Padded (valid JSON still) past what is kept as is: the compact JSON of the value, not 20 KiB of spaces.
      board.handler = (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(`${text}${' '.repeat(20 * 1024)}`);
      };
      const padded = await client().read('getThermal');
      expect(padded.value).toEqual({ sensors: [sensor], cooling: [] });
      expect(padded.json).toBe(JSON.stringify(padded.value));

      board.handler = (_req, res) => json(res, 200, { sensors: [{ name: 'x' }], cooling: [] });
      const err = await client()
        .read('getThermal')
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BoardResponseInvalidError);
      expect((err as Error).message).toContain('sensors.0.present');
    });

    it('carries the problem detail of a path-form refusal', async () => {
      board.handler = (_req, res) =>
        json(
          res,
          400,
          { type: 'about:blank', title: 'Bad Request', status: 400, detail: 'a hostname cannot be empty' },
          'application/problem+json',
        );
      const err = await client()
        .setHostname('')
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BoardHttpError);
      expect(err).toMatchObject({ status: 400, detail: 'a hostname cannot be empty' });
      expect(errorReason(err)).toBe('http_4xx');
    });

    it('reads a fork access refusal from the legacy envelope', async () => {
      board.handler = (_req, res) => json(res, 403, { response: [{ result: 'the current password is wrong' }] });
      const err = await client()
        .changePassword('root', 'x', 'y'.repeat(12))
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ status: 403, detail: 'the current password is wrong' });
      expect(err).toBeInstanceOf(BoardHttpError);
      expect(errorReason(new BoardHttpError('x', 503, ''))).toBe('http_5xx');
    });

    it('treats the web interface answered for an unknown path as unsupported', async () => {
      board.handler = (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<!doctype html><html></html>');
      };
      const err = await client({ dialect: 'fork', daemonVersion: '2.36.3' })
        .thermal()
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BoardCapabilityError);
    });
  });

  describe('dialects', () => {
    it('sends node 1-4 to the agent, 0-3 to the fork, and the legacy form to upstream', async () => {
      board.handler = (req, res) => {
        if (req.url.startsWith('/api/bmc?')) {
          json(res, 200, { response: [{ result: 'ok' }] });
        } else {
          res.writeHead(204).end();
        }
      };
      await client({ dialect: 'agent' }).resetNode(3);
      await client({ dialect: 'fork', daemonVersion: '2.36.3' }).resetNode(3);
      await client({ dialect: 'upstream' }).resetNode(3);
      const [agent, fork, upstream] = board.calls;
      expect(agent).toMatchObject({ method: 'POST', url: '/api/bmc/reset' });
      expect(JSON.parse(agent!.body)).toEqual({ node: '3' });
      expect(fork).toMatchObject({ method: 'POST', url: '/api/bmc/reset' });
      expect(JSON.parse(fork!.body)).toEqual({ node: '2' });
      expect(upstream).toMatchObject({ method: 'GET', url: '/api/bmc?opt=set&type=reset&node=2' });
    });

    it('maps USB mode and route to the mode bits, and power to node1..node4', async () => {
      board.handler = (_req, res) => res.writeHead(204).end();
      const c = client();
      await c.setUsb(2, 'Flash', 'Bmc');
      await c.setUsb(1, 'Device', 'AlternativePort');
      await c.setPower({ 1: true, 4: false });
      await c.setPower({});
      expect(board.calls.map((s) => JSON.parse(s.body))).toEqual([
        { node: '2', mode: '6' },
        { node: '1', mode: '1' },
        { node1: '1', node4: '0' },
      ]);
      await expect(c.resetNode(5)).rejects.toThrow(RangeError);
    });

    it('sends flags as 1 and leaves false flags out for presence-flag daemons', async () => {
      board.handler = (req, res) => json(res, 200, { source: 'fork', staged: 'v2.31.0' });
      const fork = client({ dialect: 'fork', daemonVersion: '2.36.3' });
      await fork.installFirmware({ source: 'fork', version: 'v2.31.0', force: false, allowDowngrade: true });
      await fork.call('postFirmwareInstall', { source: 'fork', version: 'v2', force: '0' });
      expect(JSON.parse(board.calls[0]!.body)).toEqual({ source: 'fork', version: 'v2.31.0', allow_downgrade: '1' });
      expect(JSON.parse(board.calls[1]!.body)).toEqual({ source: 'fork', version: 'v2' });
    });

    it('normalises the fork and upstream About into the agent shape', async () => {
      board.handler = (req, res) => {
        if (req.url.startsWith('/api/bmc?')) {
          json(res, 200, {
            response: [
              {
                result: {
                  api: '1.1',
                  version: 'v2.1.0',
                  bmcd_version: '2.3.7',
                  buildtime: 't',
                  buildroot: 'b',
                  board_model: 'TP2',
                  board_revision: '2.4',
                  hostname: 'tp',
                },
              },
            ],
          });
        } else {
          json(res, 200, { ...ABOUT_COMMON, bmcd_version: '2.36.3' });
        }
      };
      const fork = await client({ dialect: 'fork', daemonVersion: '2.36.3' }).aboutWithRaw();
      expect(fork.about.daemon_version).toBe('2.36.3');
      expect(fork.raw.bmcd_version).toBe('2.36.3');
      const upstream = await client({ dialect: 'upstream' }).about();
      expect(upstream).toMatchObject({
        daemon_version: '2.3.7',
        build_version: '2.3.7',
        version: 'v2.1.0',
        kernel: 'unknown',
      });
    });

    it('fills zone and overridden for cooling devices of older daemons', async () => {
      board.handler = (_req, res) =>
        json(res, 200, { response: [{ result: [{ device: 'system fan', speed: 3, max_speed: 6 }] }] });
      expect(await client({ dialect: 'upstream' }).cooling()).toEqual([
        { device: 'system fan', speed: 3, max_speed: 6, zone: null, overridden: false },
      ]);
    });

    it('refuses before sending what the dialect or release does not offer', async () => {
      board.handler = (_req, res) => json(res, 200, []);
      await expect(client({ dialect: 'upstream' }).health()).rejects.toBeInstanceOf(BoardCapabilityError);
      await expect(client({ dialect: 'fork', daemonVersion: '2.33.0' }).sdcardFiles()).rejects.toBeInstanceOf(
        BoardCapabilityError,
      );
      await expect(client({ dialect: 'fork', daemonVersion: '2.35.0' }).access()).rejects.toBeInstanceOf(
        BoardCapabilityError,
      );
      expect(board.seen).toHaveLength(0);
      await expect(client({ dialect: 'fork', daemonVersion: '2.34.0' }).sdcardFiles('images')).resolves.toEqual([]);
      expect(board.calls[0]!.url).toBe('/api/bmc/sdcard/files?path=images');
      expect(errorReason(new BoardCapabilityError('x', 'upstream', undefined))).toBe('unsupported');
    });

    it('reads legacy answers and refusals of upstream boards', async () => {
      board.handler = (req, res) => {
        if (req.url.includes('type=power')) {
          json(res, 200, { response: [{ result: [{ node1: '1', node2: '0', node3: 'Unknown', node4: '1' }] }] });
        } else {
          json(res, 400, { response: [{ result: 'Parameter `node` is out of range 0..3 of node IDs' }] });
        }
      };
      const c = client({ dialect: 'upstream' });
      expect(await c.getPower()).toEqual({ 1: true, 2: false, 3: null, 4: true });
      const err = await c.usbBoot(4).catch((e: unknown) => e);
      expect(err).toMatchObject({ status: 400, detail: 'Parameter `node` is out of range 0..3 of node IDs' });
    });

    it('posts node labels through the legacy node_info body', async () => {
      board.handler = (_req, res) => res.writeHead(200).end();
      await client().setNodeInfo({ 2: { name: 'beta' } });
      expect(board.calls[0]).toMatchObject({ method: 'POST', url: '/api/bmc?opt=set&type=node_info' });
      expect(JSON.parse(board.calls[0]!.body)).toEqual({ Node2: { name: 'beta' } });
    });

    it('sends documents as their string parameter and access bodies as JSON', async () => {
      board.handler = (req, res) =>
        req.url.endsWith('/config')
          ? json(res, 200, { applied: [], skipped: [], failed: [] })
          : json(res, 202, { reload_required: true, detail: 'Stored. It takes effect when the daemon reloads.' });
      const c = client();
      const doc = { format_version: 1, exported_at: '2026-09-12T10:00:00Z', exported_from: {} };
      await c.postConfig(doc);
      expect(JSON.parse(JSON.parse(board.calls[0]!.body).config as string)).toEqual(doc);
      expect(await c.setClientCa('PEM')).toEqual({
        reload_required: true,
        detail: 'Stored. It takes effect when the daemon reloads.',
      });
      expect(board.calls[1]).toMatchObject({
        method: 'PUT',
        url: '/api/bmc/access/client-ca',
        contentType: 'application/json',
      });
      expect(JSON.parse(board.calls[1]!.body)).toEqual({ pem: 'PEM' });
    });
  });

  describe('detectDialect', () => {
    it('recognises the agent by daemon_version', async () => {
      board.handler = (_req, res) => json(res, 200, { ...ABOUT_COMMON, daemon_version: '0.1.0' });
      const found = await detectDialect(board.url);
      expect(found).toMatchObject({ dialect: 'agent', version: '0.1.0' });
      expect(board.seen.map((s) => s.url)).toEqual(['/api/bmc/about']);
    });

    it('recognises the fork by bmcd_version and logs in once', async () => {
      const tokens = new Set<string>();
      board.handler = authenticatingBoard(
        (_req, res) => json(res, 200, { ...ABOUT_COMMON, bmcd_version: '2.36.3' }),
        () => tokens,
      );
      const found = await detectDialect(board.url, { username: 'root', password: 'secret' });
      expect(found).toMatchObject({ dialect: 'fork', version: '2.36.3', token: 'tok1' });
      expect(found.about.daemon_version).toBe('2.36.3');
      expect(board.logins).toHaveLength(1);
    });

    it('falls back to the legacy form when the path form answers the web interface', async () => {
      board.handler = (req, res) => {
        if (req.url === '/api/bmc/about') {
          res.writeHead(200, { 'content-type': 'text/html' });
          res.end('<!doctype html><title>BMC</title>');
        } else {
          json(res, 200, {
            response: [{ result: { api: '1.1', version: 'v2.1.0', bmcd_version: '2.3.7', buildtime: 't' } }],
          });
        }
      };
      const found = await detectDialect(board.url);
      expect(found).toMatchObject({ dialect: 'upstream', version: '2.3.7' });
      expect(board.seen.map((s) => s.url)).toEqual(['/api/bmc/about', '/api/bmc?opt=get&type=about']);
    });

    it('falls back to the legacy form on 404', async () => {
      board.handler = (req, res) =>
        req.url === '/api/bmc/about'
          ? json(res, 404, {})
          : json(res, 200, { response: [{ result: { api: '1.1', version: '2.3.4', build_version: 'v2.0.5' } }] });
      const found = await detectDialect(board.url);
      expect(found).toMatchObject({ dialect: 'upstream', version: '2.3.4' });
      expect(found.about.version).toBe('v2.0.5');
    });
  });
});
