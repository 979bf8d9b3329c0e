// The fleet API writes an OS image onto one node of a simulated board, end to end: real PostgreSQL and Redis, a real
// `board-agent rack` process, the image served over HTTP by this test. The fleet fetches it, streams it to the
// board, the board writes the node's (simulated) eMMC; the job reports progress and the result on the timeline.
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { Readable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { request as undiciRequest } from 'undici';
import { startTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../support/app.js';
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
  // The job reads the board's transfer state once a second (the board client's default), and a simulated node
  // takes 4 s of USB boot (1 s pin, 3 s rpiboot: the rack runs in real time) before its eMMC takes a byte. So 60 %
  // at once (written when the node is up: 50 % for two seconds), 80 % at 6 s (75 % for two seconds), the rest at 8 s.
  const slow = image(4 * MIB);
  const SLOW_BURSTS = [
    { atMs: 0, upTo: 0.6 },
    { atMs: 6000, upTo: 0.8 },
    { atMs: 8000, upTo: 1 },
  ];
  let uploadDir: string;
  const UPLOAD_MAX = 16 * MIB;

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
      } else if (req.url === '/images/slow.img') {
        // A link that delivers in bursts (SLOW_BURSTS), each held long enough for more than one of the job's polls.
        res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': slow.length });
        let sent = 0;
        for (const { atMs, upTo } of SLOW_BURSTS) {
          setTimeout(() => {
            if (res.destroyed) {
              return;
            }
            const end = Math.floor(slow.length * upTo);
            res.write(slow.subarray(sent, end));
            sent = end;
            if (end === slow.length) {
              res.end();
            }
          }, atMs);
        }
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
    uploadDir = await mkdtemp(join(tmpdir(), 'node-image-uploads-'));
    app = await startTestApp({
      redisUrl: redis.url,
      env: {
        POLL_INTERVAL_SECONDS: '2',
        NODE_IMAGE_UPLOAD_DIR: uploadDir,
        NODE_IMAGE_UPLOAD_MAX_BYTES: String(UPLOAD_MAX),
      },
    });
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
    await rm(uploadDir, { recursive: true, force: true });
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

  it('records the write’s progress on the timeline: quarters in order, between queued and written', async () => {
    const started = await api('POST', `/api/v1/boards/${boardId}/nodes/1/image`, {
      url: `${filesUrl}/images/slow.img`,
      sha256: sha256(slow),
    });
    expect(started.status).toBe(202);
    const done = await waitFor(
      'slow image written',
      () => api('GET', `/api/v1/node-images/${started.body.id}`),
      (r) => r.body.status === 'succeeded' || r.body.status === 'failed',
      60_000,
      200,
    );
    expect(done.value.body).toMatchObject({ status: 'succeeded', sha256: sha256(slow) });
    const timeline = await api('GET', `/api/v1/boards/${boardId}/timeline?limit=100&kind=job`);
    const entries = (timeline.body.items as Array<{ summary: string; at: string; detail: { action_id?: string } }>)
      .filter((e) => e.detail?.action_id === started.body.id)
      .reverse(); // oldest first
    const summaries = entries.map((e) => e.summary);
    expect(summaries[0]).toBe(`node 1 image queued from ${filesUrl}/images/slow.img`);
    expect(summaries.at(-1)).toBe(`node 1 image written (sha256 ${sha256(slow)})`);
    // What the job writes: at each poll that finds the transfer in a new quarter, that quarter; one crossed between
    // two polls is not written (here the first 60 % land at once, so 25 % shows only if a poll catches that burst
    // half written); never 100 %: the written entry says that.
    const percents = summaries.slice(1, -1).map((s) => {
      const match = /^node 1 image (\d+)% written$/.exec(s);
      expect(match).not.toBeNull();
      return Number(match![1]);
    });
    expect(percents.slice(-2)).toEqual([50, 75]);
    expect([
      [50, 75],
      [25, 50, 75],
    ]).toContainEqual(percents);
    const times = entries.map((e) => e.at);
    expect(times).toEqual([...times].sort());
  }, 90_000);

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

  /** Streams `body` as an image upload, a MiB at a time, as the CLI does from a file. */
  async function upload(node: number, body: Buffer, query: string, headers: Record<string, string> = {}) {
    const pieces = (function* () {
      for (let at = 0; at < body.length; at += MIB) {
        yield body.subarray(at, at + MIB);
      }
    })();
    const res = await undiciRequest(`${app.baseUrl}/api/v1/boards/${boardId}/nodes/${node}/image/upload?${query}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TEST_ADMIN_TOKEN}`,
        'content-type': 'application/octet-stream',
        'content-length': String(body.length),
        ...headers,
      },
      body: Readable.from(pieces),
    });
    const text = await res.body.text();
    return {
      status: res.statusCode,
      type: String(res.headers['content-type'] ?? ''),
      body: text ? JSON.parse(text) : null,
    };
  }

  /** Sends only the headers of an upload and reads the answer (a refusal must come before any byte is sent). */
  function headersOnly(path: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(`${app.baseUrl}${path}`, { method: 'POST', headers });
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          req.destroy();
          resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null });
        });
      });
      req.on('error', reject);
      req.flushHeaders();
    });
  }

  it('writes an uploaded image onto node 4 as the same job; the eMMC matches; the stored upload is removed', async () => {
    // Not the URL tests' bytes, so the eMMC shows which image was written.
    const uploaded = image(12 * MIB);
    for (let at = 7; at < uploaded.length; at += 4096) {
      uploaded[at] = 0x5a;
    }
    const started = await upload(4, uploaded, `name=my-os.img&sha256=${sha256(uploaded)}`);
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({
      board_id: boardId,
      node: 4,
      source: 'upload',
      url: 'upload:my-os.img',
      status: 'pending',
    });
    const done = await waitFor(
      'uploaded image written',
      () => api('GET', `/api/v1/node-images/${started.body.id}`),
      (r) => r.body.status === 'succeeded' || r.body.status === 'failed',
      90_000,
      200,
    );
    expect(done.value.body).toMatchObject({
      status: 'succeeded',
      size: uploaded.length,
      bytes_written: uploaded.length,
      sha256: sha256(uploaded),
      error: null,
    });
    const onBoard = await readFile(join(rack.stateDir, 'boards', '1', 'emmc', 'node4.img'));
    expect(sha256(onBoard)).toBe(sha256(uploaded));
    // The job ended: nothing of the upload is left on the fleet manager's disk.
    expect(await readdir(uploadDir)).toEqual([]);
    const timeline = await api('GET', `/api/v1/boards/${boardId}/timeline?limit=50`);
    const summaries = (timeline.body.items as Array<{ summary: string }>).map((e) => e.summary);
    expect(summaries).toContain('node 4 image queued from upload:my-os.img');
    expect(summaries).toContain(`node 4 image written (sha256 ${sha256(uploaded)})`);
  }, 120_000);

  it('refuses an upload whose bytes differ from its sha256, storing nothing and queueing no job', async () => {
    const before = await api('GET', `/api/v1/boards/${boardId}/timeline?limit=50`);
    const res = await upload(3, image(MIB), `sha256=${'b'.repeat(64)}`);
    expect(res.status).toBe(400);
    expect(res.type).toContain('application/problem+json');
    expect(res.body.detail).toBe(
      `the uploaded image’s SHA-256 is ${sha256(image(MIB))}, not the declared ${'b'.repeat(64)}`,
    );
    expect(await readdir(uploadDir)).toEqual([]);
    // The refusal is audited on the timeline; no job event (queued) followed it.
    const after = await api('GET', `/api/v1/boards/${boardId}/timeline?limit=50`);
    const lastJob = (page: { body: { items: Array<{ kind: string }> } }) =>
      page.body.items.find((e) => e.kind === 'job');
    expect(lastJob(after)).toEqual(lastJob(before));
    expect(after.body.items[0]).toMatchObject({
      kind: 'user_action',
      summary: expect.stringMatching(/→ refused: the uploaded image’s SHA-256 is/),
    });
  }, 60_000);

  it('refuses an upload over the size limit, without auth, or without a length or type, before storing a byte', async () => {
    const path = `/api/v1/boards/${boardId}/nodes/3/image/upload`;
    const base = { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/octet-stream' };
    const tooLarge = await headersOnly(path, { ...base, 'content-length': String(UPLOAD_MAX + 1) });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.detail).toBe(
      `the image is ${UPLOAD_MAX + 1} bytes; this fleet manager takes uploads of at most ${UPLOAD_MAX} bytes (NODE_IMAGE_UPLOAD_MAX_BYTES)`,
    );
    const anonymous = await headersOnly(path, {
      'content-type': 'application/octet-stream',
      'content-length': String(MIB),
    });
    expect(anonymous.status).toBe(401);
    const chunked = await headersOnly(path, { ...base, 'transfer-encoding': 'chunked' });
    expect(chunked.status).toBe(400);
    expect(chunked.body.detail).toMatch(/^declare the image’s length with Content-Length/);
    const json = await api('POST', `${path}?name=x.img`, { url: 'http://example.org/x.img' });
    expect(json.status).toBe(400);
    expect(json.body.detail).toBe('send the image as Content-Type: application/octet-stream (got application/json)');
    const badQuery = await upload(3, image(MIB), 'sha256=xyz');
    expect(badQuery.status).toBe(400);
    const noBoard = await headersOnly('/api/v1/boards/00000000-0000-4000-8000-000000000000/nodes/3/image/upload', {
      ...base,
      'content-length': String(MIB),
    });
    expect(noBoard.status).toBe(404);
    expect(await readdir(uploadDir)).toEqual([]);
  }, 60_000);
});
