import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { ClockRound, RoundClock } from '../clock/clock-round.js';
import { Clocks } from '../clock/clocks.js';
import { ConfigService } from '../config/config.service.js';
import { JobsService } from '../jobs/jobs.service.js';
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
 * `jobId('alerts-evaluate', intervalMs, slot)` from src/jobs/job-id.ts, so N instances enqueue one job), and
 * notification groups are claimed with FOR UPDATE SKIP LOCKED (each group by one instance).
 */
@Injectable()
export class AlertsScheduler extends RoundClock implements OnApplicationBootstrap {
  private readonly logger = new Logger(AlertsScheduler.name);
  private readonly evaluation = new ClockRound(this.logger, 'alerts tick', 'warn');
  private readonly flushing = new ClockRound(this.logger, 'notification flush', 'warn');
  /** `enabled` stops both; tests and the bench may also shorten intervalMs (then call restart()). */
  protected readonly rounds = [this.evaluation, this.flushing];
  intervalMs: number;

  constructor(
    private readonly jobs: JobsService,
    private readonly notifier: NotifierService,
    private readonly clocks: Clocks,
    config: ConfigService,
  ) {
    super();
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
  tick(): Promise<void> {
    return this.evaluation.run(async () => {
      const slot = Math.floor(Date.now() / this.intervalMs);
      await this.jobs.enqueue(
        evaluateAlertsJob,
        { slot, intervalMs: this.intervalMs },
        { jobId: jobId('alerts-evaluate', this.intervalMs, slot) },
      );
    }, undefined);
  }

  /** Sends the notification groups that are due; returns how many. */
  flush(): Promise<number> {
    return this.flushing.run(() => this.notifier.flushDue(), 0);
  }
}
