import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { type Job, UnrecoverableError, Worker } from 'bullmq';
import { ConfigService, currentConfig } from '../config/config.service.js';
import { RequestContext } from '../common/request-context.js';
import { queueRootOptions, runsWorkers, workerDrainDelay } from '../queue/queue.options.js';
import { PermanentJobError, type QueueName } from './job-definition.js';
import { JobsRegistry } from './jobs.registry.js';
import type { JobEnvelope } from './jobs.service.js';
import { queueConcurrency } from './queue-settings.js';

/**
 * Runs catalogued jobs in the worker role: one BullMQ Worker per queue that has handlers. The payload is parsed
 * again here (a job may have been queued by an older version); a payload that does not fit, or a handler's
 * PermanentJobError, fails the job at once; any other error is rethrown so BullMQ retries with the job's backoff.
 */
@Injectable()
export class JobsWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(JobsWorker.name);
  private readonly workers: Worker[] = [];

  constructor(
    private readonly registry: JobsRegistry,
    private readonly config: ConfigService,
  ) {}

  onApplicationBootstrap(): void {
    if (!runsWorkers(this.config.role)) {
      return;
    }
    const appConfig = currentConfig();
    const queues = new Set<QueueName>(this.registry.all().map((j) => j.definition.queue));
    for (const queue of queues) {
      const worker = new Worker(queue, (job: Job) => this.process(job), {
        ...queueRootOptions(appConfig),
        concurrency: queueConcurrency(queue, appConfig),
        drainDelay: workerDrainDelay(appConfig),
      });
      worker.on('error', (err) => this.logger.error(`worker of queue ${queue}: ${err.message}`));
      this.workers.push(worker);
    }
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
    };
    const requestId = envelope.requestId ?? `job:${String(job.id)}`;
    try {
      return await RequestContext.run({ requestId }, () => registered.handler(parsed.data, context));
    } catch (err) {
      if (err instanceof PermanentJobError) {
        throw new UnrecoverableError(err.message);
      }
      throw err;
    }
  }

  async onModuleDestroy(): Promise<void> {
    // close() waits for running jobs to finish, so a deploy never cuts a board call in half.
    await Promise.all(this.workers.map((w) => w.close()));
    this.workers.length = 0;
  }
}
