import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * Issue 20's bound: flashing a 256 MiB image through the built `board-agent --simulate` keeps the agent's resident
 * memory under 90 MB (the controller has 128 MB) and reports progress while the bytes arrive. The image is streamed
 * from this process in 1 MiB chunks (never held whole here either); the agent's RSS is sampled from /proc.
 */
const ROOT = resolve(import.meta.dirname, '../../..');
const BIN = join(ROOT, 'apps/agent/bin/board-agent.js');
const MIB = 1024 * 1024;
const IMAGE_BYTES = 256 * MIB;
const RSS_LIMIT_BYTES = 90 * 1000 * 1000;
// A bearer token, as BMC-UI and tpi poll with (a Basic credential is re-hashed with scrypt on every request).
let AUTH = '';

function startAgent(
  stateDir: string,
  extraEnv: Record<string, string> = {},
): Promise<{ child: ChildProcess; base: string }> {
  // As on a board: without the test runner's NODE_OPTIONS (jest's VM modules flag changes the agent's footprint).
  // eslint-disable-next-line no-restricted-properties -- the child inherits PATH and the like, not jest's flags
  const { NODE_OPTIONS: _jest, ...env } = process.env;
  const child = spawn(process.execPath, [BIN, '--simulate', '--port', '0', '--state-dir', stateDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...env, ...extraEnv },
  });
  return new Promise((resolvePromise, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)\/api\/bmc/.exec(out);
      if (match) {
        resolvePromise({ child, base: match[1]! });
      }
    });
    child.once('exit', (code) => reject(new Error(`agent exited with ${code}: ${out}`)));
  });
}

async function rssOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  return kib ? Number(kib[1]) * 1024 : 0;
}

/** How often the sender stops until the agent reports every byte sent so far as written. */
const CHECKPOINT_BYTES = 64 * MIB;

/**
 * 1 MiB blocks that differ from each other (a data-filled image, so every byte is really written). Every 64 MiB before
 * the end, the sender waits for `checkpoint`: progress is then asserted at known points instead of depending on how
 * many samples a poller happens to catch while a fast transfer runs.
 */
async function* imageChunks(
  hash: ReturnType<typeof createHash>,
  checkpoint: (sent: number) => Promise<void>,
): AsyncGenerator<Buffer> {
  const block = Buffer.alloc(MIB);
  for (let i = 0; i < block.length; i += 4) {
    block.writeUInt32LE((i * 2654435761) >>> 0, i);
  }
  for (let n = 0; n < IMAGE_BYTES / MIB; n++) {
    block.writeUInt32LE(n, 0);
    hash.update(block);
    yield Buffer.from(block);
    const sent = (n + 1) * MIB;
    if (sent % CHECKPOINT_BYTES === 0 && sent < IMAGE_BYTES) {
      await checkpoint(sent);
    }
  }
}

/**
 * A checkpoint that waits (up to 30 s) until the transfer state reports `sent` bytes written while it is still
 * Transferring, and records what it saw last: the bytes in flight reach the agent while the sender waits.
 */
function checkpointsOf(base: string): { seen: unknown[]; checkpoint: (sent: number) => Promise<void> } {
  const seen: unknown[] = [];
  const checkpoint = async (sent: number) => {
    let last: unknown;
    for (let i = 0; i < 600; i++) {
      const state = await status(base);
      last = typeof state === 'object' ? state['Transferring'] : state;
      if ((last as { bytes_written?: number } | undefined)?.bytes_written === sent) {
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    seen.push((last as { bytes_written?: number } | undefined)?.bytes_written ?? last);
  };
  return { seen, checkpoint };
}

function upload(
  base: string,
  handle: number,
  hash: ReturnType<typeof createHash>,
  checkpoint: (sent: number) => Promise<void>,
): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const req = request(`${base}/api/bmc/upload/${handle}`, {
      method: 'POST',
      headers: { Authorization: AUTH, 'Content-Type': 'application/octet-stream', 'Content-Length': IMAGE_BYTES },
    });
    req.once('response', (res) => {
      res.resume();
      res.once('end', () => resolvePromise(res.statusCode ?? 0));
    });
    req.once('error', reject);
    pipeline(Readable.from(imageChunks(hash, checkpoint)), req).catch(reject);
  });
}

async function status(base: string): Promise<Record<string, unknown> | string> {
  const res = await fetch(`${base}/api/bmc/flash`, { headers: { Authorization: AUTH } });
  return (await res.json()) as Record<string, unknown> | string;
}

/** Sample the agent's RSS and the transfer's progress every 100 ms until `done` resolves and the state settles. */
async function watch(
  base: string,
  pid: number,
  done: Promise<unknown>,
): Promise<{ peak: number; progress: number[]; final: Record<string, unknown> | string }> {
  let peak = await rssOf(pid);
  const progress: number[] = [];
  let running = true;
  const sampler = (async () => {
    while (running) {
      peak = Math.max(peak, await rssOf(pid));
      const state = await status(base);
      const written =
        typeof state === 'object' ? (state['Transferring'] as { bytes_written?: number })?.bytes_written : undefined;
      if (written !== undefined && written !== progress.at(-1)) {
        progress.push(written);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  await done;
  let final: Record<string, unknown> | string = await status(base);
  for (let i = 0; i < 600 && typeof final === 'object' && 'Transferring' in final; i++) {
    peak = Math.max(peak, await rssOf(pid));
    await new Promise((r) => setTimeout(r, 100));
    final = await status(base);
  }
  running = false;
  await sampler;
  return { peak, progress, final };
}

describe('flashing a 256 MiB image through board-agent --simulate', () => {
  let dir: string;
  let agent: { child: ChildProcess; base: string } | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agent-flash-memory-'));
    execFileSync(
      process.execPath,
      [join(ROOT, 'node_modules/typescript/bin/tsc'), '-b', 'apps/agent/tsconfig.build.json'],
      {
        cwd: ROOT,
      },
    );
    agent = await startAgent(join(dir, 'board'));
    const login = await fetch(`${agent.base}/api/bmc/authenticate`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ username: 'root', password: 'turing' }),
    });
    AUTH = `Bearer ${login.headers.get('x-auth-token')}`;
  }, 120_000);
  afterAll(async () => {
    agent?.child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  it('runs the agent, under the PID it was started with, with one malloc arena where Node can start it over', async () => {
    const environ = (await readFile(`/proc/${agent!.child.pid}/environ`, 'utf8')).split('\0');
    if ('execve' in process) {
      expect(environ).toEqual(expect.arrayContaining(['MALLOC_ARENA_MAX=1', 'MALLOC_TRIM_THRESHOLD_=131072']));
    } else {
      expect(environ.filter((v) => v.startsWith('MALLOC_'))).toEqual([]);
    }
    // An operator's own setting is kept.
    const own = await startAgent(join(dir, 'own-malloc'), { MALLOC_ARENA_MAX: '2' });
    try {
      const ownEnviron = (await readFile(`/proc/${own.child.pid}/environ`, 'utf8')).split('\0');
      expect(ownEnviron.filter((v) => v.startsWith('MALLOC_'))).toEqual(['MALLOC_ARENA_MAX=2']);
    } finally {
      own.child.kill('SIGKILL');
    }
  });

  it('keeps the agent under 90 MB resident and reports progress; the eMMC holds the image', async () => {
    const { base, child } = agent!;
    const start = await fetch(`${base}/api/bmc/flash`, {
      method: 'POST',
      headers: { Authorization: AUTH, 'Content-Type': 'application/json' },
      body: JSON.stringify({ node: 2, file: 'big.img', length: String(IMAGE_BYTES) }),
    });
    expect(start.status).toBe(200);
    const { handle } = (await start.json()) as { handle: number };

    const sent = createHash('sha256');
    const checkpoints = checkpointsOf(base);
    let answered = 0;
    const { peak, progress, final } = await watch(
      base,
      child.pid!,
      upload(base, handle, sent, checkpoints.checkpoint).then((code) => (answered = code)),
    );

    expect(answered).toBe(200);
    expect(final).toEqual({ Done: [expect.any(Object), IMAGE_BYTES] });
    process.stdout.write(`peak RSS of the agent while flashing 256 MiB: ${(peak / 1e6).toFixed(1)} MB\n`);
    expect(peak).toBeLessThan(RSS_LIMIT_BYTES);
    // While the bytes arrived, the state said how many were written; the sampled progress never went back.
    expect(checkpoints.seen).toEqual([64 * MIB, 128 * MIB, 192 * MIB]);
    expect([...progress].sort((a, b) => a - b)).toEqual(progress);

    const written = createHash('sha256');
    await pipeline(createReadStream(join(dir, 'board', 'emmc', 'node2.img')), written);
    expect(written.digest('hex')).toBe(sent.digest('hex'));
  }, 180_000);

  it('downloads a 256 MiB URL source under the same bound: the body is streamed, never held whole', async () => {
    const { base, child } = agent!;
    const sent = createHash('sha256');
    const checkpoints = checkpointsOf(base);
    // The image host streams from a generator with back-pressure: it sends only as fast as the agent reads.
    const host = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Length': IMAGE_BYTES, 'Content-Type': 'application/octet-stream' });
      pipeline(Readable.from(imageChunks(sent, checkpoints.checkpoint)), res).catch(() => undefined);
    });
    await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(host.address() as AddressInfo).port}/big.img`;
      const start = await fetch(`${base}/api/bmc/flash`, {
        method: 'POST',
        headers: { Authorization: AUTH, 'Content-Type': 'application/json' },
        body: JSON.stringify({ node: 3, file: url }),
      });
      expect(start.status).toBe(200);
      const settled = (async () => {
        for (let s = await status(base); typeof s === 'object' && 'Transferring' in s; s = await status(base)) {
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      const { peak, progress, final } = await watch(base, child.pid!, settled);

      expect(final).toEqual({ Done: [expect.any(Object), IMAGE_BYTES] });
      process.stdout.write(`peak RSS of the agent while downloading 256 MiB: ${(peak / 1e6).toFixed(1)} MB\n`);
      expect(peak).toBeLessThan(RSS_LIMIT_BYTES);
      expect(checkpoints.seen).toEqual([64 * MIB, 128 * MIB, 192 * MIB]);
      expect([...progress].sort((a, b) => a - b)).toEqual(progress);
      const written = createHash('sha256');
      await pipeline(createReadStream(join(dir, 'board', 'emmc', 'node3.img')), written);
      expect(written.digest('hex')).toBe(sent.digest('hex'));
    } finally {
      host.closeAllConnections();
      await new Promise((r) => host.close(r));
    }
  }, 180_000);
});
