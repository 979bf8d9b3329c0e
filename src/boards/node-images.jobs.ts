import { z } from 'zod';
import { defineJob } from '../jobs/job-definition.js';

/**
 * One board's node-image write. The payload names a node action (`flash_image`) and one of its boards, so a later
 * fleet-wide image rollout can create one action with many board rows and enqueue this same job per board. Not
 * retried: an image write restarts from zero and power-cycles the node; a failure is reported, not repeated.
 */
export const nodeImageJob = defineJob({
  name: 'boards.node-image',
  queue: 'actions',
  payload: z.object({ actionId: z.uuid(), boardId: z.uuid() }),
  retry: { attempts: 1, backoff: { type: 'fixed', delayMs: 1000 } },
});
