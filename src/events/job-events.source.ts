import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { QueueEvents } from 'bullmq';
import { ConfigService } from '../config/config.service.js';
import { QUEUE_NAMES } from '../jobs/job-definition.js';
import { queueRootOptions } from '../queue/queue.options.js';
import { EventsBus } from './events.bus.js';

/**
 * Job events (completed, failed) for the SSE stream, from BullMQ's own event stream, which every process can read;
 * so they are emitted locally rather than re-published. Started only while at least one SSE client wants them:
 * each QueueEvents holds a blocking connection.
 */
@Injectable()
export class JobEventsSource implements OnModuleDestroy {
  private readonly logger = new Logger(JobEventsSource.name);
  private listeners: QueueEvents[] = [];
  private users = 0;

  constructor(
    private readonly bus: EventsBus,
    private readonly config: ConfigService,
  ) {}

  acquire(): () => void {
    this.users++;
    if (this.users === 1) {
      this.start();
    }
    let released = false;
    return () => {
      if (released) {
        return;
      }
      released = true;
      this.users--;
      if (this.users === 0) {
        void this.stop();
      }
    };
  }

  private start(): void {
    for (const queue of QUEUE_NAMES) {
      try {
        const events = new QueueEvents(queue, queueRootOptions(this.config.all));
        events.on('error', (err) => this.logger.warn(`job events of ${queue}: ${err.message}`));
        events.on('completed', ({ jobId }) =>
          this.bus.emitLocal({
            id: `job-${queue}-${jobId}-completed`,
            type: 'job',
            action: 'completed',
            at: new Date().toISOString(),
            data: { queue, job_id: jobId },
          }),
        );
        events.on('failed', ({ jobId, failedReason }) =>
          this.bus.emitLocal({
            id: `job-${queue}-${jobId}-failed`,
            type: 'job',
            action: 'failed',
            at: new Date().toISOString(),
            data: { queue, job_id: jobId, reason: failedReason },
          }),
        );
        this.listeners.push(events);
      } catch (err) {
        this.logger.warn(`job events unavailable for ${queue}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }

  private async stop(): Promise<void> {
    const listeners = this.listeners;
    this.listeners = [];
    await Promise.all(listeners.map((l) => l.close().catch(() => undefined)));
  }

  async onModuleDestroy(): Promise<void> {
    this.users = 0;
    await this.stop();
  }
}
