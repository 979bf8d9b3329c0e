// The fleet API writes an OS image onto one node of a simulated board, end to end: real PostgreSQL and Redis, a real
// `board-agent rack` process, the image served over HTTP by this test. The fleet fetches it, streams it to the
// board, the board writes the node's (simulated) eMMC; the job reports progress and the result on the timeline.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { startTestApp, type TestApp } from '../support/app.js';
import { requireRedis } from '../support/redis.js';
import { apiClient, waitFor } from '../boards/api.js';
import { startRack, type RackProcess } from '../boards/rack.js';

const redis = requireRedis();
const MIB = 1024 * 1024;

function image(bytes: number): Buffer {
  const data = Buffer.alloc(bytes);
  for (let at = 0; at < bytes; at += 4096) {
    data.writeUInt32LE((at * 2654435761) >>> 0, at);
  }
  return data;
}
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

redis.describe('node image writes through the fleet API', () => {
  let rack: RackProcess;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  let files: Server;
  let filesUrl: string;
  let boardId: string;
  const data = image(12 * MIB);

  beforeAll(async () => {
    files = createServer((req, res) => {
      if (req.url === '/images/ubuntu.img') {
        // Sent in pieces with a Content-Length, as a file server does.
        res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': data.length });
        let at = 0;
        const next = () => {
          while (at < data.length) {
            const piece = data.subarray(at, at + MIB);
            at += piece.length;
            if (!res.write(piece)) {
              res.once('drain', next);
              return;
            }
          }
          res.end();
        };
        next();
      } else if (req.url === '/images/unsized.img') {
        res.writeHead(200, { 'Transfer-Encoding': 'chunked' });
        res.end(data.subarray(0, MIB));
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
    filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
    rack = await startRack(2);
    app = await startTestApp({ redisUrl: redis.url, env: { POLL_INTERVAL_SECONDS: '2' } });
    api = apiClient(app.baseUrl);
    const created = await api('POST', '/api/v1/boards', {
      name: 'img1',
      base_url: rack.boardUrl(1),
      credentials: { username: 'root', password: 'turing' },
    });
    expect(created.status).toBe(201);
    boardId = created.body.id;
    await waitFor(
      'board online',
      () => api('GET', `/api/v1/boards/${boardId}`),
      (r) => r.body.state === 'online',
      30_000,
    );
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await rack?.stop();
    await new Promise((r) => files?.close(r));
  });

  it('writes the image onto node 2 as a job; the eMMC matches its SHA-256; the timeline records it', async () => {
    const started = await api('POST', `/api/v1/boards/${boardId}/nodes/2/image`, {
      url: `${filesUrl}/images/ubuntu.img`,
      sha256: sha256(data),
    });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ board_id: boardId, node: 2, status: 'pending' });
    const done = await waitFor(
      'image written',
      () => api('GET', `/api/v1/node-images/${started.body.id}`),
      (r) => r.body.status === 'succeeded' || r.body.status === 'failed',
      90_000,
      200,
    );
    expect(done.value.body).toMatchObject({
      status: 'succeeded',
      size: data.length,
      bytes_written: data.length,
      sha256: sha256(data),
      error: null,
    });
    const onBoard = await readFile(join(rack.stateDir, 'boards', '1', 'emmc', 'node2.img'));
    expect(sha256(onBoard)).toBe(sha256(data));
    expect(done.value.body.url).toBe(`${filesUrl}/images/ubuntu.img`);
    const timeline = await api('GET', `/api/v1/boards/${boardId}/timeline?limit=50`);
    const summaries = (timeline.body.items as Array<{ summary: string }>).map((e) => e.summary);
    expect(summaries).toContain(`node 2 image written (sha256 ${sha256(data)})`);
    expect(summaries.some((s) => s.startsWith('node 2 image queued from http://127.0.0.1'))).toBe(true);
    // The board was asked exactly once to start a flash, and took one upload.
    const calls = await rack.control('GET', '/rack/boards/1/calls');
    expect(calls.body.succeeded.postFlash).toBe(1);
    expect(calls.body.succeeded.postUpload).toBe(1);
  }, 120_000);

  it('fails the job with the board’s own message when the SHA-256 differs, keeping the previous image', async () => {
    const started = await api('POST', `/api/v1/boards/${boardId}/nodes/2/image`, {
      url: `${filesUrl}/images/ubuntu.img`,
      sha256: 'a'.repeat(64),
    });
    const done = await waitFor(
      'image job settled',
      () => api('GET', `/api/v1/node-images/${started.body.id}`),
      (r) => r.body.status === 'succeeded' || r.body.status === 'failed',
      90_000,
      200,
    );
    expect(done.value.body.status).toBe('failed');
    expect(done.value.body.error).toContain('sha256 checksum failed');
    const onBoard = await readFile(join(rack.stateDir, 'boards', '1', 'emmc', 'node2.img'));
    expect(sha256(onBoard)).toBe(sha256(data));
  }, 120_000);

  it('fails a URL without a length, and refuses bad input with problem+json', async () => {
    const started = await api('POST', `/api/v1/boards/${boardId}/nodes/3/image`, {
      url: `${filesUrl}/images/unsized.img`,
    });
    const done = await waitFor(
      'unsized job settled',
      () => api('GET', `/api/v1/node-images/${started.body.id}`),
      (r) => r.body.status === 'failed' || r.body.status === 'succeeded',
      30_000,
      200,
    );
    expect(done.value.body.error).toMatch(/Content-Length/);
    for (const [path, body] of [
      [`/api/v1/boards/${boardId}/nodes/5/image`, { url: `${filesUrl}/images/ubuntu.img` }],
      [`/api/v1/boards/${boardId}/nodes/1/image`, { url: 'ftp://example.org/x.img' }],
      [`/api/v1/boards/${boardId}/nodes/1/image`, { url: `${filesUrl}/x.img`, sha256: 'xyz' }],
      [`/api/v1/boards/${boardId}/nodes/1/image`, { url: `${filesUrl}/x.img`, extra: 1 }],
    ] as const) {
      const res = await api('POST', path, body);
      expect(res.status).toBe(400);
      expect(res.type).toContain('application/problem+json');
    }
    expect((await api('GET', '/api/v1/node-images/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect(
      (await api('POST', `/api/v1/boards/${boardId}/nodes/1/image`, { url: `${filesUrl}/x.img` }, { token: null }))
        .status,
    ).toBe(401);
  }, 60_000);
});
