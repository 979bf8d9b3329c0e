import { connect, type Socket } from 'node:net';

import { AgentHarness } from '../../test/support/harness.js';
import { DEFAULT_CONNECTION_LIMITS } from '../http/connection-limits.js';

/** A TCP connection to the agent from `localAddress`, once it is established. */
function open(port: number, localAddress = '127.0.0.1'): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Whether the server closes `socket` within `ms` without sending a byte. */
function closedUnanswered(socket: Socket, ms = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    let answered = false;
    socket.on('data', () => (answered = true));
    socket.on('error', () => undefined); // a reset is a close too
    const timer = setTimeout(() => resolve(false), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(!answered);
    });
  });
}

/** GET /api/bmc/about on an open connection; resolves with the status line. */
function about(socket: Socket, token: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (text.includes('\r\n')) {
        socket.off('data', onData);
        resolve(text.slice(0, text.indexOf('\r\n')));
      }
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.once('close', () => reject(new Error(`closed before an answer (so far: ${JSON.stringify(text)})`)));
    socket.write(`GET /api/bmc/about HTTP/1.1\r\nHost: board\r\nAuthorization: Bearer ${token}\r\n\r\n`);
  });
}

function openConnections(h: AgentHarness): Promise<number> {
  return new Promise((resolve, reject) => h.agent.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
}

describe('connection limits: a host cannot fill the controller with open connections', () => {
  const sockets: Socket[] = [];
  afterEach(() => {
    for (const s of sockets.splice(0)) {
      s.destroy();
    }
  });

  it(`closes a host's connections past ${DEFAULT_CONNECTION_LIMITS.perAddress} at once, and its open ones and other hosts' still answer`, async () => {
    const h = await AgentHarness.start();
    try {
      const token = await h.login();
      const port = Number(new URL(h.base).port);
      // The harness's login may have kept its connection (from 127.0.0.1 too): fill up to the limit from there.
      for (let i = await openConnections(h); i < DEFAULT_CONNECTION_LIMITS.perAddress; i++) {
        sockets.push(await open(port));
      }
      for (const s of sockets) {
        expect(await about(s, token)).toBe('HTTP/1.1 200 OK');
      }
      const extra = await open(port);
      sockets.push(extra);
      expect(await closedUnanswered(extra)).toBe(true);
      const more = await Promise.all([open(port), open(port), open(port)]);
      sockets.push(...more);
      expect(await Promise.all(more.map((s) => closedUnanswered(s)))).toEqual([true, true, true]);

      expect(await about(sockets[0]!, token)).toBe('HTTP/1.1 200 OK'); // the open ones go on
      const otherHost = await open(port, '127.0.0.2');
      sockets.push(otherHost);
      expect(await about(otherHost, token)).toBe('HTTP/1.1 200 OK');

      // One closed: the host may open one again.
      sockets[1]!.destroy();
      await new Promise((r) => setTimeout(r, 100));
      const again = await open(port);
      sockets.push(again);
      expect(await about(again, token)).toBe('HTTP/1.1 200 OK');

      // Four refusals, one log line (at most one a minute), which counts them.
      const lines = h.logs.filter((l) => String(l.msg).includes('already open from that address'));
      expect(lines).toEqual([
        {
          level: 'warn',
          msg: `connection from 127.0.0.1 closed: ${DEFAULT_CONNECTION_LIMITS.perAddress} already open from that address`,
          refused_since_last_line: 1,
        },
      ]);
    } finally {
      sockets.forEach((s) => s.destroy());
      await h.close();
    }
  });

  it('closes connections past the total at once, whichever host opens them', async () => {
    const h = await AgentHarness.start({ connectionLimits: { perAddress: 32, total: 6 } });
    try {
      const token = await h.login();
      const port = Number(new URL(h.base).port);
      // The harness's login may have kept its connection: fill up to the total from there.
      for (let i = await openConnections(h); i < 6; i++) {
        sockets.push(await open(port, i % 2 === 0 ? '127.0.0.1' : '127.0.0.3'));
      }
      const extra = await open(port, '127.0.0.4');
      sockets.push(extra);
      expect(await closedUnanswered(extra)).toBe(true);
      expect(await about(sockets[sockets.length - 2]!, token)).toBe('HTTP/1.1 200 OK');
      expect(h.logs.filter((l) => String(l.msg).includes('connections already open'))).toEqual([
        {
          level: 'warn',
          msg: 'connection from 127.0.0.4 closed: 6 connections already open',
          refused_since_last_line: 1,
        },
      ]);
    } finally {
      sockets.forEach((s) => s.destroy());
      await h.close();
    }
  });
});
