import { Injectable, Logger } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { ClockRound, RoundClock } from '../clock/clock-round.js';
import { Clocks } from '../clock/clocks.js';
import { JobsService } from '../jobs/jobs.service.js';
import { configBackupJob } from './config-backups.jobs.js';
import { ConfigBackupsRepository } from './config-backups.repository.js';
import { jobId } from '../jobs/job-id.js';

/** Backups are daily by default: checking for due boards once a minute is plenty. */
const TICK_MS = 60_000;
const MAX_CLAIM_PER_TICK = 5000;

/**
 * The backup clock: claims the boards whose backup is due (default daily, per-board override) and enqueues one
 * backup job each. It never talks to a board. Runs where clocks run (src/clock/clocks.ts); the claim is a single statement under a
 * try-lock, so any number of instances may tick.
 */
@Injectable()
export class ConfigBackupsScheduler extends RoundClock {
  private readonly logger = new Logger(ConfigBackupsScheduler.name);
  private readonly round = new ClockRound(this.logger, 'config backup tick');
  protected readonly rounds = [this.round];

  constructor(
    private readonly repository: ConfigBackupsRepository,
    private readonly jobs: JobsService,
    private readonly clocks: Clocks,
  ) {
    super();
  }

  @Interval('config-backups', TICK_MS)
  async onClock(): Promise<void> {
    await this.clocks.track(() => this.tick());
  }

  /** One round at `now` (tests pass a later time to make a day pass); returns the boards enqueued. */
  async tick(now = new Date(), force = false): Promise<number> {
    return this.round.run(() => this.enqueueDue(now), 0, force);
  }

  private async enqueueDue(now: Date): Promise<number> {
    const policy = await this.repository.policy();
    const claimed = await this.repository.claimDueBackups(now, policy.backupIntervalSeconds, MAX_CLAIM_PER_TICK);
    if (!claimed?.length) {
      return 0;
    }
    // The job id names the claim (board and the slot it was due in): enqueueing it twice adds one job.
    await this.jobs.enqueueMany(
      configBackupJob,
      claimed.map((c) => ({
        payload: { boardId: c.boardId, reason: 'scheduled' as const },
        options: { jobId: jobId('config-backup', c.boardId, new Date(c.nextBackupAt).getTime()) },
      })),
    );
    return claimed.length;
  }
}
