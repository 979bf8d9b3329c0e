import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { ClockRound, RoundClock } from '../clock/clock-round.js';
import { Clocks } from '../clock/clocks.js';
import { ConfigService } from '../config/config.service.js';
import type { JobInput } from '../jobs/job-definition.js';
import { JobsService, type EnqueueOptions } from '../jobs/jobs.service.js';
import { compactThermalJob, pollBatchJob, pollHandedOffJob, pollLaggingJob, pollSlowJob } from './polling.jobs.js';
import { PollingRepository, type ClaimedBoard } from './polling.repository.js';
import {
  LEASE_REQUESTS,
  MAX_CLAIM_PER_TICK,
  MAX_WAITING_LAGGING_BATCHES,
  MAX_WAITING_BATCHES,
  MAX_WAITING_SLOW_BATCHES,
  POLL_BATCH_SIZE,
  SLOW_READ_OFFSET_SHARE,
  firstCompactionDelayMs,
  TICK_MS,
} from './polling.settings.js';
import { jobId } from '../jobs/job-id.js';

/**
 * The polling clock. Every second it claims the boards that are due and enqueues poll-batch jobs; it never talks
 * to a board. Any number of instances may run it: the claim runs under a Postgres advisory lock (only one instance
 * schedules per tick) and is an atomic UPDATE … RETURNING (a board cannot be claimed twice even if the lock were
 * lost). We chose the advisory lock over BullMQ job-id deduplication because the due-set lives in Postgres anyway,
 * and deterministic job ids stay in BullMQ after completion, which would need per-tick ids and cleanup.
 */
@Injectable()
export class PollingScheduler extends RoundClock implements OnApplicationBootstrap {
  private readonly logger = new Logger(PollingScheduler.name);
  private readonly round = new ClockRound(this.logger, 'polling tick');
  private nextCompactionAt = Infinity;
  protected readonly rounds = [this.round];

  constructor(
    private readonly config: ConfigService,
    private readonly repository: PollingRepository,
    private readonly jobs: JobsService,
    private readonly clocks: Clocks,
  ) {
    super();
  }

  onApplicationBootstrap(): void {
    // A quarter of the interval (at most a second): a due board waits at most that long to be claimed.
    const tickMs = Math.max(100, Math.min(TICK_MS, (this.config.polling.intervalSeconds * 1000) / 4));
    this.nextCompactionAt = Date.now() + firstCompactionDelayMs(this.config.polling.thermalCompactIntervalSeconds);
    this.clocks.every('polling', tickMs, () => this.tick());
  }

  /** One scheduling round; returns the number of boards enqueued (tests call it directly). */
  tick(): Promise<number> {
    return this.round.run(() => this.claimAndEnqueue(), 0);
  }

  private async claimAndEnqueue(): Promise<number> {
    const waiting = await this.jobs.queue('polling').getWaitingCount();
    if (waiting > MAX_WAITING_BATCHES) {
      // Backpressure: boards stay due and are claimed once workers catch up (staleness grows, memory does not).
      this.logger.warn(`polling is behind: ${waiting} batches waiting; not claiming this tick`);
      return 0;
    }
    // The slow lane's batches wait delayed first (SLOW_READ_OFFSET_SHARE): those count as waiting too.
    const slowWaiting = await this.jobs.queue(pollSlowJob.queue).getJobCountByTypes('waiting', 'delayed');
    const laggingWaiting = await this.jobs.queue(pollLaggingJob.queue).getWaitingCount();
    const claimed = await this.repository.claimDue({
      limit: MAX_CLAIM_PER_TICK,
      defaultIntervalSeconds: this.config.polling.intervalSeconds,
      slowIntervalSeconds: this.config.polling.slowIntervalSeconds,
      leaseExtraSeconds: (LEASE_REQUESTS * this.config.polling.timeoutMs) / 1000,
      includeSlow: slowWaiting <= MAX_WAITING_SLOW_BATCHES,
      // A lagging lane that fell behind leaves its boards due; the fast lane is claimed as usual.
      includeLagging: laggingWaiting <= MAX_WAITING_LAGGING_BATCHES,
    });
    if (claimed === null) {
      return 0; // another instance is the scheduler this tick
    }
    if (Date.now() >= this.nextCompactionAt) {
      const everyMs = this.config.polling.thermalCompactIntervalSeconds * 1000;
      this.nextCompactionAt = Date.now() + everyMs;
      // One job per interval slot even when several instances take turns scheduling.
      const slot = Math.floor(Date.now() / everyMs);
      await this.jobs.enqueue(compactThermalJob, {}, { jobId: jobId('compact-thermal', everyMs, slot) });
    }
    if (claimed.length === 0) {
      return 0;
    }
    // Fast lane: /health and /thermal (and /cooling, /sdcard when due), for boards that answered promptly last time.
    // Lagging lane: the same poll for boards that were slow or did not answer, in a queue with slots of their own.
    // Slow lane: the firmware reads, as jobs of their own queue, so an update check waiting on a board's uplink
    // never delays a health poll; they start half an interval after the poll claimed with them (SLOW_READ_OFFSET_SHARE).
    // Handed off: boards the fast lane cut off at its budget, tried again with the whole timeout ahead of the lagging
    // lane's boards (pollHandedOffJob).
    const poll = (c: ClaimedBoard) => ({ id: c.id, slow: false, medium: c.medium, lease: c.lease });
    await this.enqueueBatches(pollBatchJob, claimed.filter((c) => !c.lagging).map(poll));
    await this.enqueueBatches(pollHandedOffJob, claimed.filter((c) => c.lagging && c.handedOff).map(poll));
    await this.enqueueBatches(pollLaggingJob, claimed.filter((c) => c.lagging && !c.handedOff).map(poll));
    await this.enqueueBatches(
      pollSlowJob,
      claimed.filter((c) => c.slow).map((c) => c.id),
      { delayMs: SLOW_READ_OFFSET_SHARE * this.config.polling.intervalSeconds * 1000 },
    );
    return claimed.length;
  }

  /** One job per POLL_BATCH_SIZE boards of a lane (none for an empty lane). */
  private async enqueueBatches<
    D extends typeof pollBatchJob | typeof pollHandedOffJob | typeof pollLaggingJob | typeof pollSlowJob,
  >(job: D, boards: JobInput<D>['boards'], options?: EnqueueOptions): Promise<void> {
    const batches: Array<{ payload: JobInput<D>; options?: EnqueueOptions }> = [];
    for (let i = 0; i < boards.length; i += POLL_BATCH_SIZE) {
      batches.push({ payload: { boards: boards.slice(i, i + POLL_BATCH_SIZE) } as JobInput<D>, options });
    }
    if (batches.length) {
      await this.jobs.enqueueMany(job, batches);
    }
  }
}
