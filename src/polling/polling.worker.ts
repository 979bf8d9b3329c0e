import { Injectable, Logger } from '@nestjs/common';
import type { DetectedBoard } from '@tpfleet/board-api/client';
import { capabilities } from '@tpfleet/board-api/client';
import { BoardClientsService } from '../boards/board-clients.service.js';
import { ConfigService } from '../config/config.service.js';
import { JobHandler } from '../jobs/job-handler.decorator.js';
import { JobsService } from '../jobs/jobs.service.js';
import type { JobPayload } from '../jobs/job-definition.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { pollBoard, readSlow, type PollDeps, type PollDue } from './board-poller.js';
import { compactThermalJob, pollBatchJob, pollSlowJob } from './polling.jobs.js';
import { PollingRepository, type PollTarget, type PollWrite } from './polling.repository.js';
import { reachabilityPolicy, THERMAL_BUCKET_SECONDS } from './polling.settings.js';

/** Bounded concurrency shared by every poll-batch job in this process (POLL_CONCURRENCY boards at once). */
class Semaphore {
  private waiting: Array<() => void> = [];
  private free: number;
  constructor(size: number) {
    this.free = size;
  }
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.free > 0) {
      this.free--;
    } else {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) {
        next();
      } else {
        this.free++;
      }
    }
  }
}

const SKIPPED_BY_SLOW_LANE = new Set(['credentials_invalid', 'unreachable', 'banned']);

export function factsOf(detected: DetectedBoard) {
  return {
    dialect: detected.dialect,
    model: detected.about.board_model || null,
    serial: detected.about.board_serial ?? null,
    daemonVersion: detected.version,
    firmwareVersion: detected.about.version === 'unknown' ? null : detected.about.version,
    capabilities: [...capabilities(detected.dialect, detected.version)].sort(),
  };
}

/** Runs poll-batch jobs: load the batch (one query), poll each board, write the batch (one transaction). */
@Injectable()
export class PollingWorker {
  private readonly logger = new Logger(PollingWorker.name);
  private readonly limiter: Semaphore;
  /** The slow lane's own bound (POLL_SLOW_CONCURRENCY): its waits never take a fast-lane slot. */
  private readonly slowLimiter: Semaphore;
  /** Boards being polled by this process: a second claim of the same board (e.g. "poll now") waits its turn. */
  private readonly inFlight = new Set<string>();

  constructor(
    private readonly config: ConfigService,
    private readonly repository: PollingRepository,
    private readonly clients: BoardClientsService,
    private readonly metrics: MetricsService,
    private readonly jobs: JobsService,
  ) {
    this.limiter = new Semaphore(config.polling.concurrency);
    this.slowLimiter = new Semaphore(config.polling.slowConcurrency);
  }

  @JobHandler(pollBatchJob)
  async pollBatch(payload: JobPayload<typeof pollBatchJob>): Promise<{ polled: number; failed: number }> {
    const result = await this.pollTargets(payload.boards);
    this.metrics.jobOutcomes.inc({ job: pollBatchJob.name, outcome: 'completed' });
    return result;
  }

  @JobHandler(pollSlowJob)
  async pollSlow(payload: JobPayload<typeof pollSlowJob>): Promise<{ read: number; retrySoon: number }> {
    const targets = await this.repository.loadTargets(payload.boards);
    const deps = {
      client: (t: PollTarget) => this.clients.client(t),
      observe: (op: string, seconds: number, reason: string | null) =>
        this.metrics.observeOperation(op, seconds, reason),
    };
    const reads = await Promise.all(
      targets
        // The fast lane owns reachability and the login: boards it finds unreachable, banned or refusing these
        // credentials are not read here (their next slow slot comes an interval on, as for every board).
        .filter((t) => t.decommissionedAt === null && !SKIPPED_BY_SLOW_LANE.has(t.state) && !this.clients.isRefused(t))
        .map((t) => this.slowLimiter.run(() => readSlow(t, deps))),
    );
    const retryAt = new Date(Date.now() + this.config.polling.intervalSeconds * 1000);
    await this.repository.applySlowReads(reads.map((r) => ({ ...r, retryAt: r.retrySoon ? retryAt : null })));
    this.metrics.jobOutcomes.inc({ job: pollSlowJob.name, outcome: 'completed' });
    return { read: reads.length, retrySoon: reads.filter((r) => r.retrySoon).length };
  }

  /**
   * Polls these boards now, in the caller: health, thermal, cooling, sdcard and /about when due. The firmware reads
   * are made too ("poll now" asks for everything), or with `firmware: 'queued'` (registration) handed to the slow
   * lane at once, so an update check waiting on an air-gapped board's uplink does not hold up the answer.
   */
  async pollNow(ids: string[], options: { firmware: 'inline' | 'queued' } = { firmware: 'inline' }): Promise<void> {
    const inline = options.firmware === 'inline';
    await this.pollTargets(ids.map((id) => ({ id, slow: inline, medium: true })));
    if (!inline && ids.length) {
      await this.jobs.enqueue(pollSlowJob, { boards: ids });
    }
  }

  private async pollTargets(
    boards: Array<{ id: string; slow: boolean; medium?: boolean | undefined }>,
  ): Promise<{ polled: number; failed: number }> {
    const due = new Map(boards.map((b) => [b.id, { slow: b.slow, medium: b.medium ?? false }]));
    const targets = await this.repository.loadTargets([...due.keys()]);
    const deps: PollDeps = {
      client: (t) => this.clients.client(t),
      detect: (t) => this.clients.detect(t),
      saveFacts: (t, detected) => this.repository.updateFacts(t.id, factsOf(detected)),
      observe: (op, seconds, reason) => this.metrics.observeOperation(op, seconds, reason),
    };
    const writes = await Promise.all(
      targets
        // The state may have changed since the claim (decommissioned, credentials refused meanwhile).
        .filter((t) => t.decommissionedAt === null && t.state !== 'credentials_invalid')
        .map((t) => this.limiter.run(() => this.pollOne(t, due.get(t.id) ?? { slow: false, medium: false }, deps))),
    );
    const done = writes.filter((w): w is PollWrite => w !== null);
    await this.repository.applyPolls(done);
    const byId = new Map(targets.map((t) => [t.id, t]));
    for (const w of done) {
      this.metrics.polls.inc({ state: w.state });
      const previous = byId.get(w.boardId)?.lastPolledAt;
      if (previous) {
        this.metrics.staleness.observe((w.polledAt.getTime() - previous.getTime()) / 1000);
      }
    }
    return { polled: done.length, failed: done.filter((w) => !w.succeeded).length };
  }

  private async pollOne(target: PollTarget, due: PollDue, deps: PollDeps): Promise<PollWrite | null> {
    // Two overlapping polls of one board could each log in; with a wrong password that is two failures towards
    // the board's ban. One poll per board at a time, and never a second login with refused credentials.
    if (this.inFlight.has(target.id) || this.clients.isRefused(target)) {
      return null;
    }
    this.inFlight.add(target.id);
    try {
      const write = await pollBoard(
        target,
        due,
        reachabilityPolicy(this.config.polling, target.pollIntervalSeconds),
        deps,
      );
      if (write.state === 'credentials_invalid') {
        this.clients.markRefused(target);
      }
      return write;
    } catch (err) {
      // A bug or a corrupt credential must not sink the other boards of the batch.
      this.logger.error(
        `poll of board ${target.id} failed unexpectedly: ${err instanceof Error ? err.stack : String(err)}`,
      );
      return null;
    } finally {
      this.inFlight.delete(target.id);
    }
  }

  @JobHandler(compactThermalJob)
  async compactThermal(): Promise<{ rollups: number; deletedRaw: number; deletedRollups: number }> {
    const now = Date.now();
    const bucketMs = THERMAL_BUCKET_SECONDS * 1000;
    // Recompute the last three buckets: the current one is still filling, the previous may have late samples.
    const since = new Date(Math.floor(now / bucketMs) * bucketMs - 2 * bucketMs);
    const [rollups = 0, deletedRaw = 0, deletedRollups = 0] = await this.repository.compactThermal(
      since,
      new Date(now - this.config.polling.thermalRawRetentionHours * 3600_000),
      new Date(now - this.config.polling.thermalRollupRetentionDays * 86_400_000),
      THERMAL_BUCKET_SECONDS,
    );
    this.metrics.jobOutcomes.inc({ job: compactThermalJob.name, outcome: 'completed' });
    return { rollups, deletedRaw, deletedRollups };
  }
}
