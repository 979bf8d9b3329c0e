import { z } from 'zod';
import { defineJob } from '../jobs/job-definition.js';

const pollBatchPayload = z.object({
  boards: z
    .array(
      z.object({
        id: z.uuid(),
        // The scheduler sends slow reads to pollSlowJob; true here ("poll now", older jobs) reads them inline.
        slow: z.boolean().describe('also /firmware/check and /firmware/slots'),
        // Optional: batches enqueued before the medium cadence existed still parse.
        medium: z.boolean().optional().describe('also /cooling and /sdcard'),
        // The claim's lease: the result is written only while it is still the board's. Jobs enqueued before leases
        // existed take one when they run.
        lease: z.number().int().optional().describe('the poll lease the scheduler gave'),
      }),
    )
    .min(1)
    .max(1000),
});

/**
 * Poll jobs are not retried: a poll that failed is recorded, and the next tick (or slow interval) reads again.
 */
const pollOnce = {
  retry: { attempts: 1, backoff: { type: 'fixed', delayMs: 1000 } },
  keepCompleted: 100,
} as const;

/**
 * One job polls a batch of boards (bounded concurrency inside the worker), so 10,000 boards at 15 s cost ~6.7 queue
 * jobs a second instead of ~667. Not retried: a poll that failed is recorded, and the next tick polls again.
 */
export const pollBatchJob = defineJob({
  name: 'boards.poll-batch',
  queue: 'polling',
  payload: pollBatchPayload,
  ...pollOnce,
});

/**
 * The lagging lane: the same poll, for boards whose last poll was slow or got no answer, on a queue of its own with
 * its own slots (POLL_LAGGING_CONCURRENCY), as Zabbix gives unreachable hosts pollers of their own. Such a board
 * holds a slot for seconds per request; in the fast lane it would hold one of the slots healthy boards need.
 */
export const pollLaggingJob = defineJob({
  name: 'boards.poll-lagging',
  queue: 'polling-lagging',
  payload: pollBatchPayload,
  ...pollOnce,
});

/**
 * The second try of boards the fast lane cut off at its budget (a busy moment, or a board turning slow): the whole
 * request timeout, in the lagging lane's slots but ahead of every board waiting there. On the fast lane's queue, whose
 * jobs never wait long: on the lagging lane's, it would wait for the jobs of the boards that lane already found slow
 * or dead, each as long as their polls, and a healthy board would go stale for intervals over one slow answer.
 */
export const pollHandedOffJob = defineJob({
  name: 'boards.poll-handed-off',
  queue: 'polling',
  payload: pollBatchPayload,
  ...pollOnce,
});

/**
 * The slow lane: /firmware/check and /firmware/slots of a batch of boards, on a queue of its own with its own
 * concurrency (POLL_SLOW_CONCURRENCY). An update check waits on the internet from the board and can take the whole
 * request timeout on an air-gapped rack; in the fast lane that would hold a health-poll slot per board for seconds.
 * Not retried: the next slow interval reads again (a board without a session yet is retried after its next poll).
 */
export const pollSlowJob = defineJob({
  name: 'boards.poll-slow',
  queue: 'polling-slow',
  payload: z.object({ boards: z.array(z.uuid()).min(1).max(1000) }),
  ...pollOnce,
});

/** Rolls raw thermal samples into 5-minute means and applies retention (idempotent: safe to run twice). */
export const compactThermalJob = defineJob({
  name: 'boards.compact-thermal',
  queue: 'polling',
  payload: z.object({}),
  retry: { attempts: 3, backoff: { type: 'exponential', delayMs: 5000 } },
  keepCompleted: 10,
});
