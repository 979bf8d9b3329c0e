import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { stat, unlink } from 'node:fs/promises';

import type * as undici from 'undici';
import type { Agent, Dispatcher } from 'undici';

type Undici = typeof undici;
let undiciModule: Promise<Undici> | undefined;

/**
 * undici is loaded on the first remote call, not at start: importing it costs ~19 MB RSS and ~0.4 s of CPU on a
 * 2-core controller (bench/agent.mjs), and only the firmware services (catalogue, update check, installer) use it.
 */
function loadUndici(): Promise<Undici> {
  return (undiciModule ??= import('undici'));
}

/** Timeouts of every remote call the firmware services make; the defaults suit a controller on a slow uplink. */
export interface HttpTimeouts {
  /** TCP + TLS connect. Default 10 s. */
  connectMs?: number;
  /** Until response headers. Default 30 s. */
  headersMs?: number;
  /** Silence between two body chunks. Default 60 s. */
  bodyMs?: number;
  /** Connections per origin. Default 4 (one board); a rack sharing one client among its boards needs more. */
  connections?: number;
}

export class HttpError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

const USER_AGENT = 'tpfleet-board-agent';
const MAX_TEXT_BYTES = 4 * 1024 * 1024;

/**
 * One undici dispatcher (connection pool, timeouts, redirects: GitHub's asset URLs redirect to a CDN) for the
 * catalogue, the update check and the installer. Answers are small JSON/text documents, except `download`, which
 * streams to a file, resumes with `Range` after a broken transfer and hashes what it wrote.
 */
export class HttpClient {
  private connection?: Promise<{ agent: Agent; dispatcher: Dispatcher; request: Undici['request'] }>;

  constructor(private readonly timeouts: HttpTimeouts = {}) {}

  private connect() {
    return (this.connection ??= loadUndici().then(({ Agent, interceptors, request }) => {
      const agent = new Agent({
        connect: { timeout: this.timeouts.connectMs ?? 10_000 },
        headersTimeout: this.timeouts.headersMs ?? 30_000,
        bodyTimeout: this.timeouts.bodyMs ?? 60_000,
        connections: this.timeouts.connections ?? 4,
      });
      return { agent, dispatcher: agent.compose(interceptors.redirect({ maxRedirections: 5 })), request };
    }));
  }

  /** GET a text document; null for 404 (a document that is not published), HttpError for anything else. */
  async text(url: string, signal?: AbortSignal, headers: Record<string, string> = {}): Promise<string | null> {
    const res = await this.call(url, 'GET', signal, headers);
    if (res.statusCode === 404) {
      await res.body.dump();
      return null;
    }
    if (res.statusCode < 200 || res.statusCode >= 300) {
      await res.body.dump();
      throw new HttpError(`${url} answered ${res.statusCode}`, res.statusCode);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_TEXT_BYTES) {
        res.body.destroy();
        throw new HttpError(`${url} is larger than ${MAX_TEXT_BYTES} bytes`);
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  async json(url: string, signal?: AbortSignal, headers: Record<string, string> = {}): Promise<unknown | null> {
    const text = await this.text(url, signal, { Accept: 'application/json', ...headers });
    if (text === null) {
      return null;
    }
    try {
      return JSON.parse(text);
    } catch {
      throw new HttpError(`${url} did not answer JSON`);
    }
  }

  /** Whether a document exists (HEAD, 2xx). */
  async exists(url: string, signal?: AbortSignal): Promise<boolean> {
    const res = await this.call(url, 'HEAD', signal, {});
    await res.body.dump();
    if (res.statusCode === 404) {
      return false;
    }
    if (res.statusCode >= 200 && res.statusCode < 300) {
      return true;
    }
    throw new HttpError(`${url} answered ${res.statusCode}`, res.statusCode);
  }

  /**
   * Download `url` to `file`, retrying a broken transfer up to `retries` times and resuming from what is already
   * written (`Range: bytes=N-`; a server that ignores Range starts over). Resolves with the size and SHA-256.
   */
  async download(
    url: string,
    file: string,
    options: { signal?: AbortSignal; retries?: number; maxBytes?: number; retryDelayMs?: number } = {},
  ): Promise<{ size: number; sha256: string }> {
    const retries = options.retries ?? 3;
    await unlink(file).catch(() => undefined);
    let lastError: unknown;
    for (let attempt = 0; attempt <= retries; attempt++) {
      if (attempt > 0) {
        await new Promise((r) => setTimeout(r, (options.retryDelayMs ?? 1000) * attempt));
      }
      options.signal?.throwIfAborted();
      try {
        await this.downloadOnce(url, file, options);
        return { size: (await stat(file)).size, sha256: await sha256File(file) };
      } catch (err) {
        lastError = err;
        if (
          err instanceof HttpError &&
          err.status !== undefined &&
          err.status < 500 &&
          err.status !== 408 &&
          err.status !== 429
        ) {
          break;
        }
        if (options.signal?.aborted) {
          break;
        }
      }
    }
    await unlink(file).catch(() => undefined);
    throw lastError instanceof Error ? lastError : new HttpError(String(lastError));
  }

  private async downloadOnce(
    url: string,
    file: string,
    options: { signal?: AbortSignal; maxBytes?: number },
  ): Promise<void> {
    const have = await stat(file).then(
      (s) => s.size,
      () => 0,
    );
    const res = await this.call(url, 'GET', options.signal, have > 0 ? { Range: `bytes=${have}-` } : {});
    if (res.statusCode === 416 && have > 0) {
      await res.body.dump(); // we already hold the whole file
      return;
    }
    if (res.statusCode !== 200 && res.statusCode !== 206) {
      await res.body.dump();
      throw new HttpError(`${url} answered ${res.statusCode}`, res.statusCode);
    }
    const append = res.statusCode === 206;
    const out = createWriteStream(file, { flags: append ? 'a' : 'w' });
    let written = append ? have : 0;
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        written += chunk.length;
        if (options.maxBytes !== undefined && written > options.maxBytes) {
          res.body.destroy();
          throw new HttpError(`${url} is larger than ${options.maxBytes} bytes`, 413);
        }
        if (!out.write(chunk)) {
          await new Promise<void>((r) => out.once('drain', () => r()));
        }
      }
    } finally {
      await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
    }
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && written - (append ? have : 0) < declared) {
      throw new HttpError(`${url}: the transfer ended after ${written} bytes`);
    }
  }

  private async call(
    url: string,
    method: 'GET' | 'HEAD',
    signal: AbortSignal | undefined,
    headers: Record<string, string>,
  ) {
    const { dispatcher, request } = await this.connect();
    try {
      return await request(url, { method, signal, dispatcher, headers: { 'User-Agent': USER_AGENT, ...headers } });
    } catch (err) {
      if (signal?.aborted) {
        throw err;
      }
      throw new HttpError(`${url}: ${describe(err)}`);
    }
  }

  async close(): Promise<void> {
    if (this.connection === undefined) {
      return;
    } // never used: undici was not even loaded
    await this.connection.then(({ agent }) => agent.destroy()).catch(() => undefined);
  }
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: string }).code ?? (err.cause as { code?: string } | undefined)?.code;
    return code ? `${err.message} (${code})` : err.message;
  }
  return String(err);
}

export async function sha256File(file: string): Promise<string> {
  const { createReadStream } = await import('node:fs');
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) {
    hash.update(chunk as Buffer);
  }
  return hash.digest('hex');
}

/** The hex digest for `name` in a `SHA256SUMS` text (`<hex>  <name>` or `<hex> *<name>`), or null. */
export function sumFor(sums: string, name: string): string | null {
  for (const line of sums.split('\n')) {
    const match = /^([0-9a-fA-F]{64})\s+\*?(.+?)\s*$/.exec(line.trim());
    if (match && (match[2] === name || match[2]!.endsWith(`/${name}`))) {
      return match[1]!.toLowerCase();
    }
  }
  return null;
}
