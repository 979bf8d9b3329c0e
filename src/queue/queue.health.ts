import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import type { Queue } from 'bullmq';

/** A queue that holds no jobs: reading its counts proves the queue backend answers. */
export const HEALTH_QUEUE = 'health';

@Injectable()
export class QueueHealth {
  constructor(@InjectQueue(HEALTH_QUEUE) private readonly queue: Queue) {}

  async ping(): Promise<void> {
    await this.queue.getJobCounts('waiting');
  }
}
