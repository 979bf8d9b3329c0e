import type { Logger } from '@nestjs/common';
import type { Worker } from 'bullmq';
import { isConnectionLoss } from '../db/pg-client.js';
import { ThrottledLog } from '../logging/throttled-log.js';

const FIRST_RETRY_MS = 1000;
/** Kept short: a probe is one cheap query, and workers should be back soon after the database is. */
const MAX_RETRY_MS = 10_000;
/** A probe gets this long to answer before the backend counts as still away. */
const PROBE_TIMEOUT_MS = 5000;

/**
 * Keeps the queue workers of a process from spinning while their queue backend is away. BullMQ retries a failed
 * fetch at once when it does not recognise the error as a connection error, and it recognises none of pg's
 * ("Connection terminated unexpectedly", "the database system is starting up", …): with queues in PostgreSQL a
 * database restart made every worker fetch, fail and log in a loop (~10 times a second each, or without pause at
 * all), until the log buffers filled the heap. So on the first connection loss every worker is paused (running jobs
 * go on), the loss is logged once, and a probe of the backend is retried with exponential backoff; when it answers,
 * the workers resume and the recovery is logged.
 */
export class WorkerSupervisor {
  private workers: Worker[] = [];
  private readonly otherErrors = new Map<string, ThrottledLog>();
  private down: { since: number; suppressed: number; retryMs: number } | null = null;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly logger: Logger,
    /** Resolves when the queue backend answers (QueueHealth.ping). */
    private readonly probe: () => Promise<void>,
  ) {}

  watch(worker: Worker, queue: string): void {
    this.workers.push(worker);
    worker.on('error', (err) => this.onError(queue, err));
  }

  private onError(queue: string, err: Error): void {
    if (this.stopped) {
      return;
    }
    if (!isConnectionLoss(err)) {
      let log = this.otherErrors.get(queue);
      if (!log) {
        log = new ThrottledLog(this.logger, `worker of queue ${queue}`);
        this.otherErrors.set(queue, log);
      }
      log.fail(err);
      return;
    }
    if (this.down) {
      this.down.suppressed++;
      return;
    }
    this.down = { since: Date.now(), suppressed: 0, retryMs: FIRST_RETRY_MS };
    this.logger.error(
      `queue backend unreachable (${err.message}; seen by the worker of queue ${queue}): ` +
        'workers paused, retrying with backoff',
    );
    for (const w of this.workers) {
      void w.pause(true).catch(() => undefined); // running jobs go on; no new fetch
    }
    this.schedule();
  }

  private schedule(): void {
    const down = this.down;
    if (!down || this.stopped) {
      return;
    }
    this.timer = setTimeout(() => void this.retry(), down.retryMs);
    this.timer.unref();
  }

  private async retry(): Promise<void> {
    const down = this.down;
    if (!down || this.stopped) {
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.probe(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('no answer')), PROBE_TIMEOUT_MS);
        }),
      ]);
    } catch {
      down.retryMs = Math.min(down.retryMs * 2, MAX_RETRY_MS);
      this.schedule();
      return;
    } finally {
      clearTimeout(timer);
    }
    if (this.stopped) {
      return;
    }
    this.down = null;
    const seconds = Math.round((Date.now() - down.since) / 1000);
    this.logger.log(
      `queue backend answers again after ${seconds} s (${down.suppressed} more worker errors meanwhile): workers resumed`,
    );
    for (const w of this.workers) {
      void w.resume().catch(() => undefined);
    }
  }

  /** Before the workers close: no more pausing or resuming. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}
