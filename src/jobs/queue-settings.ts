import type { AppConfig } from '../config/config.service.js';
import type { QueueName } from './job-definition.js';

/**
 * Jobs one worker process runs at once, per queue. Polling follows configuration (it is where scale shows);
 * the others are bounded so a bulk action cannot starve polling of connections.
 */
export function queueConcurrency(queue: QueueName, config: AppConfig): number {
  switch (queue) {
    case 'polling':
      return config.polling.concurrency;
    case 'polling-slow':
      // Batches are small in steady state (boards ÷ slow interval a second), so one job per board slot.
      return config.polling.slowConcurrency;
    case 'polling-lagging':
      // Boards that take seconds or time out: jobs mostly wait, so as many as the lane's board slots.
      return config.polling.laggingConcurrency;
    case 'actions':
      return 16;
    case 'firmware':
      return 32;
    case 'config':
      return 8;
    case 'alerts':
      return 4;
  }
}

/**
 * On SIGTERM, running jobs have this long to finish before they are handed back to the queue: short enough that
 * the process is gone well within a 10 s stop timeout (Kubernetes' and Docker's defaults are 30 s and 10 s).
 */
export const SHUTDOWN_JOB_GRACE_MS = 4000;
