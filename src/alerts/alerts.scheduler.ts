import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { Clocks } from '../clock/clocks.js';
import { ConfigService } from '../config/config.service.js';
import { JobsService } from '../jobs/jobs.service.js';
import { ThrottledLog } from '../logging/throttled-log.js';
import { evaluateAlertsJob } from './alerts.jobs.js';
import { NotifierService } from './notifier.service.js';
import { jobId } from '../jobs/job-id.js';

/**
 * Evaluation period: the polling interval (readings change at most once per poll, so evaluating more often only reads
 * the same rows again — at 10,000 boards a pass costs a noticeable share of a core), within these bounds. Alert
 * timing (dwell, clear) is only as precise as this.
 */
const MIN_EVALUATION_MS = 1000;
const MAX_EVALUATION_MS = 30_000;
/** How often due notification groups are claimed. */
const FLUSH_MS = 1000;

/**
 * The alerts clock: only enqueues. Every instance may run it: evaluations are one job per time slot (job id
 * `alerts-evaluate-<slot>`, so N instances enqueue one job), and notification groups are claimed with
 * FOR UPDATE SKIP LOCKED (each group by one instance).
 */
@Injectable()
export class AlertsScheduler implements OnApplicationBootstrap {
  private readonly logger = new Logger(AlertsScheduler.name);
  private readonly tickFailures = new ThrottledLog(this.logger, 'alerts tick', 'warn');
  private readonly flushFailures = new ThrottledLog(this.logger, 'notification flush', 'warn');
  private flushing = false;
  /** Tests and the bench stop the clock or shorten it (then call restart()). */
  enabled = true;
  intervalMs: number;

  constructor(
    private readonly jobs: JobsService,
    private readonly notifier: NotifierService,
    private readonly clocks: Clocks,
    config: ConfigService,
  ) {
    this.intervalMs = Math.min(Math.max(config.polling.intervalSeconds * 1000, MIN_EVALUATION_MS), MAX_EVALUATION_MS);
  }

  onApplicationBootstrap(): void {
    this.restart();
  }

  /** (Re)starts both clocks with the current intervalMs. */
  restart(): void {
    this.clocks.every('alerts-evaluate', this.intervalMs, () => this.tick());
    this.clocks.every('alerts-flush', Math.min(FLUSH_MS, this.intervalMs), () => this.flush());
  }

  /** Enqueues the evaluation of the current slot (a no-op when another instance already did). */
  async tick(): Promise<void> {
    if (!this.enabled) {
      return;
    }
    const slot = Math.floor(Date.now() / this.intervalMs);
    try {
      await this.jobs.enqueue(
        evaluateAlertsJob,
        { slot, intervalMs: this.intervalMs },
        { jobId: jobId('alerts-evaluate', this.intervalMs, slot) },
      );
      this.tickFailures.ok();
    } catch (err) {
      this.tickFailures.fail(err);
    }
  }

  async flush(): Promise<number> {
    if (!this.enabled || this.flushing) {
      return 0;
    }
    this.flushing = true;
    try {
      const flushed = await this.notifier.flushDue();
      this.flushFailures.ok();
      return flushed;
    } catch (err) {
      this.flushFailures.fail(err);
      return 0;
    } finally {
      this.flushing = false;
    }
  }
}
