import { z } from 'zod';
import { defineJob } from '../jobs/job-definition.js';

/** One board's part of a bulk node action. Not retried: a reset or power change must not be sent twice. */
export const nodeActionJob = defineJob({
  name: 'boards.node-action',
  queue: 'actions',
  payload: z.object({ actionId: z.uuid(), boardId: z.uuid() }),
  retry: { attempts: 1, backoff: { type: 'fixed', delayMs: 1000 } },
});
