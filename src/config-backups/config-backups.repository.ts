import { Injectable } from '@nestjs/common';
import {
  Prisma,
  type ConfigBoardState,
  type ConfigPolicy,
  type ConfigPush,
  type ConfigPushResult,
  type ConfigRestore,
  type ConfigTemplate,
  type ConfigVersion,
} from '../generated/prisma/client.js';
import { PrismaService } from '../prisma/prisma.service.js';

export type VersionRow = ConfigVersion;
export type BoardStateRow = ConfigBoardState;
export type RestoreRow = ConfigRestore;
export type TemplateRow = ConfigTemplate;
export type PushRow = ConfigPush;
export type PushResultRow = ConfigPushResult;
export type PolicyRow = ConfigPolicy;

export interface NewVersion {
  boardId: string;
  boardName: string;
  hash: string;
  formatVersion: number;
  firmwareVersion: string | null;
  document: unknown;
  source: string;
  capturedAt: Date;
}

export interface StatePatch {
  backupIntervalSeconds?: number | null;
  nextBackupAt?: Date | null;
  lastBackupAt?: Date | null;
  lastBackupStatus?: string | null;
  lastBackupError?: string | null;
  templateId?: string | null;
  autoReapply?: boolean;
  driftStatus?: string;
  driftFields?: unknown;
  driftCheckedAt?: Date | null;
}

export interface TemplateData {
  name: string;
  description: string | null;
  hostnamePattern: string | null;
  ntpServers: unknown;
  firmwareSources: unknown;
  nodes: unknown;
}

const json = (v: unknown) => (v === null || v === undefined ? Prisma.DbNull : (v as Prisma.InputJsonValue));

/** A unique index said no: a template name that exists already. */
export class TemplateNameTakenError extends Error {}

@Injectable()
export class ConfigBackupsRepository {
  constructor(private readonly prisma: PrismaService) {}

  // --- versions ---------------------------------------------------------------------------------------------

  /**
   * Stores the content unless it equals the board's latest version, in which case only lastSeenAt moves. Runs
   * under a per-board transaction-scoped advisory lock, so two workers backing up the same board store at most
   * one version; the (boardId, seq) unique index is the backstop if the lock were ever bypassed.
   */
  async storeIfChanged(
    v: NewVersion,
    seenAt: Date,
  ): Promise<{ version: VersionRow; created: boolean; previous: VersionRow | null }> {
    return this.prisma.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`config-version:${v.boardId}`}, 0))::text AS locked`;
      const latest = await tx.configVersion.findFirst({
        where: { boardId: v.boardId },
        orderBy: [{ capturedAt: 'desc' }, { seq: 'desc' }],
      });
      if (latest && latest.hash === v.hash) {
        const version = await tx.configVersion.update({ where: { id: latest.id }, data: { lastSeenAt: seenAt } });
        return { version, created: false, previous: latest };
      }
      const max = await tx.configVersion.aggregate({ where: { boardId: v.boardId }, _max: { seq: true } });
      const version = await tx.configVersion.create({
        data: { ...v, document: v.document as Prisma.InputJsonValue, seq: (max._max.seq ?? 0) + 1, lastSeenAt: seenAt },
      });
      return { version, created: true, previous: latest };
    });
  }

  /** An archived version, unless the board already has that content captured at that time. */
  async importVersion(v: NewVersion): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`config-version:${v.boardId}`}, 0))::text AS locked`;
      const existing = await tx.configVersion.findFirst({
        where: { boardId: v.boardId, hash: v.hash, capturedAt: v.capturedAt },
        select: { id: true },
      });
      if (existing) {
        return false;
      }
      const max = await tx.configVersion.aggregate({ where: { boardId: v.boardId }, _max: { seq: true } });
      await tx.configVersion.create({
        data: {
          ...v,
          document: v.document as Prisma.InputJsonValue,
          seq: (max._max.seq ?? 0) + 1,
          lastSeenAt: v.capturedAt,
        },
      });
      return true;
    });
  }

  latestVersion(boardId: string): Promise<VersionRow | null> {
    return this.prisma.configVersion.findFirst({
      where: { boardId },
      orderBy: [{ capturedAt: 'desc' }, { seq: 'desc' }],
    });
  }

  findVersion(id: string): Promise<VersionRow | null> {
    return this.prisma.configVersion.findUnique({ where: { id } });
  }

  findVersionBySeq(boardId: string, seq: number): Promise<VersionRow | null> {
    return this.prisma.configVersion.findUnique({ where: { boardId_seq: { boardId, seq } } });
  }

  /** Newest first (by seq), keyset on seq. */
  listVersions(boardId: string, beforeSeq: number | undefined, take: number): Promise<VersionRow[]> {
    return this.prisma.configVersion.findMany({
      where: { boardId, ...(beforeSeq !== undefined ? { seq: { lt: beforeSeq } } : {}) },
      orderBy: { seq: 'desc' },
      take,
    });
  }

  countVersions(boardId: string): Promise<number> {
    return this.prisma.configVersion.count({ where: { boardId } });
  }

  retentionCandidates(boardId: string): Promise<Array<{ id: string; capturedAt: Date; seq: number }>> {
    return this.prisma.configVersion.findMany({
      where: { boardId },
      select: { id: true, capturedAt: true, seq: true },
    });
  }

  async deleteVersions(ids: string[]): Promise<number> {
    if (!ids.length) {
      return 0;
    }
    return (await this.prisma.configVersion.deleteMany({ where: { id: { in: ids } } })).count;
  }

  /** Versions of these boards in (board, seq) order, one page at a time (archive export). */
  versionsPage(
    boardIds: string[],
    after: { boardId: string; seq: number } | undefined,
    take: number,
  ): Promise<VersionRow[]> {
    return this.prisma.configVersion.findMany({
      where: {
        boardId: { in: boardIds },
        ...(after
          ? { OR: [{ boardId: { gt: after.boardId } }, { boardId: after.boardId, seq: { gt: after.seq } }] }
          : {}),
      },
      orderBy: [{ boardId: 'asc' }, { seq: 'asc' }],
      take,
    });
  }

  // --- per-board state and the schedule ------------------------------------------------------------------------

  findState(boardId: string): Promise<BoardStateRow | null> {
    return this.prisma.configBoardState.findUnique({ where: { boardId } });
  }

  findStates(boardIds: string[]): Promise<BoardStateRow[]> {
    return this.prisma.configBoardState.findMany({ where: { boardId: { in: boardIds } } });
  }

  upsertState(boardId: string, patch: StatePatch): Promise<BoardStateRow> {
    const { driftFields, ...rest } = patch;
    const data = { ...rest, ...(driftFields !== undefined ? { driftFields: json(driftFields) } : {}) };
    return this.prisma.configBoardState.upsert({
      where: { boardId },
      create: { boardId, ...data },
      update: data,
    });
  }

  boundBoards(templateId: string): Promise<BoardStateRow[]> {
    return this.prisma.configBoardState.findMany({ where: { templateId } });
  }

  async unbindTemplate(templateId: string): Promise<void> {
    await this.prisma.configBoardState.updateMany({
      where: { templateId },
      data: { templateId: null, driftStatus: 'unbound', driftFields: Prisma.DbNull, autoReapply: false },
    });
  }

  /**
   * Claims the boards whose backup is due and moves each one's next time one interval on, in one statement under
   * a try-lock: only one scheduler claims per tick, and the ON CONFLICT condition re-checks the due time, so a
   * board cannot be claimed twice. A board never backed up is due at once; its second backup falls at a random
   * point between half and one and a half intervals later, and every later one an interval after the previous, so
   * boards registered together (a bulk registration of thousands) do not all export at the same minute every day.
   * Returns null when another instance holds the lock.
   */
  async claimDueBackups(
    now: Date,
    defaultIntervalSeconds: number,
    max: number,
  ): Promise<Array<{ boardId: string; nextBackupAt: Date }> | null> {
    return this.prisma.$transaction(async (tx) => {
      const [lock] = await tx.$queryRaw<
        Array<{ ok: boolean }>
      >`SELECT pg_try_advisory_xact_lock(hashtextextended('config-backup-scheduler', 0)) AS ok`;
      if (!lock?.ok) {
        return null;
      }
      return tx.$queryRaw<Array<{ boardId: string; nextBackupAt: Date }>>`
        WITH due AS (
          SELECT b."id", COALESCE(s."backupIntervalSeconds", ${defaultIntervalSeconds}) AS iv,
            s."nextBackupAt" IS NULL AS first
          FROM "Board" b LEFT JOIN "ConfigBoardState" s ON s."boardId" = b."id"
          WHERE b."decommissionedAt" IS NULL AND (s."nextBackupAt" IS NULL OR s."nextBackupAt" <= ${now})
          ORDER BY s."nextBackupAt" NULLS FIRST
          LIMIT ${max}
        )
        INSERT INTO "ConfigBoardState" ("boardId", "nextBackupAt", "updatedAt")
        SELECT "id", ${now}::timestamptz + make_interval(secs => CASE WHEN first THEN iv * (0.5 + random()) ELSE iv END),
          now()
        FROM due
        ON CONFLICT ("boardId") DO UPDATE SET "nextBackupAt" = EXCLUDED."nextBackupAt", "updatedAt" = now()
          WHERE "ConfigBoardState"."nextBackupAt" IS NULL OR "ConfigBoardState"."nextBackupAt" <= ${now}
        RETURNING "boardId"::text AS "boardId", "nextBackupAt"`;
    });
  }

  // --- policy --------------------------------------------------------------------------------------------------

  policy(): Promise<PolicyRow> {
    return this.prisma.configPolicy.upsert({ where: { id: 1 }, create: { id: 1 }, update: {} });
  }

  updatePolicy(
    patch: Partial<Pick<PolicyRow, 'backupIntervalSeconds' | 'keepVersions' | 'keepDays' | 'keepMonthly'>>,
  ): Promise<PolicyRow> {
    return this.prisma.configPolicy.upsert({ where: { id: 1 }, create: { id: 1, ...patch }, update: patch });
  }

  // --- restores ------------------------------------------------------------------------------------------------

  createRestore(data: {
    boardId: string;
    versionId: string;
    sourceBoardId: string;
    fields: string[];
    actor: string;
    requestId: string | null;
  }): Promise<RestoreRow> {
    return this.prisma.configRestore.create({ data });
  }

  findRestore(id: string): Promise<RestoreRow | null> {
    return this.prisma.configRestore.findUnique({ where: { id } });
  }

  listRestores(boardId: string, take: number): Promise<RestoreRow[]> {
    return this.prisma.configRestore.findMany({ where: { boardId }, orderBy: { createdAt: 'desc' }, take });
  }

  /** pending → running (or running again after a crashed try); false when the restore already finished. */
  async startRestore(id: string): Promise<boolean> {
    const { count } = await this.prisma.configRestore.updateMany({
      where: { id, status: { in: ['pending', 'running'] } },
      data: { status: 'running', startedAt: new Date() },
    });
    return count === 1;
  }

  async updateRestore(
    id: string,
    data: {
      status?: string;
      report?: unknown;
      outcome?: unknown;
      error?: string | null;
      preBackupVersionId?: string | null;
      finishedAt?: Date;
    },
  ): Promise<void> {
    const { report, outcome, ...rest } = data;
    await this.prisma.configRestore.update({
      where: { id },
      data: {
        ...rest,
        ...(report !== undefined ? { report: json(report) } : {}),
        ...(outcome !== undefined ? { outcome: json(outcome) } : {}),
      },
    });
  }

  // --- templates -----------------------------------------------------------------------------------------------

  async createTemplate(data: TemplateData): Promise<TemplateRow> {
    try {
      return await this.prisma.configTemplate.create({ data: this.templateData(data) });
    } catch (err) {
      throw translateTemplateConflict(err);
    }
  }

  async updateTemplate(id: string, data: TemplateData): Promise<TemplateRow> {
    try {
      return await this.prisma.configTemplate.update({ where: { id }, data: this.templateData(data) });
    } catch (err) {
      throw translateTemplateConflict(err);
    }
  }

  private templateData(data: TemplateData) {
    return {
      name: data.name,
      description: data.description,
      hostnamePattern: data.hostnamePattern,
      ntpServers: json(data.ntpServers),
      firmwareSources: json(data.firmwareSources),
      nodes: json(data.nodes),
    };
  }

  findTemplate(id: string): Promise<TemplateRow | null> {
    return this.prisma.configTemplate.findUnique({ where: { id } });
  }

  listTemplates(): Promise<TemplateRow[]> {
    return this.prisma.configTemplate.findMany({ orderBy: { name: 'asc' } });
  }

  async deleteTemplate(id: string): Promise<void> {
    await this.prisma.configTemplate.delete({ where: { id } });
  }

  // --- pushes --------------------------------------------------------------------------------------------------

  createPush(
    push: Omit<Prisma.ConfigPushUncheckedCreateInput, 'results' | 'template'> & { template: unknown },
    results: Array<{
      boardId: string;
      boardName: string;
      position: number;
      status: string;
      desired: unknown;
      error: string | null;
    }>,
  ): Promise<PushRow> {
    return this.prisma.$transaction(async (tx) => {
      const created = await tx.configPush.create({
        data: { ...push, template: push.template as Prisma.InputJsonValue },
      });
      if (results.length) {
        await tx.configPushResult.createMany({
          data: results.map((r) => ({ ...r, pushId: created.id, desired: json(r.desired) })),
        });
      }
      return created;
    });
  }

  async pushExists(requestId: string): Promise<boolean> {
    return (await this.prisma.configPush.count({ where: { requestId } })) > 0;
  }

  findPush(id: string): Promise<(PushRow & { results: PushResultRow[] }) | null> {
    return this.prisma.configPush.findUnique({ where: { id }, include: { results: { orderBy: { position: 'asc' } } } });
  }

  findPushResult(pushId: string, boardId: string): Promise<(PushResultRow & { push: PushRow }) | null> {
    return this.prisma.configPushResult.findUnique({
      where: { pushId_boardId: { pushId, boardId } },
      include: { push: true },
    });
  }

  /**
   * Moves pending boards to `queued` until `concurrency` are queued or running, under a per-push lock (two
   * finishing jobs must not both fill the same free place). Returns every queued board: enqueueing them all again
   * is harmless (deterministic job ids), and it heals a crash between this claim and the enqueue.
   */
  async fillPushSlots(pushId: string, concurrency: number): Promise<string[]> {
    return this.prisma.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`config-push:${pushId}`}, 0))::text AS locked`;
      const [push] = await tx.$queryRaw<
        Array<{ status: string }>
      >`SELECT "status" FROM "ConfigPush" WHERE "id" = ${pushId}::uuid`;
      if (push?.status !== 'running') {
        return [];
      }
      const active = await tx.configPushResult.count({ where: { pushId, status: { in: ['queued', 'running'] } } });
      const free = concurrency - active;
      if (free > 0) {
        const next = await tx.configPushResult.findMany({
          where: { pushId, status: 'pending' },
          orderBy: { position: 'asc' },
          take: free,
          select: { boardId: true },
        });
        if (next.length) {
          await tx.configPushResult.updateMany({
            where: { pushId, boardId: { in: next.map((n) => n.boardId) }, status: 'pending' },
            data: { status: 'queued' },
          });
        }
      }
      const queued = await tx.configPushResult.findMany({
        where: { pushId, status: 'queued' },
        select: { boardId: true },
      });
      return queued.map((q) => q.boardId);
    });
  }

  async startPushResult(pushId: string, boardId: string): Promise<boolean> {
    const { count } = await this.prisma.configPushResult.updateMany({
      where: { pushId, boardId, status: { in: ['queued', 'running'] } },
      data: { status: 'running', startedAt: new Date() },
    });
    return count === 1;
  }

  async finishPushResult(
    pushId: string,
    boardId: string,
    data: { status: string; report?: unknown; outcome?: unknown; error?: string | null },
  ): Promise<void> {
    await this.prisma.configPushResult.update({
      where: { pushId_boardId: { pushId, boardId } },
      data: {
        status: data.status,
        error: data.error ?? null,
        report: json(data.report),
        outcome: json(data.outcome),
        finishedAt: new Date(),
      },
    });
  }

  async pushCounts(pushId: string): Promise<Record<string, number>> {
    const rows = await this.prisma.configPushResult.groupBy({
      by: ['status'],
      where: { pushId },
      _count: { _all: true },
    });
    return Object.fromEntries(rows.map((r) => [r.status, r._count._all]));
  }

  /**
   * Cancels a running push: boards not started yet (pending, or queued but not picked up: their job finds the row
   * cancelled and does nothing) are cancelled; running ones finish and are reported. Returns false when the push
   * was not running (already finished, stopped or cancelled).
   */
  async cancelPush(pushId: string): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      // The same lock as fillPushSlots: a finishing board cannot queue the next one between these two writes.
      await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`config-push:${pushId}`}, 0))::text AS locked`;
      const { count } = await tx.configPush.updateMany({
        where: { id: pushId, status: 'running' },
        data: { status: 'cancelled', finishedAt: new Date() },
      });
      if (count === 1) {
        await tx.configPushResult.updateMany({
          where: { pushId, status: { in: ['pending', 'queued'] } },
          data: { status: 'cancelled' },
        });
      }
      return count === 1;
    });
  }

  /** Stops a push: pending boards are cancelled (queued and running ones finish). Idempotent. */
  async stopPush(pushId: string, status: 'stopped' | 'completed'): Promise<void> {
    await this.prisma.$transaction([
      this.prisma.configPushResult.updateMany({ where: { pushId, status: 'pending' }, data: { status: 'cancelled' } }),
      this.prisma.configPush.updateMany({
        where: { id: pushId, status: 'running' },
        data: { status, finishedAt: new Date() },
      }),
    ]);
  }
}

function translateTemplateConflict(err: unknown): unknown {
  if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
    return new TemplateNameTakenError('another template already has this name');
  }
  return err;
}
