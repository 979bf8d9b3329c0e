import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Job, UnrecoverableError, Worker } from 'bullmq';
import { ConfigService } from '../config/config.service.js';
import { RequestContext } from '../common/request-context.js';
import { QueueHealth } from '../queue/queue.health.js';
import { queueRootOptions, runsWorkers, workerDrainDelay } from '../queue/queue.options.js';
import { PermanentJobError, type QueueName } from './job-definition.js';
import { JobsRegistry } from './jobs.registry.js';
import type { JobEnvelope } from './jobs.service.js';
import { queueConcurrency, SHUTDOWN_JOB_GRACE_MS } from './queue-settings.js';
import { WorkerSupervisor } from './worker-supervisor.js';

/**
 * Runs catalogued jobs in the worker role: one BullMQ Worker per queue that has handlers. The payload is parsed
 * again here (a job may have been queued by an older version); a payload that does not fit, or a handler's
 * PermanentJobError, fails the job at once; any other error is rethrown so BullMQ retries with the job's backoff.
 */
@Injectable()
export class JobsWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(JobsWorker.name);
  private readonly workers: Worker[] = [];
  private readonly supervisor: WorkerSupervisor;
  /** Jobs this process is running: the close waits for them (up to SHUTDOWN_JOB_GRACE_MS). */
  private readonly running = new Set<Promise<unknown>>();
  /** Aborted when the jobs still running at the end of the grace are handed back (their `JobContext.signal`). */
  private readonly handingBack = new AbortController();

  constructor(
    private readonly registry: JobsRegistry,
    private readonly config: ConfigService,
    health: QueueHealth,
  ) {
    this.supervisor = new WorkerSupervisor(this.logger, () => health.ping());
  }

  onApplicationBootstrap(): void {
    if (!runsWorkers(this.config.role)) {
      return;
    }
    const appConfig = this.config.all;
    const queues = new Set<QueueName>(this.registry.all().map((j) => j.definition.queue));
    for (const queue of queues) {
      const worker = new Worker(queue, (job: Job) => this.track(this.process(job)), {
        ...queueRootOptions(appConfig),
        concurrency: queueConcurrency(queue, appConfig),
        drainDelay: workerDrainDelay(appConfig),
      });
      this.supervisor.watch(worker, queue);
      this.workers.push(worker);
    }
  }

  private track<T>(job: Promise<T>): Promise<T> {
    this.running.add(job);
    void job.catch(() => undefined).finally(() => this.running.delete(job));
    return job;
  }

  async process(job: Job): Promise<unknown> {
    const registered = this.registry.get(job.name);
    if (!registered) {
      throw new UnrecoverableError(`no handler for job "${job.name}" in this version`);
    }
    const envelope = (job.data ?? {}) as JobEnvelope;
    const parsed = registered.definition.payload.safeParse(envelope.payload);
    if (!parsed.success) {
      throw new UnrecoverableError(`payload of "${job.name}" does not fit its schema: ${parsed.error.message}`);
    }
    const context = {
      jobId: String(job.id),
      attempt: job.attemptsMade + 1,
      requestId: envelope.requestId,
      updateProgress: (progress: Record<string, unknown>) => job.updateProgress(progress),
      signal: this.handingBack.signal,
    };
    const requestId = envelope.requestId ?? `job:${String(job.id)}`;
    const started = performance.now();
    try {
      return await RequestContext.run({ requestId, jobId: context.jobId }, async () => {
        const result = await registered.handler(parsed.data, context);
        this.logger.debug(`${job.name} done in ${Math.round(performance.now() - started)} ms`);
        return result;
      });
    } catch (err) {
      if (err instanceof PermanentJobError) {
        throw new UnrecoverableError(err.message);
      }
      throw err;
    }
  }

  async onModuleDestroy(): Promise<void> {
    // Running jobs get SHUTDOWN_JOB_GRACE_MS to finish (a poll batch, a config push step); what still runs then (a
    // firmware install waiting on its board for minutes) is handed back: its `JobContext.signal` is aborted (the board
    // connections close next, so it must not mark a board call done that it will not make), the forced close leaves the
    // job to BullMQ's stalled-job check, which gives it to another worker, and installs re-run safely from their DB
    // lease (src/firmware/install.runner.ts). Waiting for them would outlast any orchestrator's stop timeout.
    // pause(true) takes no new job and returns at once; the jobs this process is running (`running`) are what is
    // waited for. BullMQ's pause() waits by disconnecting the blocking connection and connects it again once they end:
    // after a forced close that new connection was never closed (test/app/close-redis.e2e-spec.ts). close(true) then
    // closes without waiting (a close() started earlier could not be forced any more: BullMQ returns the pending one).
    this.supervisor.stop();
    const workers = this.workers.splice(0);
    await Promise.all(workers.map((w) => w.pause(true)));
    if ((await this.drain(SHUTDOWN_JOB_GRACE_MS)) === 'timeout') {
      this.logger.warn(`stopping: jobs still running after ${SHUTDOWN_JOB_GRACE_MS} ms are handed back to the queue`);
    }
    // Aborted whatever the drain found: a fetch blocked on its queue when pause() was called still starts the next
    // job that arrives, up to the close (test/app/stop-fetch.e2e-spec.ts). Such a job is handed back from its start.
    this.handingBack.abort();
    await Promise.all(workers.map((w) => w.close(true)));
  }

  /**
   * Waits until no job runs, or `graceMs` passed. The set is read again after each wait: a job can start after
   * pause() (see above), and it gets the rest of the grace like the others.
   */
  private async drain(graceMs: number): Promise<'drained' | 'timeout'> {
    const deadline = Date.now() + graceMs;
    while (this.running.size > 0) {
      const left = deadline - Date.now();
      if (left <= 0) {
        return 'timeout';
      }
      const current = Promise.all([...this.running].map((job) => job.catch(() => undefined)));
      await Promise.race([current, sleep(left, undefined, { ref: false })]);
    }
    return 'drained';
  }
}
