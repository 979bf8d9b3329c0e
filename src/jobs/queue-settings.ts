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
