import { z } from 'zod';
import { defineJob } from '../jobs/job-definition.js';

/**
 * One job polls a batch of boards (bounded concurrency inside the worker), so 10,000 boards at 15 s cost ~13 queue
 * jobs a second instead of ~667. Not retried: a poll that failed is recorded, and the next tick polls again.
 */
export const pollBatchJob = defineJob({
  name: 'boards.poll-batch',
  queue: 'polling',
  payload: z.object({
    boards: z
      .array(
        z.object({
          id: z.uuid(),
          // The scheduler sends slow reads to pollSlowJob; true here ("poll now", older jobs) reads them inline.
          slow: z.boolean().describe('also /firmware/check and /firmware/slots'),
          // Optional: batches enqueued before the medium cadence existed still parse.
          medium: z.boolean().optional().describe('also /cooling and /sdcard'),
        }),
      )
      .min(1)
      .max(1000),
  }),
  retry: { attempts: 1, backoff: { type: 'fixed', delayMs: 1000 } },
  keepCompleted: 100,
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
  retry: { attempts: 1, backoff: { type: 'fixed', delayMs: 1000 } },
  keepCompleted: 100,
});

/** Rolls raw thermal samples into 5-minute means and applies retention (idempotent: safe to run twice). */
export const compactThermalJob = defineJob({
  name: 'boards.compact-thermal',
  queue: 'polling',
  payload: z.object({}),
  retry: { attempts: 3, backoff: { type: 'exponential', delayMs: 5000 } },
  keepCompleted: 10,
});
