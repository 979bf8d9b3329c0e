import { Inject, Injectable, Logger } from '@nestjs/common';
import { factsOf } from '../boards/board-facts.js';
import { Limiter } from '../common/concurrency.js';
import { BoardClientsService } from '../boards/board-clients.service.js';
import { BoardsRepository } from '../boards/boards.repository.js';
import type { BoardPoller } from '../boards/board-poller.port.js';
import { POLL_SCREEN, type PollScreen } from '../boards/poll-screen.port.js';
import { ConfigService } from '../config/config.service.js';
import { JobHandler } from '../jobs/job-handler.decorator.js';
import { JobsService } from '../jobs/jobs.service.js';
import type { JobPayload } from '../jobs/job-definition.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { pollBoard, PollOverBudget, readSlow, refusedPoll, type PollDeps, type PollDue } from './board-poller.js';
import { BatchWriter } from './batch-writer.js';
import { compactThermalJob, pollBatchJob, pollHandedOffJob, pollLaggingJob, pollSlowJob } from './polling.jobs.js';
import { PollingRepository, type PollTarget, type PollWrite } from './polling.repository.js';
import {
  LAGGING_SHARE_OF_TIMEOUT,
  LEASE_REQUESTS,
  reachabilityPolicy,
  THERMAL_BUCKET_SECONDS,
  THERMAL_PARTITIONS_AHEAD_HOURS,
  WRITE_LINGER_MS,
} from './polling.settings.js';

const SKIPPED_BY_SLOW_LANE = new Set(['credentials_invalid', 'unreachable', 'banned']);

/**
 * Runs poll-batch jobs (fast and lagging lane): load the batch (one query), poll each board under the lease its claim
 * gave, write the results as they come (one statement per group).
 */
@Injectable()
export class PollingWorker implements BoardPoller {
  private readonly logger = new Logger(PollingWorker.name);
  /** Shared by every poll-batch job in this process (POLL_CONCURRENCY boards at once). */
  private readonly limiter: Limiter;
  /** The slow lane's own bound (POLL_SLOW_CONCURRENCY): its waits never take a fast-lane slot. */
  private readonly slowLimiter: Limiter;
  /** The lagging lane's own bound (POLL_LAGGING_CONCURRENCY): slow and dead boards wait here, not in the fast lane. */
  private readonly laggingLimiter: Limiter;
  /** Boards being polled by this process: a second claim of the same board (e.g. "poll now") waits its turn. */
  private readonly inFlight = new Map<string, Promise<unknown>>();

  constructor(
    private readonly config: ConfigService,
    private readonly repository: PollingRepository,
    private readonly boards: BoardsRepository,
    private readonly clients: BoardClientsService,
    private readonly metrics: MetricsService,
    private readonly jobs: JobsService,
    @Inject(POLL_SCREEN) private readonly screen: PollScreen,
  ) {
    this.limiter = new Limiter(config.polling.concurrency);
    this.slowLimiter = new Limiter(config.polling.slowConcurrency);
    this.laggingLimiter = new Limiter(config.polling.laggingConcurrency);
  }

  @JobHandler(pollBatchJob)
  async pollBatch(
    payload: JobPayload<typeof pollBatchJob>,
  ): Promise<{ polled: number; failed: number; handedOff: number }> {
    // A board slower than the lagging threshold is cut off there and handed to the lagging lane: when many boards
    // turn slow at once (a fifth of a 10,000-board fleet), each costs a fast-lane slot that long, not a timeout.
    const result = await this.pollTargets(payload.boards, this.limiter, {
      budgetMs: LAGGING_SHARE_OF_TIMEOUT * this.config.polling.timeoutMs,
    });
    this.metrics.jobOutcomes.inc({ job: pollBatchJob.name, outcome: 'completed' });
    return result;
  }

  @JobHandler(pollHandedOffJob)
  async pollHandedOff(
    payload: JobPayload<typeof pollHandedOffJob>,
  ): Promise<{ polled: number; failed: number; handedOff: number }> {
    const result = await this.pollTargets(payload.boards, this.laggingLimiter, { first: true });
    this.metrics.jobOutcomes.inc({ job: pollHandedOffJob.name, outcome: 'completed' });
    return result;
  }

  @JobHandler(pollLaggingJob)
  async pollLagging(
    payload: JobPayload<typeof pollLaggingJob>,
  ): Promise<{ polled: number; failed: number; handedOff: number }> {
    const result = await this.pollTargets(payload.boards, this.laggingLimiter);
    this.metrics.jobOutcomes.inc({ job: pollLaggingJob.name, outcome: 'completed' });
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
   * A board another poll holds (the scheduler's, another request's) is polled once that poll has written, if that
   * comes within the request timeout; otherwise its stored state is what the caller gets.
   */
  async pollNow(ids: string[], options: { firmware: 'inline' | 'queued' } = { firmware: 'inline' }): Promise<void> {
    const inline = options.firmware === 'inline';
    const leases = await this.leaseWaiting(ids, this.config.polling.timeoutMs);
    const leased = ids.filter((id) => leases.has(id));
    if (leased.length) {
      await this.pollTargets(
        leased.map((id) => ({ id, slow: inline, medium: true, lease: leases.get(id) })),
        this.limiter,
        { waitForInFlight: true },
      );
    }
    if (!inline && ids.length) {
      await this.jobs.enqueue(pollSlowJob, { boards: ids });
    }
  }

  private leaseSeconds(): number {
    return this.config.polling.intervalSeconds + (LEASE_REQUESTS * this.config.polling.timeoutMs) / 1000;
  }

  /** Leases the boards, retrying those held by another poll until `waitMs` has passed. */
  private async leaseWaiting(ids: string[], waitMs: number): Promise<Map<string, number>> {
    const got = new Map<string, number>();
    const deadline = Date.now() + waitMs;
    let missing = ids;
    for (;;) {
      for (const [id, lease] of await this.repository.lease(missing, this.leaseSeconds())) {
        got.set(id, lease);
      }
      missing = missing.filter((id) => !got.has(id));
      if (missing.length === 0 || Date.now() >= deadline) {
        return got;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  private async pollTargets(
    boards: Array<{ id: string; slow: boolean; medium?: boolean | undefined; lease?: number | undefined }>,
    limiter: Limiter,
    lane: { budgetMs?: number; first?: boolean; waitForInFlight?: boolean } = {},
  ): Promise<{ polled: number; failed: number; handedOff: number }> {
    const { budgetMs, first = false, waitForInFlight = false } = lane;
    // Jobs enqueued before leases existed carry none: they take one now, or leave the board to whoever holds it.
    const unleased = boards.filter((b) => b.lease === undefined).map((b) => b.id);
    const late = unleased.length ? await this.repository.lease(unleased, this.leaseSeconds()) : new Map();
    const due = new Map<string, PollDue & { lease: number }>();
    for (const b of boards) {
      const lease = b.lease ?? late.get(b.id);
      if (lease !== undefined) {
        due.set(b.id, { slow: b.slow, medium: b.medium ?? false, lease, budgetMs });
      }
    }
    const targets = await this.repository.loadTargets([...due.keys()]);
    const deps: PollDeps = {
      client: (t) => this.clients.client(t),
      detect: (t) => this.clients.detect(t),
      saveFacts: async (t, detected) => {
        await this.boards.updateFacts(t.id, factsOf(detected));
      },
      observe: (op, seconds, reason) => this.metrics.observeOperation(op, seconds, reason),
      screen: (poll) => this.screen.flags(poll),
    };
    const previous = new Map(targets.map((t) => [t.id, t.lastPolledAt]));
    let polled = 0;
    let failed = 0;
    // Results are written as they come (WRITE_LINGER_MS gathers those ready together): a board that answers in
    // milliseconds is not kept waiting for its batch's slowest board.
    const writer = new BatchWriter<PollWrite>(async (rows) => {
      await this.repository.applyPolls(rows);
      await this.attend(rows);
      for (const w of rows) {
        polled++;
        failed += w.succeeded ? 0 : 1;
        this.metrics.polls.inc({ state: w.state });
        const before = previous.get(w.boardId);
        if (before) {
          this.metrics.staleness.observe((w.polledAt.getTime() - before.getTime()) / 1000);
        }
      }
    }, WRITE_LINGER_MS);
    const skipped: Array<{ id: string; lease: number }> = [];
    const overBudget: Array<{ id: string; lease: number }> = [];
    await Promise.all(
      targets.map(async (t) => {
        const d = due.get(t.id)!;
        // The state may have changed since the claim (decommissioned, credentials refused meanwhile).
        const write =
          t.decommissionedAt === null && t.state !== 'credentials_invalid'
            ? await limiter.run(() => this.pollOne(t, d, deps, waitForInFlight), { first })
            : null;
        if (write === 'over_budget') {
          overBudget.push({ id: t.id, lease: d.lease });
        } else if (write) {
          writer.add(write);
        } else {
          skipped.push({ id: t.id, lease: d.lease });
        }
      }),
    );
    try {
      await writer.close();
    } catch (err) {
      // A write failed and its boards' results are lost: their leases go back now, so they are polled again at their
      // next slot instead of staying held for the whole lease (interval + LEASE_REQUESTS timeouts). Leases already
      // given back by a write, or taken by a newer claim, are left as they are.
      // (With the database gone, this fails too and the leases run out as before: the write's error is the one told.)
      await this.repository.releaseLeases([...due].map(([id, d]) => ({ id, lease: d.lease }))).catch(() => undefined);
      throw err;
    }
    await this.repository.releaseLeases(skipped);
    await this.repository.handToLaggingLane(overBudget);
    return { polled, failed, handedOff: overBudget.length };
  }

  /**
   * The written polls the alert screen flagged: their boards are evaluated for new alerts now. A failure here is
   * logged, never the write's: the polls are stored, and the alerts' evaluation pass reads every board now and then.
   */
  private async attend(rows: PollWrite[]): Promise<void> {
    const flagged: string[] = [];
    for (const w of rows) {
      if (w.attention) {
        flagged.push(w.boardId);
      }
    }
    if (flagged.length === 0) {
      return;
    }
    try {
      await this.screen.written(flagged);
    } catch (err) {
      this.logger.warn(
        `alert evaluation of ${flagged.length} polled board(s) failed: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }

  private async pollOne(
    target: PollTarget,
    due: PollDue & { lease: number },
    deps: PollDeps,
    waitForInFlight: boolean,
  ): Promise<PollWrite | 'over_budget' | null> {
    // Two overlapping polls of one board could each log in; with a wrong password that is two failures towards
    // the board's ban. One poll per board at a time, and never a second login with refused credentials.
    // A poll asked for in a request holds a lease the one in flight lacks (a new address or new credentials void
    // it): it waits for that poll to end, whose answer cannot be written, and then asks the board itself.
    for (let running = this.inFlight.get(target.id); running; running = this.inFlight.get(target.id)) {
      if (!waitForInFlight) {
        return null;
      }
      await running.catch(() => undefined);
    }
    const policy = reachabilityPolicy(this.config.polling, target.pollIntervalSeconds);
    const refusal = this.clients.refusal(target);
    if (refusal !== undefined && target.state !== 'credentials_invalid') {
      // The poll that met the refusal lost its lease before writing: record it now, without logging in again.
      return { ...refusedPoll(target, refusal, policy, deps.screen), lease: due.lease, lagging: false };
    }
    if (this.clients.withheld(target)) {
      return null;
    }
    const started = performance.now();
    const polling = pollBoard(target, due, policy, deps);
    this.inFlight.set(target.id, polling);
    try {
      const polled = await polling;
      if (polled.state === 'credentials_invalid') {
        this.clients.markRefused(target, polled.stateReason ?? 'the board refused the stored credentials');
      }
      const slow = performance.now() - started >= LAGGING_SHARE_OF_TIMEOUT * this.config.polling.timeoutMs;
      return { ...polled, lease: due.lease, lagging: polled.noAnswer || slow };
    } catch (err) {
      if (err instanceof PollOverBudget) {
        return 'over_budget';
      }
      // A bug or a corrupt credential must not sink the other boards of the batch.
      this.logger.error(
        `poll of board ${target.id} failed unexpectedly: ${err instanceof Error ? err.stack : String(err)}`,
      );
      return null;
    } finally {
      if (this.inFlight.get(target.id) === polling) {
        this.inFlight.delete(target.id);
      }
    }
  }

  @JobHandler(compactThermalJob)
  async compactThermal(): Promise<{
    rollups: number;
    createdPartitions: number;
    droppedPartitions: number;
    deletedRaw: number;
    deletedRollups: number;
  }> {
    const now = Date.now();
    const bucketMs = THERMAL_BUCKET_SECONDS * 1000;
    // Partitions first: the hour being written gets its own before the compaction reads it (rows that waited in the
    // default partition move there), and raw retention is whole hourly partitions dropped, not rows deleted.
    const partitions = await this.repository.maintainThermalPartitions(
      new Date(now),
      THERMAL_PARTITIONS_AHEAD_HOURS,
      new Date(now - this.config.polling.thermalRawRetentionHours * 3600_000),
    );
    // Recompute the last three buckets: the current one is still filling, the previous may have late samples.
    const since = new Date(Math.floor(now / bucketMs) * bucketMs - 2 * bucketMs);
    const [rollups = 0, deletedRollups = 0] = await this.repository.compactThermal(
      since,
      new Date(now - this.config.polling.thermalRollupRetentionDays * 86_400_000),
      THERMAL_BUCKET_SECONDS,
    );
    this.metrics.jobOutcomes.inc({ job: compactThermalJob.name, outcome: 'completed' });
    return {
      rollups,
      createdPartitions: partitions.created,
      droppedPartitions: partitions.dropped,
      deletedRaw: partitions.deleted,
      deletedRollups,
    };
  }
}
