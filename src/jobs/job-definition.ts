import type { z } from 'zod';

/** Queues by kind of work, so a flood of polls never delays a firmware job. */
export const QUEUE_NAMES = [
  'polling',
  'polling-slow',
  'polling-lagging',
  'actions',
  'firmware',
  'config',
  'alerts',
] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

export interface RetryPolicy {
  /** Total tries, the first included. */
  attempts: number;
  backoff: { type: 'exponential' | 'fixed'; delayMs: number };
}

/**
 * A job of the catalogue: its name, queue, payload schema and retry policy. Handlers are attached with
 * `@JobHandler(definition)`; the app refuses to start when a catalogued job has no handler (or two).
 */
export interface JobDefinition<Name extends string = string, Schema extends z.ZodType = z.ZodType> {
  name: Name;
  queue: QueueName;
  payload: Schema;
  retry: RetryPolicy;
  /** Completed jobs kept for inspection (count). Failed jobs are always kept. */
  keepCompleted?: number;
}

export function defineJob<const Name extends string, Schema extends z.ZodType>(
  definition: JobDefinition<Name, Schema>,
): JobDefinition<Name, Schema> {
  return definition;
}

export type JobPayload<D> = D extends JobDefinition<string, infer S> ? z.output<S> : never;
export type JobInput<D> = D extends JobDefinition<string, infer S> ? z.input<S> : never;

/** What a handler learns about the run besides its payload. */
export interface JobContext {
  jobId: string;
  /** 1 on the first try. */
  attempt: number;
  /** The request that caused the job, when there was one: it travels through logs and board calls. */
  requestId?: string;
  updateProgress(progress: Record<string, unknown>): Promise<void>;
  /**
   * Aborted when this process hands the job back unfinished: it is stopping and the job outlived the shutdown grace
   * (src/jobs/jobs.worker.ts). The board calls fail from then on (the process closes its connections), so a handler
   * stops there, writes nothing it did not do, and leaves the rest to the next run.
   */
  signal: AbortSignal;
}

/**
 * Thrown by a handler when retrying cannot help (the board was decommissioned, the payload names nothing):
 * the job fails at once instead of using its remaining attempts.
 */
export class PermanentJobError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentJobError';
  }
}
