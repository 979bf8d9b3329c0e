import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Agent, Dispatcher } from 'undici';
import { BoardUnreachableError } from './errors.js';
import { OriginPool } from './origin-pool.js';
import { createBoardDispatcher, send } from './transport.js';

const limits = { timeoutMs: 5000, bodyTimeoutMs: 5000 };

/**
 * A board that answers `GET /<n>?ms=<delay>` with `{"n":<n>}` after the delay, and records which connection each
 * request came on and how many were being answered at once.
 */
function slowBoard() {
  const sockets = new Map<Socket, number>();
  const order: number[] = [];
  let inFlight = 0;
  let mostAtOnce = 0;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url!, 'http://board');
    const n = Number(url.pathname.slice(1));
    if (!sockets.has(req.socket)) {
      sockets.set(req.socket, sockets.size);
    }
    order.push(n);
    inFlight++;
    mostAtOnce = Math.max(mostAtOnce, inFlight);
    res.once('close', () => inFlight--); // answered, or the connection went
    setTimeout(
      () => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ n }));
      },
      Number(url.searchParams.get('ms') ?? 0),
    );
  });
  return {
    server,
    stats: () => ({ connections: sockets.size, mostAtOnce, order: [...order] }),
    reset: () => {
      sockets.clear();
      order.length = 0;
      mostAtOnce = 0;
    },
  };
}

describe('OriginPool: a keep-alive pool per origin without a preallocated queue', () => {
  const board = slowBoard();
  let origin = '';
  const open: Array<OriginPool | Agent> = [];

  beforeAll(async () => {
    await new Promise<void>((r) => board.server.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(board.server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((d) => (d.destroyed ? undefined : d.destroy())));
    board.server.closeAllConnections();
    board.reset();
  });
  afterAll(async () => {
    await new Promise((r) => board.server.close(r));
  });

  const get = (d: Dispatcher, n: number, ms = 0) =>
    send(d, origin, { method: 'GET', path: `/${n}?ms=${ms}`, headers: {} }, limits, 'test').then(
      (res) => (JSON.parse(res.text) as { n: number }).n,
    );

  it('sends at most `connections` requests at once and the rest as connections free up, in order, all answered', async () => {
    const pool = new OriginPool(origin, { connections: 2 });
    open.push(pool);
    const answers = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => get(pool, n, 50)));
    expect(answers).toEqual([1, 2, 3, 4, 5, 6]);
    expect(board.stats()).toEqual({ connections: 2, mostAtOnce: 2, order: [1, 2, 3, 4, 5, 6] });
  });

  it('reuses its connections: requests one after another go on the first', async () => {
    const pool = new OriginPool(origin, { connections: 4 });
    open.push(pool);
    for (const n of [1, 2, 3]) {
      expect(await get(pool, n)).toBe(n);
    }
    expect(board.stats().connections).toBe(1);
  });

  it('close() lets requests in flight and waiting finish, then refuses new ones', async () => {
    const pool = new OriginPool(origin, { connections: 1 });
    open.push(pool);
    const answers = Promise.all([1, 2, 3].map((n) => get(pool, n, 30)));
    await pool.close();
    expect(await answers).toEqual([1, 2, 3]);
    expect(pool.closed).toBe(true);
    await expect(get(pool, 4)).rejects.toThrow(BoardUnreachableError);
  });

  it('destroy() ends the requests still waiting for a connection with its error', async () => {
    const pool = new OriginPool(origin, { connections: 1 });
    open.push(pool);
    const first = expect(get(pool, 1, 500)).rejects.toThrow(BoardUnreachableError);
    const waiting = expect(get(pool, 2)).rejects.toThrow(/shutting down/);
    await new Promise((r) => setTimeout(r, 50));
    await pool.destroy(new Error('shutting down'));
    await Promise.all([first, waiting]);
    expect(board.stats().order).toEqual([1]);
  });

  it("is the board dispatcher's pool: one connection kept per origin, the origin let go when it closes", async () => {
    const dispatcher = createBoardDispatcher({ connections: 8 });
    open.push(dispatcher);
    const disconnected = new Promise<string>((resolve) => dispatcher.once('disconnect', (o) => resolve(o.origin)));
    expect(await get(dispatcher, 1)).toBe(1);
    expect(await get(dispatcher, 2)).toBe(2);
    expect(board.stats().connections).toBe(1);
    // The board closes the idle connection: the Agent hears of it through the pool and lets the origin go.
    board.server.closeIdleConnections();
    expect(await disconnected).toBe(origin);
    expect(await Promise.all([3, 4, 5].map((n) => get(dispatcher, n, 30)))).toEqual([3, 4, 5]);
    expect(board.stats()).toMatchObject({ connections: 4, mostAtOnce: 3 });
  });
});
