import { Injectable } from '@nestjs/common';
import { Prisma, type Board } from '../generated/prisma/client.js';
import { PrismaService } from '../prisma/prisma.service.js';
import { rowsJson } from './json-text.js';
import { MEDIUM_POLL_EVERY } from './polling.settings.js';

/** Scheduler lock id: pg_try_advisory_xact_lock(hashtext('tpfleet:poll-scheduler')). */
const SCHEDULER_LOCK = 'tpfleet:poll-scheduler';

/**
 * What a poll reads of a board: how to reach it (address, sealed credentials, pin, dialect), its reachability, its
 * schedule and its labels (the alert screen's selectors). Not its notes or capabilities (a JSON array of some 50
 * operation ids): every poll loads its board, so each column here is decoded about interval ÷ boards times a second.
 */
const POLL_COLUMNS = [
  'id',
  'name',
  // For the alert screen's selectors (PollScreen.flags): a rule with a selector judges only the boards it matches.
  'labels',
  'baseUrl',
  'credentialKind',
  'credentialSealed',
  'credentialVersion',
  'tlsFingerprint',
  'dialect',
  'daemonVersion',
  'firmwareVersion',
  'state',
  'bannedUntil',
  'consecutiveFailures',
  'lastPolledAt',
  'pollIntervalSeconds',
  'decommissionedAt',
] as const satisfies ReadonlyArray<keyof Board>;
const POLL_SQL = Prisma.raw(POLL_COLUMNS.map((c) => `b."${c}"`).join(', '));

export type PollTarget = Pick<Board, (typeof POLL_COLUMNS)[number]> & {
  /** From the board's schedule: fetch /about on this poll. */
  aboutDue: boolean;
  lastUptimeSeconds: number | null;
};

/** A board the scheduler claimed: its lease, its lane and which cadences are due. */
export interface ClaimedBoard {
  id: string;
  lease: number;
  lagging: boolean;
  /** Cut off at the fast lane's budget last time: polled ahead of the lagging lane's other boards. */
  handedOff: boolean;
  slow: boolean;
  medium: boolean;
}

/** Everything one poll of one board changes, written for a whole batch in a few statements. */
export interface PollWrite {
  boardId: string;
  /** The lease the poll ran under: written only if it is still the board's (a newer claim drops this result). */
  lease: number;
  /** Poll the board in the lagging lane from now on (slow, or no answer). */
  lagging: boolean;
  /** The poll is dropped if the credentials changed meanwhile (the result belongs to the old ones). */
  credentialVersion: number;
  polledAt: Date;
  succeeded: boolean;
  state: string;
  stateChanged: boolean;
  stateReason: string | null;
  consecutiveFailures: number;
  /** Overrides the scheduler's slot (backoff, ban); null keeps it. */
  nextPollAt: Date | null;
  bannedUntil: Date | null;
  aboutDue: boolean;
  /** The poll got no answer at all (timeout, reset, refused connection): the lagging lane's sign. */
  noAnswer: boolean;
  reading: {
    /** GET /health; as the board's JSON text (JsonText) when the poll read it, written into the statement as is. */
    health?: unknown;
    /** GET /thermal, as `health`. */
    thermal?: unknown;
    firmwareCheck?: unknown;
    slots?: unknown;
    about?: unknown;
    /** GET /cooling, validated by the client ([CoolingDevice]). */
    cooling?: unknown;
    /** GET /sdcard's one record ({total, free, use}), validated by the client. */
    sdcard?: unknown;
    uptimeSeconds?: number | null;
  } | null;
  thermalSamples: Array<{ sensor: string; temperatureC: number }>;
  events: Array<{ kind: string; summary: string; detail?: unknown }>;
  /** The alert screen flagged this poll (PollScreen.flags): once written, its board is evaluated for new alerts. */
  attention: boolean;
}

/**
 * The firmware check and slots of a board's reading move forward only: both the poll and the slow lane write them,
 * and an older read never replaces a newer one. Shared by both upserts of "BoardReading".
 */
const FIRMWARE_READINGS_FORWARD_ONLY = Prisma.sql`
          "firmwareCheck" = CASE WHEN EXCLUDED."firmwareAt" >= "BoardReading"."firmwareAt"
              OR "BoardReading"."firmwareAt" IS NULL
            THEN COALESCE(EXCLUDED."firmwareCheck", "BoardReading"."firmwareCheck")
            ELSE "BoardReading"."firmwareCheck" END,
          "firmwareAt" = GREATEST(EXCLUDED."firmwareAt", "BoardReading"."firmwareAt"),
          "slots" = CASE WHEN EXCLUDED."slotsAt" >= "BoardReading"."slotsAt" OR "BoardReading"."slotsAt" IS NULL
            THEN COALESCE(EXCLUDED."slots", "BoardReading"."slots")
            ELSE "BoardReading"."slots" END,
          "slotsAt" = GREATEST(EXCLUDED."slotsAt", "BoardReading"."slotsAt")`;

@Injectable()
export class PollingRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Claims the boards whose poll is due and moves their next slot one interval on, in one statement, under a
   * transaction-scoped advisory lock. The lock makes one instance the scheduler per tick; the claim itself
   * (FOR UPDATE SKIP LOCKED + the UPDATE) would keep two schedulers from claiming the same board even without it.
   * Each claimed board gets a new lease (`pollLease` + 1, held until `pollLeaseUntil`): a board whose lease has not
   * run out is not claimed, so a poll slower than the interval is never joined by a second one, and a result is
   * written only under the lease it was claimed with.
   * Phase is preserved (next = previous slot + interval) so the jitter given at registration keeps boards spread;
   * a board more than an interval late is re-spread at random within the next interval. The medium slot moves
   * (mediumEvery − ½) intervals on, so it falls due again on the mediumEvery-th poll from now.
   * Returns null when another instance holds the lock.
   */
  async claimDue(options: {
    limit: number;
    defaultIntervalSeconds: number;
    slowIntervalSeconds: number;
    /** Lease length beyond the board's interval. */
    leaseExtraSeconds: number;
    /** false: leave the firmware reads due (the slow lane is behind); they are claimed on a later tick. */
    includeSlow?: boolean;
    /** false: leave the lagging lane's boards due (that lane is behind). */
    includeLagging?: boolean;
    mediumEvery?: number;
  }): Promise<ClaimedBoard[] | null> {
    const { limit, defaultIntervalSeconds, slowIntervalSeconds, leaseExtraSeconds } = options;
    const includeSlow = options.includeSlow ?? true;
    const includeLagging = options.includeLagging ?? true;
    const mediumEvery = options.mediumEvery ?? MEDIUM_POLL_EVERY;
    return this.prisma.transaction(async (rows) => {
      const [lock] = await rows<{ locked: boolean }>(Prisma.sql`
        SELECT pg_try_advisory_xact_lock(hashtext(${SCHEDULER_LOCK})) AS locked`);
      if (!lock?.locked) {
        return null;
      }
      return rows<ClaimedBoard>(Prisma.sql`
        WITH due AS (
          SELECT s."boardId", (s."nextSlowPollAt" <= now() AND ${includeSlow}) AS slow,
            s."nextMediumPollAt" <= now() AS medium,
            COALESCE(b."pollIntervalSeconds", ${defaultIntervalSeconds}) AS every
          FROM "BoardSchedule" s JOIN "Board" b ON b."id" = s."boardId"
          WHERE b."decommissionedAt" IS NULL
            AND b."state" <> 'credentials_invalid'
            AND s."nextPollAt" <= now()
            AND (s."pollLeaseUntil" IS NULL OR s."pollLeaseUntil" <= now())
            -- A lagging lane that is behind still takes the boards the fast lane handed it (few, and polled first).
            AND (NOT s."pollLagging" OR s."pollHandedOff" OR ${includeLagging})
          ORDER BY s."nextPollAt"
          LIMIT ${limit}
          FOR UPDATE OF s SKIP LOCKED
        )
        UPDATE "BoardSchedule" s SET
          "nextPollAt" = CASE
            WHEN s."nextPollAt" + make_interval(secs => due.every) > now() THEN s."nextPollAt" + make_interval(secs => due.every)
            ELSE now() + make_interval(secs => due.every * random())
          END,
          "nextSlowPollAt" = CASE
            WHEN due.slow THEN now() + make_interval(secs => ${slowIntervalSeconds}::float8 * (0.9 + 0.2 * random()))
            ELSE s."nextSlowPollAt"
          END,
          "nextMediumPollAt" = CASE
            WHEN due.medium THEN now() + make_interval(secs => due.every * (${mediumEvery}::float8 - 0.5))
            ELSE s."nextMediumPollAt"
          END,
          "pollLease" = s."pollLease" + 1,
          "pollLeaseUntil" = now() + make_interval(secs => due.every + ${leaseExtraSeconds}::float8)
        FROM due
        WHERE s."boardId" = due."boardId"
        RETURNING s."boardId"::text AS id, s."pollLease" AS lease, s."pollLagging" AS lagging,
          s."pollHandedOff" AS "handedOff", due.slow AS slow,
          due.medium AS medium`);
    });
  }

  /**
   * Leases boards outside the scheduler ("poll now", registration, jobs queued before leases existed): only those
   * nobody holds. Returns the lease of each board it got.
   */
  async lease(ids: string[], seconds: number): Promise<Map<string, number>> {
    if (ids.length === 0) {
      return new Map();
    }
    const rows = await this.prisma.rows<{ id: string; lease: number }>(Prisma.sql`
      UPDATE "BoardSchedule" SET "pollLease" = "pollLease" + 1,
        "pollLeaseUntil" = now() + make_interval(secs => ${seconds}::float8)
      WHERE "boardId" = ANY(${ids}::uuid[]) AND ("pollLeaseUntil" IS NULL OR "pollLeaseUntil" <= now())
      RETURNING "boardId"::text AS id, "pollLease" AS lease`);
    return new Map(rows.map((r) => [r.id, r.lease]));
  }

  /**
   * Boards whose fast-lane poll ran out of its budget (nothing of it is written): into the lagging lane, due now, the
   * lease given back. Only under the lease the poll ran with; their state and history are untouched.
   */
  async handToLaggingLane(leases: Array<{ id: string; lease: number }>): Promise<void> {
    if (leases.length === 0) {
      return;
    }
    await this.prisma.execute(Prisma.sql`
      UPDATE "BoardSchedule" s SET "pollLagging" = true, "pollHandedOff" = true, "nextPollAt" = now(),
        "pollLeaseUntil" = NULL
      FROM jsonb_to_recordset(${JSON.stringify(leases)}::jsonb) AS r(id uuid, lease int)
      WHERE s."boardId" = r.id AND s."pollLease" = r.lease`);
  }

  /** Gives back leases of boards not polled after all (decommissioned meanwhile, credentials refused, …). */
  async releaseLeases(leases: Array<{ id: string; lease: number }>): Promise<void> {
    if (leases.length === 0) {
      return;
    }
    await this.prisma.execute(Prisma.sql`
      UPDATE "BoardSchedule" s SET "pollLeaseUntil" = NULL
      FROM jsonb_to_recordset(${JSON.stringify(leases)}::jsonb) AS r(id uuid, lease int)
      WHERE s."boardId" = r.id AND s."pollLease" = r.lease`);
  }

  /** The boards of one batch with the last uptime seen: one query, whatever the batch size (by the primary key). */
  async loadTargets(ids: string[]): Promise<PollTarget[]> {
    if (ids.length === 0) {
      return [];
    }
    return this.prisma.rows<PollTarget>(Prisma.sql`
      SELECT ${POLL_SQL}, s."aboutDue", r."uptimeSeconds" AS "lastUptimeSeconds"
      FROM "Board" b JOIN "BoardSchedule" s ON s."boardId" = b."id"
        LEFT JOIN "BoardReading" r ON r."boardId" = b."id"
      WHERE b."id" = ANY(${ids}::uuid[])`);
  }

  /**
   * Writes a batch of polls in ONE statement (one round trip, atomic without BEGIN/COMMIT): board state (UPDATE),
   * latest readings (upsert), thermal samples and timeline events (INSERTs), as data-modifying CTEs, which
   * PostgreSQL runs to completion whether or not the final SELECT reads them. Rows travel as one JSON parameter per
   * table, so there is no per-board statement and no bound-parameter limit to split around; the answers a poll read
   * with their JSON text (JsonText) go into it as that text. An empty list is `[]` (no rows), which keeps the
   * statement's text the same for every batch.
   * A board's poll is written only under the lease it ran with and only if it is newer than the stored one; its
   * readings, samples and events only with it (they join the boards actually written). So a result that lost its
   * lease — a newer poll was claimed — changes nothing, and a transition is recorded once. Writing gives the lease
   * back, and so does a result refused under a lease still held.
   */
  async applyPolls(writes: PollWrite[]): Promise<void> {
    if (writes.length === 0) {
      return;
    }
    const boards: unknown[] = [];
    const readings: Array<Record<string, unknown>> = [];
    const samples: unknown[] = [];
    const events: unknown[] = [];
    for (const w of writes) {
      const at = w.polledAt.toISOString();
      boards.push({
        id: w.boardId,
        lease: w.lease,
        lagging: w.lagging,
        cv: w.credentialVersion,
        at,
        ok: w.succeeded,
        state: w.state,
        reason: w.stateReason,
        failures: w.consecutiveFailures,
        next: w.nextPollAt?.toISOString() ?? null,
        banned: w.bannedUntil?.toISOString() ?? null,
        about: w.aboutDue,
      });
      const r = w.reading;
      if (r !== null) {
        readings.push({
          id: w.boardId,
          health: r.health ?? null,
          health_at: r.health !== undefined ? at : null,
          thermal: r.thermal ?? null,
          thermal_at: r.thermal !== undefined ? at : null,
          fw: r.firmwareCheck ?? null,
          fw_at: r.firmwareCheck !== undefined ? at : null,
          slots: r.slots ?? null,
          slots_at: r.slots !== undefined ? at : null,
          about: r.about ?? null,
          about_at: r.about !== undefined ? at : null,
          cooling: r.cooling ?? null,
          cooling_at: r.cooling !== undefined ? at : null,
          sdcard: r.sdcard ?? null,
          sdcard_at: r.sdcard !== undefined ? at : null,
          uptime: r.uptimeSeconds ?? null,
        });
      }
      for (const sample of w.thermalSamples) {
        samples.push({ id: w.boardId, sensor: sample.sensor, at, t: sample.temperatureC });
      }
      for (const e of w.events) {
        events.push({ id: w.boardId, at, kind: e.kind, summary: e.summary, detail: e.detail ?? null });
      }
    }

    await this.prisma.execute(Prisma.sql`
      WITH polls AS (
        SELECT * FROM jsonb_to_recordset(${JSON.stringify(boards)}::jsonb) AS r(
          id uuid, lease int, lagging boolean, cv int, at timestamptz, ok boolean, state text, reason text,
          failures int, next timestamptz, banned timestamptz, about boolean)
      ),
      -- The schedule first (the lease is checked and the row locked there), then the board: the order
      -- BoardsRepository.update takes them in. Of the polls whose lease is still held, those to be written (same
      -- credentials, not decommissioned, newer than the stored poll; checked again on the board's row below) set the
      -- next slot and lane; every one gives the lease back.
      held AS (
        UPDATE "BoardSchedule" s SET
          "nextPollAt" = CASE WHEN w.writes THEN COALESCE(r.next, s."nextPollAt") ELSE s."nextPollAt" END,
          "aboutDue" = CASE WHEN w.writes THEN r.about ELSE s."aboutDue" END,
          "pollLagging" = CASE WHEN w.writes THEN r.lagging ELSE s."pollLagging" END,
          "pollHandedOff" = CASE WHEN w.writes THEN false ELSE s."pollHandedOff" END,
          "pollLeaseUntil" = NULL
        FROM polls r JOIN LATERAL (
          SELECT b."credentialVersion" = r.cv AND b."decommissionedAt" IS NULL
            AND (b."lastPolledAt" IS NULL OR b."lastPolledAt" < r.at) AS writes
          FROM "Board" b WHERE b."id" = r.id
        ) w ON true
        WHERE s."boardId" = r.id AND s."pollLease" = r.lease
        RETURNING s."boardId" AS id, w.writes
      ),
      board_rows AS (
        UPDATE "Board" b SET
          "lastPolledAt" = r.at,
          "lastSuccessAt" = CASE WHEN r.ok THEN GREATEST(r.at, b."lastSuccessAt") ELSE b."lastSuccessAt" END,
          "state" = r.state::"BoardState",
          "stateSince" = CASE WHEN b."state"::text <> r.state THEN r.at ELSE b."stateSince" END,
          "stateReason" = r.reason,
          "consecutiveFailures" = r.failures,
          "bannedUntil" = r.banned,
          "updatedAt" = now()
        FROM polls r JOIN held h ON h.id = r.id AND h.writes
        WHERE b."id" = r.id AND b."credentialVersion" = r.cv AND b."decommissionedAt" IS NULL
          AND (b."lastPolledAt" IS NULL OR b."lastPolledAt" < r.at)
        RETURNING b."id"
      ),
      reading_rows AS (
        INSERT INTO "BoardReading" ("boardId", "health", "healthAt", "thermal", "thermalAt", "firmwareCheck",
          "firmwareAt", "slots", "slotsAt", "about", "aboutAt", "cooling", "coolingAt", "sdcard", "sdcardAt",
          "uptimeSeconds")
        SELECT r.id, r.health, r.health_at, r.thermal, r.thermal_at, r.fw, r.fw_at, r.slots, r.slots_at, r.about,
          r.about_at, r.cooling, r.cooling_at, r.sdcard, r.sdcard_at, r.uptime
        FROM jsonb_to_recordset(${rowsJson(readings)}::jsonb) AS r(
          id uuid, health jsonb, health_at timestamptz, thermal jsonb, thermal_at timestamptz, fw jsonb,
          fw_at timestamptz, slots jsonb, slots_at timestamptz, about jsonb, about_at timestamptz, cooling jsonb,
          cooling_at timestamptz, sdcard jsonb, sdcard_at timestamptz, uptime float8)
        JOIN board_rows w ON w."id" = r.id
        ON CONFLICT ("boardId") DO UPDATE SET
          "health" = COALESCE(EXCLUDED."health", "BoardReading"."health"),
          "healthAt" = COALESCE(EXCLUDED."healthAt", "BoardReading"."healthAt"),
          "thermal" = COALESCE(EXCLUDED."thermal", "BoardReading"."thermal"),
          "thermalAt" = COALESCE(EXCLUDED."thermalAt", "BoardReading"."thermalAt"),
          ${FIRMWARE_READINGS_FORWARD_ONLY},
          "about" = COALESCE(EXCLUDED."about", "BoardReading"."about"),
          "aboutAt" = COALESCE(EXCLUDED."aboutAt", "BoardReading"."aboutAt"),
          "cooling" = COALESCE(EXCLUDED."cooling", "BoardReading"."cooling"),
          "coolingAt" = COALESCE(EXCLUDED."coolingAt", "BoardReading"."coolingAt"),
          "sdcard" = COALESCE(EXCLUDED."sdcard", "BoardReading"."sdcard"),
          "sdcardAt" = COALESCE(EXCLUDED."sdcardAt", "BoardReading"."sdcardAt"),
          "uptimeSeconds" = COALESCE(EXCLUDED."uptimeSeconds", "BoardReading"."uptimeSeconds")
      ),
      sample_rows AS (
        INSERT INTO "ThermalSample" ("boardId", "sensor", "at", "temperatureC")
        SELECT r.id, r.sensor, r.at, r.t
        FROM jsonb_to_recordset(${JSON.stringify(samples)}::jsonb) AS r(id uuid, sensor text, at timestamptz, t float8)
        JOIN board_rows w ON w."id" = r.id
      ),
      event_rows AS (
        INSERT INTO "BoardEvent" ("boardId", "at", "kind", "summary", "detail")
        SELECT r.id, r.at, r.kind, r.summary, r.detail
        FROM jsonb_to_recordset(${JSON.stringify(events)}::jsonb) AS r(
          id uuid, at timestamptz, kind text, summary text, detail jsonb)
        JOIN board_rows w ON w."id" = r.id
      )
      SELECT 1`);
  }

  /**
   * Writes a batch of slow-lane reads in one statement: the firmware check and slots readings (upsert, other
   * readings untouched), advisory failures on the timeline, and for boards to read again soon an earlier slow slot
   * (`retryAt`). Board state is not touched: that is the fast poll's.
   */
  async applySlowReads(
    reads: Array<{
      boardId: string;
      readAt: Date;
      firmwareCheck?: unknown;
      slots?: unknown;
      events: PollWrite['events'];
      retryAt: Date | null;
    }>,
  ): Promise<void> {
    if (reads.length === 0) {
      return;
    }
    const readings: unknown[] = [];
    const events: unknown[] = [];
    const retries: unknown[] = [];
    for (const r of reads) {
      const at = r.readAt.toISOString();
      if (r.firmwareCheck !== undefined || r.slots !== undefined) {
        readings.push({
          id: r.boardId,
          fw: r.firmwareCheck ?? null,
          fw_at: r.firmwareCheck !== undefined ? at : null,
          slots: r.slots ?? null,
          slots_at: r.slots !== undefined ? at : null,
        });
      }
      for (const e of r.events) {
        events.push({ id: r.boardId, at, kind: e.kind, summary: e.summary, detail: e.detail ?? null });
      }
      if (r.retryAt !== null) {
        retries.push({ id: r.boardId, retry: r.retryAt.toISOString() });
      }
    }
    await this.prisma.execute(Prisma.sql`
      WITH reading_rows AS (
        INSERT INTO "BoardReading" ("boardId", "firmwareCheck", "firmwareAt", "slots", "slotsAt")
        SELECT r.id, r.fw, r.fw_at, r.slots, r.slots_at
        FROM jsonb_to_recordset(${JSON.stringify(readings)}::jsonb) AS r(
          id uuid, fw jsonb, fw_at timestamptz, slots jsonb, slots_at timestamptz)
        JOIN "Board" b ON b."id" = r.id
        ON CONFLICT ("boardId") DO UPDATE SET
          ${FIRMWARE_READINGS_FORWARD_ONLY}
      ),
      event_rows AS (
        INSERT INTO "BoardEvent" ("boardId", "at", "kind", "summary", "detail")
        SELECT r.id, r.at, r.kind, r.summary, r.detail
        FROM jsonb_to_recordset(${JSON.stringify(events)}::jsonb) AS r(
          id uuid, at timestamptz, kind text, summary text, detail jsonb)
        JOIN "Board" b ON b."id" = r.id
      ),
      retry_rows AS (
        UPDATE "BoardSchedule" s SET "nextSlowPollAt" = LEAST(s."nextSlowPollAt", r.retry)
        FROM jsonb_to_recordset(${JSON.stringify(retries)}::jsonb) AS r(id uuid, retry timestamptz)
        WHERE s."boardId" = r.id
      )
      SELECT 1`);
  }

  /**
   * Partition upkeep of the raw samples, one statement (thermal_sample_maintain, defined in
   * prisma/migrations/20261125030000_thermal_sample_partitions): drops the hourly partitions that end at or before
   * `keepAfter`, deletes the default partition's rows older than that (normally none), creates the partitions of
   * `now`'s hour and `aheadHours` after it. Idempotent, and safe with two workers running it at once.
   */
  async maintainThermalPartitions(
    now: Date,
    aheadHours: number,
    keepAfter: Date,
  ): Promise<{ created: number; dropped: number; deleted: number }> {
    const [row] = await this.prisma.$queryRaw<Array<{ created: number; dropped: number; deleted: bigint }>>`
      SELECT "created", "dropped", "deleted"
      FROM "thermal_sample_maintain"(${now}::timestamptz, ${aheadHours}::int, ${keepAfter}::timestamptz)`;
    return { created: row?.created ?? 0, dropped: row?.dropped ?? 0, deleted: Number(row?.deleted ?? 0) };
  }

  /**
   * 5-minute means of the samples since `since` (recomputed from raw rows, so re-running is harmless), then the
   * retention of the means. The bound on "at" is a value PostgreSQL sees at planning, so it scans only the
   * partitions of the last buckets (and the default one), never the day of raw history. Two statements, each atomic
   * on its own, and not a Prisma transaction: those give up after 5 s, and the upsert of a 10,000-board fleet's last
   * minutes takes longer on a busy database (bench/thermal.bench.ts failed so over one hour of samples).
   */
  async compactThermal(since: Date, rollupBefore: Date, bucketSeconds: number): Promise<number[]> {
    const rollups = await this.prisma.$executeRaw`
        INSERT INTO "ThermalRollup" ("boardId", "sensor", "bucket", "mean", "min", "max", "samples")
        SELECT "boardId", "sensor", to_timestamp(floor(extract(epoch FROM "at") / ${bucketSeconds}) * ${bucketSeconds}) AS bucket,
          avg("temperatureC"), min("temperatureC"), max("temperatureC"), count(*)::int
        FROM "ThermalSample"
        WHERE "at" >= ${since}
        GROUP BY 1, 2, 3
        ON CONFLICT ("boardId", "sensor", "bucket") DO UPDATE SET
          "mean" = EXCLUDED."mean", "min" = EXCLUDED."min", "max" = EXCLUDED."max", "samples" = EXCLUDED."samples"`;
    const deleted = await this.prisma.$executeRaw`DELETE FROM "ThermalRollup" WHERE "bucket" < ${rollupBefore}`;
    return [rollups, deleted];
  }
}
