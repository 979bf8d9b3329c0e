import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { type JobsOptions, Queue } from 'bullmq';
import { ConfigService } from '../config/config.service.js';
import { RequestContext } from '../common/request-context.js';
import { ThrottledLog } from '../logging/throttled-log.js';
import { queueRootOptions } from '../queue/queue.options.js';
import type { JobDefinition, JobInput, QueueName } from './job-definition.js';

/** The envelope stored in BullMQ: the validated payload and the request that caused it. */
export interface JobEnvelope {
  payload: unknown;
  requestId?: string;
}

export interface EnqueueOptions {
  /**
   * Deduplication key: while a job with this id exists (waiting, active, delayed, or kept after completion),
   * adding it again does nothing. Derive it from what makes the work unique, e.g. `poll:<boardId>:<slot>`.
   */
  jobId?: string;
  delayMs?: number;
  priority?: number;
}

export function jobOptions(definition: JobDefinition, options: EnqueueOptions = {}): JobsOptions {
  return {
    jobId: options.jobId,
    delay: options.delayMs,
    priority: options.priority,
    attempts: definition.retry.attempts,
    backoff: { type: definition.retry.backoff.type, delay: definition.retry.backoff.delayMs },
    removeOnComplete: { count: definition.keepCompleted ?? 1000 },
    // Failed jobs are kept a week for diagnosis, then trimmed so a long outage cannot fill the queue store.
    removeOnFail: { age: 7 * 86_400 },
  };
}

interface OpenQueue {
  queue: Queue;
  /** Its connection failed before it was ever ready: replaced on next use. */
  neverReady: boolean;
}

/** Enqueues catalogued jobs, validating each payload against its schema before it reaches the queue. */
@Injectable()
export class JobsService implements OnApplicationShutdown {
  private readonly logger = new Logger(JobsService.name);
  private readonly queues = new Map<QueueName, OpenQueue>();
  private closed = false;

  constructor(private readonly config: ConfigService) {}

  queue(name: QueueName): Queue {
    if (this.closed) {
      // A queue opened now would hold connections nobody closes.
      throw new Error(`queue ${name} is closed: the process is shutting down`);
    }
    const known = this.queues.get(name);
    if (known && !known.neverReady) {
      return known.queue;
    }
    if (known) {
      // Its connection was first used while the database was away. BullMQ's PostgreSQL backend keeps that first
      // failure for good (every later call fails with it), so the queue is replaced rather than reused.
      known.queue.close().catch(() => undefined);
    }
    const queue = new Queue(name, queueRootOptions(this.config.all));
    // Connection errors also reach the caller of the failing operation; without a listener BullMQ prints each one.
    const errors = new ThrottledLog(this.logger, `queue ${name}`, 'warn');
    queue.on('error', (err) => errors.fail(err));
    const open: OpenQueue = { queue, neverReady: false };
    queue.waitUntilReady().catch((err) => {
      open.neverReady = true;
      errors.fail(err);
    });
    this.queues.set(name, open);
    return queue;
  }

  async enqueue<D extends JobDefinition>(definition: D, payload: JobInput<D>, options: EnqueueOptions = {}) {
    const envelope: JobEnvelope = { payload: definition.payload.parse(payload), requestId: RequestContext.requestId() };
    return this.queue(definition.queue).add(definition.name, envelope, jobOptions(definition, options));
  }

  /** Many jobs of one definition in one round trip (a polling tick for thousands of boards). */
  async enqueueMany<D extends JobDefinition>(
    definition: D,
    items: ReadonlyArray<{ payload: JobInput<D>; options?: EnqueueOptions }>,
  ) {
    const requestId = RequestContext.requestId();
    return this.queue(definition.queue).addBulk(
      items.map((item) => ({
        name: definition.name,
        data: { payload: definition.payload.parse(item.payload), requestId } satisfies JobEnvelope,
        opts: jobOptions(definition, item.options),
      })),
    );
  }

  // Closed after every module's onModuleDestroy: running jobs (JobsWorker's grace) and clock ticks (Clocks) still
  // enqueue follow-ups while they finish.
  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.queues.values()].map(({ queue }) => queue.close()));
    this.queues.clear();
  }
}
