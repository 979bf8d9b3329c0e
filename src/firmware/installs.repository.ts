import { Injectable } from '@nestjs/common';
import { Prisma, type FirmwareInstall } from '../generated/prisma/client.js';
import type { BoardFacts } from '../boards/board-facts.js';
import { BoardsRepository } from '../boards/boards.repository.js';
import { PrismaService } from '../prisma/prisma.service.js';
import { ACTIVE_STATUSES, type InstallStatus } from './wave-plan.js';

/** Row types other files may name; the client itself stays here. */
export type { FirmwareInstall } from '../generated/prisma/client.js';

export type InstallRow = FirmwareInstall;

/** A new install row (single install, or one board of a rollout). */
export type NewInstall = Prisma.FirmwareInstallUncheckedCreateInput;

/** What an install run records on a transition: the columns a runner may change. */
export type InstallChange = Partial<
  Pick<InstallRow, 'reason' | 'fromVersion' | 'installSentAt' | 'rebootSentAt' | 'baselineRolledBack' | 'notBefore'>
> & { status?: InstallStatus; slots?: object };

/**
 * The per-board state machine's storage. Every transition is a conditional UPDATE: a runner acts on a board only
 * while it holds the row's lease (`leaseOwner`, renewed by a heartbeat), so a job re-run after a crash, a stalled
 * BullMQ job coming back, and a re-dispatch cannot act on one board at the same time.
 */
@Injectable()
export class InstallsRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly boards: BoardsRepository,
  ) {}

  find(id: string): Promise<InstallRow | null> {
    return this.prisma.firmwareInstall.findUnique({ where: { id } });
  }

  create(data: NewInstall): Promise<InstallRow> {
    return this.prisma.firmwareInstall.create({ data });
  }

  /** The board's install that is not final yet (single or in a rollout), if any. */
  findOpenForBoard(boardId: string): Promise<InstallRow | null> {
    return this.prisma.firmwareInstall.findFirst({
      where: { boardId, status: { in: ['pending', 'awaiting_window', ...ACTIVE_STATUSES] } },
    });
  }

  /** Boards among `boardIds` with an install that is not final (another rollout or a single install). */
  async busyBoards(boardIds: string[]): Promise<Set<string>> {
    if (!boardIds.length) {
      return new Set();
    }
    const rows = await this.prisma.firmwareInstall.findMany({
      where: { boardId: { in: boardIds }, status: { in: ['pending', 'awaiting_window', ...ACTIVE_STATUSES] } },
      select: { boardId: true },
    });
    return new Set(rows.map((r) => r.boardId));
  }

  /** When each of these boards last finished an activated install of `version` (fresher than its polled facts). */
  async lastPromotedAt(boardIds: string[], version: string): Promise<Map<string, Date>> {
    if (!boardIds.length) {
      return new Map();
    }
    const rows = await this.prisma.firmwareInstall.groupBy({
      by: ['boardId'],
      where: { boardId: { in: boardIds }, version, status: 'succeeded', activate: true },
      _max: { finishedAt: true },
    });
    return new Map(rows.filter((r) => r._max.finishedAt).map((r) => [r.boardId, r._max.finishedAt!]));
  }

  /**
   * Takes the lease: only when nobody holds it (just dispatched) or the holder stopped renewing it (crashed).
   * Returns the row as claimed, or null (someone else is on it, or it is no longer active).
   */
  async claim(id: string, owner: string, leaseMs: number): Promise<InstallRow | null> {
    const rows = await this.prisma.$queryRaw<InstallRow[]>`
      UPDATE "FirmwareInstall" SET
        "leaseOwner" = ${owner},
        "leaseUntil" = now() + make_interval(secs => ${leaseMs / 1000}::float8),
        "startedAt" = COALESCE("startedAt", now()),
        "updatedAt" = now()
      WHERE "id" = ${id}::uuid
        AND "status" IN (${sqlList(ACTIVE_STATUSES)})
        AND ("leaseOwner" IS NULL OR "leaseUntil" < now())
      RETURNING *`;
    return rows[0] ?? null;
  }

  /** Renews the lease; false when it was lost (the runner must stop acting). */
  async renew(id: string, owner: string, leaseMs: number): Promise<boolean> {
    const n = await this.prisma.$executeRaw`
      UPDATE "FirmwareInstall" SET "leaseUntil" = now() + make_interval(secs => ${leaseMs / 1000}::float8)
      WHERE "id" = ${id}::uuid AND "leaseOwner" = ${owner}`;
    return n === 1;
  }

  /** A transition by the lease holder; false when the lease was lost. */
  step(id: string, owner: string, change: InstallChange): Promise<boolean> {
    return this.update(id, owner, change);
  }

  private async update(
    id: string,
    owner: string,
    data: Prisma.FirmwareInstallUpdateManyMutationInput,
  ): Promise<boolean> {
    const { count } = await this.prisma.firmwareInstall.updateMany({ where: { id, leaseOwner: owner }, data });
    return count === 1;
  }

  /** A final transition by the lease holder: the lease is released with it. */
  finish(
    id: string,
    owner: string,
    status: InstallStatus,
    reason: string | null,
    extra: InstallChange = {},
  ): Promise<boolean> {
    return this.update(id, owner, {
      ...extra,
      status,
      reason,
      leaseOwner: null,
      leaseUntil: null,
      finishedAt: new Date(),
    });
  }

  /**
   * A verified install's success and what it proved about the board, in one transaction: the install row (only
   * while this runner holds its lease) and the board's registry facts (firmware version, daemon and capabilities
   * when /about was read) and its slots reading. Nobody sees a succeeded install beside the old version.
   */
  async finishVerified(
    id: string,
    owner: string,
    reason: string,
    verified: {
      boardId: string;
      slots: object;
      facts: Partial<BoardFacts>;
    },
  ): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      const now = new Date();
      const { count } = await tx.firmwareInstall.updateMany({
        where: { id, leaseOwner: owner },
        data: {
          status: 'succeeded',
          reason,
          slots: verified.slots,
          leaseOwner: null,
          leaseUntil: null,
          finishedAt: now,
        },
      });
      if (count !== 1) {
        return false;
      }
      await this.boards.updateFacts(verified.boardId, verified.facts, tx);
      await tx.boardReading.upsert({
        where: { boardId: verified.boardId },
        create: { boardId: verified.boardId, slots: verified.slots, slotsAt: now },
        update: { slots: verified.slots, slotsAt: now },
      });
      return true;
    });
  }

  /** Gives the board back to the dispatcher (paused rollout, window closed, retry later). */
  release(
    id: string,
    owner: string,
    status: 'pending' | 'awaiting_window',
    change: InstallChange = {},
  ): Promise<boolean> {
    return this.update(id, owner, { ...change, status, leaseOwner: null, leaseUntil: null });
  }

  /**
   * The runner's process is stopping: its lease ends now instead of at its term, so the rollout clock re-dispatches
   * the board at its next tick (`redispatchLapsed`) and any worker may claim it. The status stays what the board has
   * been through; the next run starts from the board's slots.
   */
  async handBack(id: string, owner: string): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE "FirmwareInstall" SET "leaseOwner" = NULL, "leaseUntil" = now(), "updatedAt" = now()
      WHERE "id" = ${id}::uuid AND "leaseOwner" = ${owner}`;
  }

  /** Back in line before it started (its rollout was paused after the dispatch): the attempt does not count. */
  requeueUnstarted(id: string, owner: string): Promise<boolean> {
    return this.update(id, owner, {
      status: 'pending',
      leaseOwner: null,
      leaseUntil: null,
      attempts: { decrement: 1 },
    });
  }

  /**
   * Active installs whose lease lapsed (the runner died, or the job was lost between commit and enqueue): each is
   * given a new dispatch number and a fresh dispatch lease, and returned for enqueueing.
   */
  redispatchLapsed(dispatchLeaseMs: number, limit = 500): Promise<Array<{ id: string; dispatches: number }>> {
    return this.prisma.$queryRaw`
      WITH lapsed AS (
        SELECT "id" FROM "FirmwareInstall"
        WHERE "status" IN (${sqlList(ACTIVE_STATUSES)}) AND "leaseUntil" < now()
        ORDER BY "leaseUntil" LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      )
      UPDATE "FirmwareInstall" i SET
        "dispatches" = i."dispatches" + 1,
        "leaseOwner" = NULL,
        "leaseUntil" = now() + make_interval(secs => ${dispatchLeaseMs / 1000}::float8)
      FROM lapsed WHERE i."id" = lapsed."id"
      RETURNING i."id"::text AS id, i."dispatches" AS dispatches`;
  }

  /** Per-board history of one board (newest first), for the board's firmware view. */
  listForBoard(boardId: string, take: number): Promise<InstallRow[]> {
    return this.prisma.firmwareInstall.findMany({ where: { boardId }, orderBy: { createdAt: 'desc' }, take });
  }
}

/** `IN (...)` of string constants. */
export function sqlList(values: readonly string[]): Prisma.Sql {
  return Prisma.join([...values]);
}
