import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, Logger } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { ThrottledLog } from '../logging/throttled-log.js';

/** A queue that holds no jobs: reading its counts proves the queue backend answers. */
export const HEALTH_QUEUE = 'health';

@Injectable()
export class QueueHealth {
  constructor(@InjectQueue(HEALTH_QUEUE) private readonly queue: Queue) {
    // The probe's caller reports failures; without a listener BullMQ prints every connection error of this queue.
    const errors = new ThrottledLog(new Logger(QueueHealth.name), `health queue`, 'warn');
    queue.on('error', (err) => errors.fail(err));
  }

  async ping(): Promise<void> {
    await this.queue.getJobCounts('waiting');
  }
}
