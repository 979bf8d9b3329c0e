import { z } from 'zod';
import { defineJob } from '../jobs/job-definition.js';

/**
 * Evaluates every enabled rule against the stored readings. One per tick slot (deterministic job id), and the
 * handler takes an advisory lock, so with several schedulers and workers one evaluation runs at a time.
 */
export const evaluateAlertsJob = defineJob({
  name: 'alerts.evaluate',
  queue: 'alerts',
  payload: z.object({ slot: z.number().int(), intervalMs: z.number().int().positive() }),
  retry: { attempts: 1, backoff: { type: 'fixed', delayMs: 1000 } },
  keepCompleted: 50,
});

/** Sends one notification group to one receiver; retried with backoff, every attempt logged. */
export const deliverAlertsJob = defineJob({
  name: 'alerts.deliver',
  queue: 'alerts',
  payload: z.object({ receiverId: z.uuid(), groupKey: z.string().max(4096) }),
  retry: { attempts: 6, backoff: { type: 'exponential', delayMs: 2000 } },
  keepCompleted: 500,
});

/** Applies or gives back a rule's remediation on one board (fan to the top step, power a node off). */
export const remediateAlertJob = defineJob({
  name: 'alerts.remediate',
  queue: 'alerts',
  payload: z.object({
    alertId: z.uuid(),
    action: z.enum(['fan_max', 'fan_release', 'power_off']),
  }),
  retry: { attempts: 4, backoff: { type: 'exponential', delayMs: 2000 } },
  keepCompleted: 200,
});
