import { Injectable } from '@nestjs/common';
import { Prisma, type FirmwareInstall, type FirmwareRollout } from '../generated/prisma/client.js';
import { PrismaService } from '../prisma/prisma.service.js';
import { sqlList } from './installs.repository.js';
import { ACTIVE_STATUSES, FAILURE_STATUSES, type WaveCounts } from './wave-plan.js';

export type RolloutRow = FirmwareRollout;
type Tx = Prisma.TransactionClient;

/** One board of a rollout's frozen list, as the plan placed it. */
export type NewRolloutInstall = Omit<Prisma.FirmwareInstallCreateManyInput, 'rolloutId'>;

/** What the driver and the operator's actions change on a rollout. */
export type RolloutChange = Partial<
  Pick<RolloutRow, 'status' | 'statusReason' | 'currentWave' | 'wavePhase' | 'soakUntil' | 'startedAt' | 'finishedAt'>
> & {
  /** The operator overrode the error threshold of this wave (it does not pause the rollout again). */
  ackErrorsOfWave?: number;
};

/**
 * The rollout's row lock for the length of one transaction (`RolloutsRepository.withLock`): every read and write
 * made through it is inside that transaction, so callers never hold a transaction handle.
 */
export class RolloutLock {
  constructor(
    private readonly repository: RolloutsRepository,
    private readonly tx: Tx,
    private readonly rolloutId: string,
  ) {}

  update(change: RolloutChange) {
    return this.repository.update(this.tx, this.rolloutId, change);
  }

  addInstalls(installs: NewRolloutInstall[]) {
    return this.repository.addInstalls(this.tx, this.rolloutId, installs);
  }

  waveStats() {
    return this.repository.waveStats(this.tx, this.rolloutId);
  }

  activeCounts() {
    return this.repository.activeCounts(this.tx, this.rolloutId);
  }

  dispatchable(upToWave: number, windowOpen: boolean, limit: number) {
    return this.repository.dispatchable(this.tx, this.rolloutId, upToWave, windowOpen, limit);
  }

  markQueued(ids: string[], dispatchLeaseMs: number) {
    return this.repository.markQueued(this.tx, ids, dispatchLeaseMs);
  }

  cancelOpen(reason: string) {
    return this.repository.cancelOpen(this.tx, this.rolloutId, reason);
  }

  retryFailed(statuses: readonly string[]) {
    return this.repository.retryFailed(this.tx, this.rolloutId, statuses);
  }
}

export interface WaveStat extends WaveCounts {
  wave: number;
  byStatus: Record<string, number>;
}

@Injectable()
export class RolloutsRepository {
  constructor(private readonly prisma: PrismaService) {}

  async create(
    rollout: Prisma.FirmwareRolloutUncheckedCreateInput,
    installs: NewRolloutInstall[],
  ): Promise<RolloutRow> {
    return this.prisma.$transaction(async (tx) => {
      const created = await tx.firmwareRollout.create({ data: rollout });
      await this.addInstalls(tx, created.id, installs);
      return created;
    });
  }

  async addInstalls(tx: Tx, rolloutId: string, installs: NewRolloutInstall[]) {
    for (let i = 0; i < installs.length; i += 1000) {
      await tx.firmwareInstall.createMany({ data: installs.slice(i, i + 1000).map((row) => ({ ...row, rolloutId })) });
    }
  }

  find(id: string): Promise<RolloutRow | null> {
    return this.prisma.firmwareRollout.findUnique({ where: { id } });
  }

  installs(rolloutId: string): Promise<FirmwareInstall[]> {
    return this.prisma.firmwareInstall.findMany({
      where: { rolloutId },
      orderBy: [{ wave: { sort: 'asc', nulls: 'last' } }, { position: 'asc' }],
    });
  }

  list(
    status: string | undefined,
    after: { sort: string; id: string } | undefined,
    take: number,
  ): Promise<RolloutRow[]> {
    const where = [
      status ? Prisma.sql`"status" = ${status}` : Prisma.sql`true`,
      after ? Prisma.sql`("createdAt", "id"::text) < (${after.sort}::timestamptz, ${after.id})` : Prisma.sql`true`,
    ];
    return this.prisma.$queryRaw<RolloutRow[]>`
      SELECT * FROM "FirmwareRollout" WHERE ${Prisma.join(where, ' AND ')}
      ORDER BY "createdAt" DESC, "id"::text DESC LIMIT ${take}`;
  }

  waveStatsOf(rolloutId: string): Promise<Map<number, WaveStat>> {
    return this.waveStats(this.prisma, rolloutId);
  }

  /** Per-wave counts of one rollout (one query). */
  async waveStats(client: Tx | PrismaService, rolloutId: string): Promise<Map<number, WaveStat>> {
    const rows = await client.$queryRaw<Array<{ wave: number | null; status: string; soak: boolean; n: number }>>`
      SELECT "wave", "status", "soakFailed" AS soak, count(*)::int AS n
      FROM "FirmwareInstall" WHERE "rolloutId" = ${rolloutId}::uuid
      GROUP BY "wave", "status", "soakFailed"`;
    const stats = new Map<number, WaveStat>();
    for (const row of rows) {
      if (row.wave === null) {
        continue;
      }
      const s = stats.get(row.wave) ?? {
        wave: row.wave,
        total: 0,
        succeeded: 0,
        failed: 0,
        finished: 0,
        open: 0,
        byStatus: {},
      };
      s.total += row.n;
      s.byStatus[row.status] = (s.byStatus[row.status] ?? 0) + row.n;
      const failure = (FAILURE_STATUSES as readonly string[]).includes(row.status) || row.soak;
      if (failure) {
        s.failed += row.n;
      } else if (row.status === 'succeeded' || row.status === 'skipped') {
        s.succeeded += row.n;
      }
      if (['succeeded', 'skipped', 'failed', 'rolled_back', 'stuck', 'blocked', 'cancelled'].includes(row.status)) {
        s.finished += row.n;
      } else {
        s.open += row.n;
      }
      stats.set(row.wave, s);
    }
    return stats;
  }

  /** Runs `fn` holding the rollout's row lock: one dispatcher per rollout at a time, across processes. */
  withLock<T>(rolloutId: string, fn: (lock: RolloutLock, rollout: RolloutRow) => Promise<T>): Promise<T | null> {
    return this.prisma.$transaction(
      async (tx) => {
        const [rollout] = await tx.$queryRaw<RolloutRow[]>`
          SELECT * FROM "FirmwareRollout" WHERE "id" = ${rolloutId}::uuid FOR UPDATE`;
        return rollout ? fn(new RolloutLock(this, tx, rolloutId), rollout) : null;
      },
      { timeout: 30_000, maxWait: 30_000 },
    );
  }

  update(tx: Tx, id: string, change: RolloutChange) {
    const { ackErrorsOfWave, ...data } = change;
    return tx.firmwareRollout.update({
      where: { id },
      data: { ...data, errorsAcked: ackErrorsOfWave === undefined ? undefined : { push: ackErrorsOfWave } },
    });
  }

  /** Boards the dispatcher may start now: pending (backoff over) or waiting for a window that is open. */
  dispatchable(tx: Tx, rolloutId: string, upToWave: number, windowOpen: boolean, limit: number) {
    const statuses = windowOpen ? ['pending', 'awaiting_window'] : ['pending'];
    return tx.$queryRaw<Array<{ id: string; rack: string | null }>>`
      SELECT "id"::text AS id, "rack" FROM "FirmwareInstall"
      WHERE "rolloutId" = ${rolloutId}::uuid AND "wave" <= ${upToWave}
        AND "status" IN (${sqlList(statuses)}) AND ("notBefore" IS NULL OR "notBefore" <= now())
      ORDER BY "wave", "position" LIMIT ${limit}`;
  }

  async activeCounts(
    tx: Tx,
    rolloutId: string,
  ): Promise<{ rollout: number; fleet: number; perRack: Map<string, number> }> {
    const rows = await tx.$queryRaw<Array<{ rack: string | null; mine: number; n: number }>>`
      SELECT "rack", count(*) FILTER (WHERE "rolloutId" = ${rolloutId}::uuid)::int AS mine, count(*)::int AS n
      FROM "FirmwareInstall" WHERE "status" IN (${sqlList(ACTIVE_STATUSES)}) GROUP BY "rack"`;
    const perRack = new Map<string, number>();
    let rollout = 0;
    let fleet = 0;
    for (const row of rows) {
      rollout += row.mine;
      fleet += row.n;
      if (row.rack !== null) {
        perRack.set(row.rack, row.n);
      }
    }
    return { rollout, fleet, perRack };
  }

  /** Marks the chosen boards queued with a dispatch lease; returns the job ids' parts. */
  markQueued(tx: Tx, ids: string[], dispatchLeaseMs: number) {
    if (!ids.length) {
      return Promise.resolve([] as Array<{ id: string; dispatches: number }>);
    }
    return tx.$queryRaw<Array<{ id: string; dispatches: number }>>`
      UPDATE "FirmwareInstall" SET
        "status" = 'queued', "dispatches" = "dispatches" + 1, "attempts" = "attempts" + 1, "leaseOwner" = NULL,
        "leaseUntil" = now() + make_interval(secs => ${dispatchLeaseMs / 1000}::float8), "notBefore" = NULL, "updatedAt" = now()
      WHERE "id"::text IN (${Prisma.join(ids)})
      RETURNING "id"::text AS id, "dispatches"`;
  }

  /** Stops what has not started: pending and window-waiting boards become `status` (cancelled). */
  cancelOpen(tx: Tx, rolloutId: string, reason: string) {
    return tx.firmwareInstall.updateMany({
      where: { rolloutId, status: { in: ['pending', 'awaiting_window'] } },
      data: { status: 'cancelled', reason, finishedAt: new Date() },
    });
  }

  /** Puts failed boards back in line (operator retry). */
  retryFailed(tx: Tx, rolloutId: string, statuses: readonly string[]) {
    return tx.firmwareInstall.updateMany({
      where: { rolloutId, status: { in: [...statuses] } },
      data: {
        status: 'pending',
        reason: null,
        finishedAt: null,
        notBefore: null,
        soakFailed: false,
        installSentAt: null,
        rebootSentAt: null,
      },
    });
  }

  /** Ids of rollouts the clock looks after: running ones, and scheduled ones whose start time came. */
  async dueRollouts(): Promise<{ running: string[]; toStart: string[] }> {
    const rows = await this.prisma.firmwareRollout.findMany({
      where: { OR: [{ status: 'running' }, { status: 'scheduled', startAt: { lte: new Date() } }] },
      select: { id: true, status: true },
    });
    return {
      running: rows.filter((r) => r.status === 'running').map((r) => r.id),
      toStart: rows.filter((r) => r.status === 'scheduled').map((r) => r.id),
    };
  }

  /** Boards of a wave that reached the version (the soak watches them). */
  soakedBoards(rolloutId: string, wave: number) {
    return this.prisma.firmwareInstall.findMany({
      where: { rolloutId, wave, status: { in: ['succeeded', 'skipped'] }, soakFailed: false },
      select: { id: true, boardId: true },
    });
  }

  markSoakFailed(id: string, reason: string) {
    return this.prisma.firmwareInstall.update({ where: { id }, data: { soakFailed: true, reason } });
  }
}
