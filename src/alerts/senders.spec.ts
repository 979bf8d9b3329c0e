import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { post, RECEIVER_REPLY_LIMIT_BYTES } from './senders.js';

describe('a receiver that answers with a huge body', () => {
  const HUGE = 100 * 1024 * 1024;
  const written: number[] = [];
  const server = createServer((req, res) => {
    req.resume();
    let sent = 0;
    const status = req.url === '/fails' ? 500 : 200;
    res.writeHead(status, { 'content-type': 'text/plain' }); // chunked: no length given
    const chunk = Buffer.alloc(64 * 1024, 0x41);
    const pump = () => {
      while (sent < HUGE && !res.destroyed) {
        sent += chunk.length;
        if (!res.write(chunk)) {
          res.once('drain', pump);
          return;
        }
      }
      res.end();
    };
    res.once('close', () => written.push(sent));
    pump();
  });
  let base: string;

  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('counts a 2xx delivery as delivered and says the reply was cut off', async () => {
    const result = await post(`${base}/ok`, '{}', {});
    expect(result.ok).toBe(true);
    expect(result.error).toMatch(new RegExp(`ran past the ${RECEIVER_REPLY_LIMIT_BYTES} bytes`));
  });

  it('records a failed delivery with the reason, without buffering the reply', async () => {
    const result = await post(`${base}/fails`, '{}', {});
    expect(result).toMatchObject({ ok: false, status: 500 });
    expect(result.error).toMatch(/reply not read/);
    await new Promise((r) => setTimeout(r, 100));
    expect(Math.max(...written)).toBeLessThan(16 * 1024 * 1024);
  });
});
