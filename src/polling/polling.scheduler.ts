import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { ConfigService } from '../config/config.service.js';
import { JobsService } from '../jobs/jobs.service.js';
import { compactThermalJob, pollBatchJob, pollSlowJob } from './polling.jobs.js';
import { PollingRepository } from './polling.repository.js';
import {
  MAX_CLAIM_PER_TICK,
  MAX_WAITING_BATCHES,
  MAX_WAITING_SLOW_BATCHES,
  POLL_BATCH_SIZE,
  THERMAL_COMPACT_EVERY_MS,
  TICK_MS,
} from './polling.settings.js';

/**
 * The polling clock. Every second it claims the boards that are due and enqueues poll-batch jobs; it never talks
 * to a board. Any number of instances may run it: the claim runs under a Postgres advisory lock (only one instance
 * schedules per tick) and is an atomic UPDATE … RETURNING (a board cannot be claimed twice even if the lock were
 * lost). We chose the advisory lock over BullMQ job-id deduplication because the due-set lives in Postgres anyway,
 * and deterministic job ids stay in BullMQ after completion, which would need per-tick ids and cleanup.
 */
@Injectable()
export class PollingScheduler implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(PollingScheduler.name);
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private lastCompaction = 0;
  /** Set by tests and the bench to stop the clock; the API still works. */
  enabled = true;

  constructor(
    private readonly config: ConfigService,
    private readonly repository: PollingRepository,
    private readonly jobs: JobsService,
  ) {}

  onApplicationBootstrap(): void {
    // A quarter of the interval (at most a second): a due board waits at most that long to be claimed.
    const tickMs = Math.max(100, Math.min(TICK_MS, (this.config.polling.intervalSeconds * 1000) / 4));
    this.timer = setInterval(() => void this.tick(), tickMs);
    this.timer.unref();
    this.lastCompaction = Date.now();
  }

  onModuleDestroy(): void {
    if (this.timer) {
      clearInterval(this.timer);
    }
  }

  /** One scheduling round; returns the number of boards enqueued (tests call it directly). */
  async tick(): Promise<number> {
    if (this.running || !this.enabled) {
      return 0;
    }
    this.running = true;
    try {
      const waiting = await this.jobs.queue('polling').getWaitingCount();
      if (waiting > MAX_WAITING_BATCHES) {
        // Backpressure: boards stay due and are claimed once workers catch up (staleness grows, memory does not).
        this.logger.warn(`polling is behind: ${waiting} batches waiting; not claiming this tick`);
        return 0;
      }
      const slowWaiting = await this.jobs.queue(pollSlowJob.queue).getWaitingCount();
      const claimed = await this.repository.claimDue(
        MAX_CLAIM_PER_TICK,
        this.config.polling.intervalSeconds,
        this.config.polling.slowIntervalSeconds,
        slowWaiting <= MAX_WAITING_SLOW_BATCHES,
      );
      if (claimed === null) {
        return 0; // another instance is the scheduler this tick
      }
      if (Date.now() - this.lastCompaction >= THERMAL_COMPACT_EVERY_MS) {
        this.lastCompaction = Date.now();
        const slot = Math.floor(Date.now() / THERMAL_COMPACT_EVERY_MS);
        await this.jobs.enqueue(compactThermalJob, {}, { jobId: `compact-thermal:${slot}` });
      }
      if (claimed.length === 0) {
        return 0;
      }
      // Fast lane: /health and /thermal (and /cooling, /sdcard when due). Slow lane: the firmware reads, as jobs of
      // their own queue, so an update check waiting on a board's uplink never delays a health poll.
      const fast = claimed.map((c) => ({ id: c.id, slow: false, medium: c.medium }));
      const slow = claimed.filter((c) => c.slow).map((c) => c.id);
      const batches = [];
      for (let i = 0; i < fast.length; i += POLL_BATCH_SIZE) {
        batches.push({ payload: { boards: fast.slice(i, i + POLL_BATCH_SIZE) } });
      }
      await this.jobs.enqueueMany(pollBatchJob, batches);
      const slowBatches = [];
      for (let i = 0; i < slow.length; i += POLL_BATCH_SIZE) {
        slowBatches.push({ payload: { boards: slow.slice(i, i + POLL_BATCH_SIZE) } });
      }
      if (slowBatches.length) {
        await this.jobs.enqueueMany(pollSlowJob, slowBatches);
      }
      return claimed.length;
    } catch (err) {
      this.logger.error(`polling tick failed: ${err instanceof Error ? err.message : String(err)}`);
      return 0;
    } finally {
      this.running = false;
    }
  }
}
