import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { BoardResponseInvalidError, BoardUnreachableError } from './errors.js';
import { BOARD_BODY_LIMIT_BYTES, CERT_PIN_UNSAVED, createBoardDispatcher, send } from './transport.js';

const limits = { timeoutMs: 5000, bodyTimeoutMs: 5000 };

/** Serves a plain HTTP board on loopback for the enclosing describe; returns its origin once listening. */
function servedOnLoopback(server: HttpServer): () => string {
  let origin = '';
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  return () => origin;
}

/** A self-signed EC pair for 127.0.0.1 (a board's kind of certificate), made by openssl in a directory of its own. */
function selfSignedPair(): { cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), 'board-api-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1'],
        ...['-subj', '/CN=board', '-addext', 'subjectAltName=IP:127.0.0.1'],
        ...['-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
      ],
      { stdio: 'ignore' },
    );
    return { cert: readFileSync(join(dir, 'cert.pem'), 'utf8'), key: readFileSync(join(dir, 'key.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Serves an HTTPS board with `pair` on loopback for the enclosing describe; returns its origin once listening. */
function servedOverTls(
  pair: () => { cert: string; key: string },
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): () => string {
  let server: Server;
  let origin = '';
  beforeAll(async () => {
    server = createServer(pair(), handler);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });
  return () => origin;
}

describe('certificate pinning: a first-seen certificate whose pin is stored asynchronously', () => {
  const received: string[] = [];
  const originOf = servedOverTls(selfSignedPair, (req, res) => {
    received.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
    res.end('{}');
  });

  it('sends nothing on the connection when the pin could not be stored', async () => {
    const dispatcher = createBoardDispatcher({
      rejectUnauthorized: false,
      pins: { expected: () => undefined, seen: () => Promise.reject(new Error('no board took the pin')) },
    });
    const failure = await send(
      dispatcher,
      originOf(),
      { method: 'GET', path: '/api/bmc/about', headers: { authorization: 'Bearer secret' } },
      limits,
      'about',
    ).catch((err: unknown) => err);
    await dispatcher.close();
    expect(failure).toBeInstanceOf(BoardUnreachableError);
    expect((failure as BoardUnreachableError).code).toBe(CERT_PIN_UNSAVED);
    expect((failure as Error).message).toMatch(/no board took the pin/);
    expect(received).toEqual([]);
  });

  it('sends only after the pin is stored', async () => {
    const order: string[] = [];
    const dispatcher = createBoardDispatcher({
      rejectUnauthorized: false,
      pins: {
        expected: () => undefined,
        seen: async (seenOrigin, fingerprint) => {
          await new Promise((r) => setTimeout(r, 50));
          order.push(`stored ${seenOrigin} ${fingerprint.length > 0}`);
        },
      },
    });
    const res = await send(dispatcher, originOf(), { method: 'GET', path: '/x', headers: {} }, limits, 'x');
    order.push(`answered ${res.status}`);
    await dispatcher.close();
    expect(order).toEqual([`stored ${originOf()} true`, 'answered 200']);
    expect(received).toEqual(['GET /x ']);
  });
});

describe("certificates verified against a CA, one TLS context for all of a dispatcher's connections", () => {
  const received: string[] = [];
  const board = selfSignedPair();
  const other = selfSignedPair();
  // Every answer closes its connection, so each request below is a new TLS handshake on the same dispatcher.
  const originOf = servedOverTls(
    () => board,
    (req, res) => {
      received.push(`${req.method} ${req.url}`);
      res.setHeader('connection', 'close');
      res.end('{}');
    },
  );

  const get = (dispatcher: ReturnType<typeof createBoardDispatcher>, path: string) =>
    send(dispatcher, originOf(), { method: 'GET', path, headers: {} }, limits, 'x').catch((err: unknown) => err);

  it('accepts the board its CA signed, on every new connection', async () => {
    received.length = 0;
    const dispatcher = createBoardDispatcher({ ca: board.cert });
    const answers = [await get(dispatcher, '/a'), await get(dispatcher, '/b'), await get(dispatcher, '/c')];
    await dispatcher.close();
    expect(answers.map((a) => (a as { status: number }).status)).toEqual([200, 200, 200]);
    expect(received).toEqual(['GET /a', 'GET /b', 'GET /c']);
  });

  it('refuses a board no CA it was given signed, on every connection, before sending anything', async () => {
    received.length = 0;
    for (const dispatcher of [createBoardDispatcher({ ca: other.cert }), createBoardDispatcher()]) {
      const failures = [await get(dispatcher, '/a'), await get(dispatcher, '/b')];
      await dispatcher.close();
      for (const failure of failures) {
        expect(failure).toBeInstanceOf(BoardUnreachableError);
        expect((failure as BoardUnreachableError).code).toMatch(/SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/);
      }
    }
    expect(received).toEqual([]);
  });
});

describe('answers larger than the cap', () => {
  const HUGE = 100 * 1024 * 1024;
  let written = 0;
  let closed: Promise<void> = Promise.resolve();
  const server = createHttpServer((req, res) => {
    written = 0;
    closed = new Promise((r) => res.once('close', () => r()));
    if (req.url === '/declared') {
      res.writeHead(200, { 'content-length': String(HUGE) });
    } else {
      res.writeHead(200, { 'content-type': 'application/json' }); // chunked: no length given
    }
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const pump = () => {
      while (written < HUGE && !res.destroyed) {
        written += chunk.length;
        if (!res.write(chunk)) {
          res.once('drain', pump);
          return;
        }
      }
      res.end();
    };
    pump();
  });
  const origin = servedOnLoopback(server);

  it.each([
    ['/declared', /declares 104857600 bytes/],
    ['/streamed', /ran past the 4194304 bytes read/],
  ])('%s: 100 MB is cut off, the connection closed, and the error says why', async (path, why) => {
    const dispatcher = createBoardDispatcher();
    const failure = await send(dispatcher, origin(), { method: 'GET', path, headers: {} }, limits, 'health').catch(
      (err: unknown) => err,
    );
    await closed;
    await dispatcher.close();
    expect(failure).toBeInstanceOf(BoardResponseInvalidError);
    expect((failure as Error).message).toMatch(why);
    // The server stopped well short of 100 MB: what it wrote is the cap plus the sockets' buffers.
    expect(written).toBeLessThan(BOARD_BODY_LIMIT_BYTES + 16 * 1024 * 1024);
  });
});

describe('the deadline of one exchange', () => {
  // A board that keeps sending: a byte every 20 ms never trips the body's idle timeout, only the whole deadline.
  const trickles = new Set<NodeJS.Timeout>();
  const server = createHttpServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const tick = setInterval(() => res.write(' '), 20);
    trickles.add(tick);
    res.on('close', () => {
      clearInterval(tick);
      trickles.delete(tick);
    });
  });
  const origin = servedOnLoopback(server);

  it('ends an answer still trickling at timeoutMs as a timeout, and the board sees the connection closed', async () => {
    const dispatcher = createBoardDispatcher();
    const started = performance.now();
    const failure = await send(
      dispatcher,
      origin(),
      { method: 'GET', path: '/api/bmc/health', headers: {} },
      { timeoutMs: 300, bodyTimeoutMs: 300 },
      'health',
    ).catch((err: unknown) => err);
    const took = performance.now() - started;
    expect(failure).toBeInstanceOf(BoardUnreachableError);
    expect((failure as BoardUnreachableError).code).toBe('ETIMEDOUT');
    expect((failure as Error).message).toMatch(/no answer within 300 ms/);
    expect(took).toBeGreaterThanOrEqual(290);
    for (let i = 0; i < 50 && trickles.size > 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(trickles.size).toBe(0);
    await dispatcher.close();
  });
});

describe('the deadline of a request waiting for a connection', () => {
  // One socket to the board, held for a second by a slow answer: the next request waits in the pool.
  const served: string[] = [];
  const server = createHttpServer((req, res) => {
    served.push(req.url ?? '');
    setTimeout(() => res.end('{}'), req.url === '/slow' ? 1000 : 0);
  });
  const origin = servedOnLoopback(server);

  it('fails at its deadline, not when a connection frees up, and is never sent', async () => {
    const dispatcher = createBoardDispatcher({ connections: 1 });
    const slow = send(dispatcher, origin(), { method: 'GET', path: '/slow', headers: {} }, limits, 'health');
    await new Promise((r) => setTimeout(r, 50));
    const started = performance.now();
    const failure = await send(
      dispatcher,
      origin(),
      { method: 'GET', path: '/queued', headers: {} },
      { timeoutMs: 200, bodyTimeoutMs: 200 },
      'thermal',
    ).catch((err: unknown) => err);
    const took = performance.now() - started;
    expect(failure).toBeInstanceOf(BoardUnreachableError);
    expect((failure as BoardUnreachableError).code).toBe('ETIMEDOUT');
    // The slow answer holds the only socket for a second; the queued request's caller hears well before.
    expect(took).toBeLessThan(700);
    expect((await slow).status).toBe(200);
    await new Promise((r) => setTimeout(r, 100));
    expect(served).toEqual(['/slow']);
    await dispatcher.close();
  });
});
