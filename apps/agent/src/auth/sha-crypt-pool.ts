import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

import { BoardError } from '../backend/backend.js';

export interface ShaCryptPoolOptions {
  /** Worker threads at most; default 1 (the controller has two cores and 128 MB; one thread keeps ~10 MB). */
  threads?: number;
  /** Checks waiting for a thread at most; more are refused with 503 rather than queued without bound. */
  maxQueued?: number;
  /** An idle thread is stopped after this long, so a controller nobody logs in to keeps no isolate. */
  idleMs?: number;
}

interface Job {
  password: string;
  hash: string;
  resolve: (ok: boolean) => void;
  reject: (err: Error) => void;
}

interface Thread {
  worker: Worker;
  job?: Job;
}

/** The compiled worker beside this module; from the TypeScript sources (jest), the one `npm test` built in dist/. */
function workerUrl(): URL {
  const beside = new URL('./sha-crypt-worker.js', import.meta.url);
  return existsSync(fileURLToPath(beside)) ? beside : new URL('../../dist/auth/sha-crypt-worker.js', import.meta.url);
}

/**
 * SHA-crypt checks on a small, bounded pool of worker threads. The check is pure CPU (5000 rounds of SHA-512 and
 * more for a custom `rounds=`) with no libuv equivalent, so on the event loop it stalled every other request of
 * the board; here the loop keeps answering while a thread hashes. Threads start on demand and stop when idle.
 */
export class ShaCryptPool {
  private readonly threads: Thread[] = [];
  private readonly queue: Job[] = [];
  private readonly size: number;
  private readonly maxQueued: number;
  private readonly idleMs: number;
  private idleTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Checks handed to a thread since start (diagnostics; tests assert that a refused credential adds none). */
  computed = 0;

  constructor(options: ShaCryptPoolOptions = {}) {
    this.size = Math.max(1, options.threads ?? 1);
    this.maxQueued = options.maxQueued ?? 32;
    this.idleMs = options.idleMs ?? 30_000;
  }

  /** `crypt(password, hash) === hash`, computed on a worker thread. Rejects with a 503 BoardError when saturated. */
  verify(password: string, hash: string): Promise<boolean> {
    if (this.closed) {
      return Promise.reject(new Error('the password hashing pool is closed'));
    }
    if (this.queue.length >= this.maxQueued) {
      return Promise.reject(new BoardError(503, 'the board is busy checking other passwords; try again in a moment'));
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ password, hash, resolve, reject });
      this.pump();
    });
  }

  /** Refuse what is queued and stop every thread (agent shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.idleTimer);
    for (const job of this.queue.splice(0)) {
      job.reject(new Error('the password hashing pool is closed'));
    }
    await Promise.all(this.threads.map((thread) => thread.worker.terminate()));
  }

  private pump(): void {
    clearTimeout(this.idleTimer);
    while (this.queue.length > 0) {
      const thread = this.threads.find((t) => t.job === undefined) ?? this.spawn();
      if (!thread) {
        return;
      }
      const job = this.queue.shift()!;
      thread.job = job;
      this.computed += 1;
      // Referenced while it works, so a pending check keeps the process alive; unreferenced when idle.
      thread.worker.ref();
      thread.worker.postMessage({ password: job.password, hash: job.hash });
    }
    if (this.threads.every((t) => t.job === undefined)) {
      this.idleTimer = setTimeout(() => this.stopIdle(), this.idleMs);
      this.idleTimer.unref();
    }
  }

  private spawn(): Thread | undefined {
    if (this.threads.length >= this.size) {
      return undefined;
    }
    const worker = new Worker(workerUrl(), {
      // The check needs a few hundred bytes of heap; small limits keep the thread's footprint small too.
      resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 2 },
    });
    const thread: Thread = { worker };
    this.threads.push(thread);
    worker.on('message', (ok: boolean) => {
      const job = thread.job;
      thread.job = undefined;
      worker.unref();
      job?.resolve(ok === true);
      this.pump();
    });
    worker.on('error', (err) => this.retire(thread, err));
    worker.on('exit', (code) => this.retire(thread, new Error(`the password hashing thread stopped (exit ${code})`)));
    return thread;
  }

  /** A thread that failed or was stopped: its job (if any) fails, the queue moves on to a new thread. */
  private retire(thread: Thread, err: Error): void {
    const index = this.threads.indexOf(thread);
    if (index >= 0) {
      this.threads.splice(index, 1);
    }
    const job = thread.job;
    thread.job = undefined;
    job?.reject(err);
    if (!this.closed && this.queue.length > 0) {
      this.pump();
    }
  }

  private stopIdle(): void {
    for (const thread of [...this.threads]) {
      if (thread.job === undefined) {
        this.threads.splice(this.threads.indexOf(thread), 1);
        void thread.worker.terminate();
      }
    }
  }
}
