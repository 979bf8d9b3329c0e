import { Injectable } from '@nestjs/common';
import { Prisma, type Alert, type AlertSeverity, type AlertStatus } from '../generated/prisma/client.js';
import type { CursorPosition } from '../common/pagination.js';
import { PrismaService } from '../prisma/prisma.service.js';
import { SLOW_LANE_KINDS, type BoardView } from './conditions.js';

/**
 * A timestamptz column as whole epoch milliseconds (float8, which pg hands over as a number), truncated as a Date is.
 */
const epochMs = (column: string) => Prisma.raw(`floor(extract(epoch FROM ${column}) * 1000)::float8`);

/** Row types other files may name; the client itself stays here. */
export type { Alert, AlertSeverity } from '../generated/prisma/client.js';

export type AlertRow = Alert;

/** A new open alert (pending, or firing straight away for external conditions and zero-dwell rules). */
export interface NewAlert {
  openKey: string;
  ruleId: string | null;
  rule: string;
  kind: string;
  boardId: string;
  sensor: string;
  status: 'pending' | 'firing';
  severity: AlertSeverity;
  summary: string;
  detail: unknown;
  labels: Record<string, string>;
  value: number | null;
  threshold: number | null;
  at: Date;
}

/** What the evaluator reads of a board: the readings conditions judge, plus what labels and names the alert. */
export interface EvaluatedBoard extends BoardView {
  name: string;
  labels: unknown;
  rack: string | null;
}

/**
 * The boards with an open (pending or firing) alert of a rule judged every slot: the pass of the other slots reads
 * them, and the poll screen leaves them to it. An open alert of a slow-lane rule (SLOW_LANE_KINDS) does not count.
 */
const BOARDS_WITH_OPEN_ALERTS = Prisma.sql`SELECT "boardId" FROM "Alert"
  WHERE "openKey" IS NOT NULL AND "ruleId" IS NOT NULL AND "kind" <> ALL(${[...SLOW_LANE_KINDS]}::text[])`;

/**
 * Which boards an evaluation reads: every board (the full pass), the boards with an open alert of a rule judged every
 * slot (the pass of the other slots: dwell, clearing, resolution), or the given boards, for new alerts only (polls
 * the screen flagged).
 */
export type EvaluationScope = { boards: 'all' } | { boards: 'with_open_alerts' } | { boards: 'these'; ids: string[] };

export interface AlertListFilter {
  status?: AlertStatus[];
  severity?: AlertSeverity[];
  boardId?: string;
  rule?: string;
  acknowledged?: boolean;
  since?: Date;
}

/**
 * Alert rows. Every state change is a conditional UPDATE on the row's current status (or a conflict-free INSERT on
 * the unique `openKey`) returning the changed row, so when two evaluators race exactly one of them sees the change
 * and notifies; the other gets nothing back.
 */
@Injectable()
export class AlertsRepository {
  constructor(private readonly prisma: PrismaService) {}

  findById(id: string): Promise<Alert | null> {
    return this.prisma.alert.findUnique({ where: { id } });
  }

  /** Firing alerts of some boards at one of the given severities (the rollout and backup hooks). */
  firing(boardIds: string[], severities: AlertSeverity[]): Promise<Alert[]> {
    return this.prisma.alert.findMany({
      where: { boardId: { in: boardIds }, status: 'firing', severity: { in: severities } },
      orderBy: [{ boardId: 'asc' }, { firedAt: 'asc' }],
    });
  }

  /** Every open (pending or firing) alert of the evaluated rules; of some boards only, when given. */
  openForRules(ruleIds: string[], boardIds?: string[]): Promise<Alert[]> {
    if (ruleIds.length === 0 || boardIds?.length === 0) {
      return Promise.resolve([]);
    }
    return this.prisma.alert.findMany({
      where: { ruleId: { in: ruleIds }, openKey: { not: null }, ...(boardIds ? { boardId: { in: boardIds } } : {}) },
    });
  }

  /** Boards with an open (pending or firing) alert of a rule: those the evaluation pass reads every slot. */
  async boardsWithOpenAlerts(): Promise<string[]> {
    const rows = await this.prisma.rows<{ id: string }>(
      Prisma.sql`SELECT DISTINCT o."boardId"::text AS id FROM (${BOARDS_WITH_OPEN_ALERTS}) o`,
    );
    return rows.map((r) => r.id);
  }

  /** Open alerts of rules that no longer exist or were disabled (they resolve). */
  openOfOtherRules(ruleIds: string[]): Promise<Alert[]> {
    return this.prisma.alert.findMany({
      where: { openKey: { not: null }, ruleId: { not: null, notIn: ruleIds } },
    });
  }

  /**
   * One page of boards with their readings, keyset on id (decommissioned boards are not evaluated): every board, the
   * boards with an open alert of a rule, or the given ones.
   */
  boardsPage(afterId: string, take: number, scope: EvaluationScope = { boards: 'all' }): Promise<EvaluatedBoard[]> {
    const among =
      scope.boards === 'all'
        ? Prisma.empty
        : scope.boards === 'these'
          ? Prisma.sql`AND b."id" = ANY(${scope.ids}::uuid[])`
          : Prisma.sql`AND b."id" IN (${BOARDS_WITH_OPEN_ALERTS})`;
    // Only what the rules read: of /health its clock's two fields, of /firmware/check its stable channel; times as
    // epoch milliseconds. Every pass reads every board: whole documents and Dates would cost the worker a JSON parse
    // of each document and a date parse of each time, for every board, every pass.
    return this.prisma.rows<EvaluatedBoard>(Prisma.sql`
      SELECT b."id"::text AS id, b."name", b."labels", b."rack", b."state"::text AS state,
        ${epochMs('b."stateSince"')} AS "stateSinceMs",
        r."thermal", ${epochMs('r."thermalAt"')} AS "thermalAtMs",
        r."cooling", ${epochMs('r."coolingAt"')} AS "coolingAtMs",
        r."sdcard", ${epochMs('r."sdcardAt"')} AS "sdcardAtMs",
        (r."health" #>> '{clock,synchronised}')::boolean AS "clockSynchronised",
        (r."health" #>> '{clock,offset_seconds}')::float8 AS "clockOffsetSeconds",
        r."firmwareCheck" -> 'stable' AS "firmwareStable"
      FROM "Board" b LEFT JOIN "BoardReading" r ON r."boardId" = b."id"
      WHERE b."decommissionedAt" IS NULL AND b."id"::text > ${afterId} ${among}
      ORDER BY b."id"::text
      LIMIT ${take}`);
  }

  /** Boards whose state changed in a window (board_state events for the stream). */
  stateChanges(
    from: Date,
    to: Date,
  ): Promise<Array<{ id: string; name: string; state: string; stateSince: Date; stateReason: string | null }>> {
    return this.prisma.$queryRaw`
      SELECT "id"::text AS id, "name", "state"::text AS state, "stateSince", "stateReason" FROM "Board"
      WHERE "stateSince" >= ${from} AND "stateSince" < ${to}
      LIMIT 1000`;
  }

  /** Inserts the open alert unless one exists for the key; returns the row only when this call created it. */
  async insertOpen(alert: NewAlert): Promise<Alert | null> {
    const rows = await this.prisma.$queryRaw<Alert[]>`
      INSERT INTO "Alert" ("id", "openKey", "ruleId", "rule", "kind", "boardId", "sensor", "status", "severity",
        "summary", "detail", "labels", "value", "threshold", "pendingSince", "firedAt", "lastEvaluatedAt",
        "createdAt", "updatedAt")
      VALUES (gen_random_uuid(), ${alert.openKey}, ${alert.ruleId}::uuid, ${alert.rule}, ${alert.kind},
        ${alert.boardId}::uuid, ${alert.sensor}, ${alert.status}::"AlertStatus", ${alert.severity}::"AlertSeverity",
        ${alert.summary}, ${JSON.stringify(alert.detail ?? null)}::jsonb, ${JSON.stringify(alert.labels)}::jsonb,
        ${alert.value}, ${alert.threshold}, ${alert.at}, ${alert.status === 'firing' ? alert.at : null},
        ${alert.at}, ${alert.at}, ${alert.at})
      ON CONFLICT ("openKey") DO NOTHING
      RETURNING *`;
    return rows[0] ?? null;
  }

  /** pending → firing; null when another evaluator got there first or the alert changed meanwhile. */
  async fire(id: string, at: Date, value: number | null, summary: string): Promise<Alert | null> {
    const rows = await this.prisma.$queryRaw<Alert[]>`
      UPDATE "Alert" SET "status" = 'firing', "firedAt" = ${at}, "value" = ${value}, "summary" = ${summary},
        "clearingSince" = NULL, "lastEvaluatedAt" = ${at}, "updatedAt" = now()
      WHERE "id" = ${id}::uuid AND "status" = 'pending'
      RETURNING *`;
    return rows[0] ?? null;
  }

  /**
   * Closes an open alert: a firing one becomes resolved (history), a pending one that never fired is deleted (it
   * was never an alert, as with Prometheus's pending state). Returns the resolved row, or null.
   */
  async close(id: string, at: Date): Promise<{ resolved: Alert | null }> {
    const rows = await this.prisma.$queryRaw<Alert[]>`
      UPDATE "Alert" SET "status" = 'resolved', "openKey" = NULL, "resolvedAt" = ${at}, "clearingSince" = NULL,
        "lastEvaluatedAt" = ${at}, "updatedAt" = now()
      WHERE "id" = ${id}::uuid AND "status" = 'firing'
      RETURNING *`;
    if (rows[0]) {
      return { resolved: rows[0] };
    }
    await this.prisma.$executeRaw`DELETE FROM "Alert" WHERE "id" = ${id}::uuid AND "status" = 'pending'`;
    return { resolved: null };
  }

  /** Bookkeeping that changes no state: the latest value, and when clearing began (null when it rose again). */
  async touch(id: string, at: Date, value: number | null, clearingSince: Date | null): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE "Alert" SET "value" = ${value}, "clearingSince" = ${clearingSince}, "lastEvaluatedAt" = ${at}
      WHERE "id" = ${id}::uuid AND "openKey" IS NOT NULL`;
  }

  /** An external condition raised again: refresh what it says; returns the row when the severity changed. */
  async refreshExternal(
    openKey: string,
    severity: AlertSeverity,
    summary: string,
    detail: unknown,
    at: Date,
  ): Promise<{ row: Alert | null; severityChanged: boolean }> {
    const rows = await this.prisma.$queryRaw<Array<Alert & { previous: AlertSeverity }>>`
      UPDATE "Alert" a SET "severity" = ${severity}::"AlertSeverity", "summary" = ${summary},
        "detail" = ${JSON.stringify(detail ?? null)}::jsonb, "lastEvaluatedAt" = ${at}, "updatedAt" = now()
      FROM (SELECT "id", "severity" AS previous FROM "Alert" WHERE "openKey" = ${openKey} FOR UPDATE) old
      WHERE a."id" = old."id"
      RETURNING a.*, old.previous`;
    const row = rows[0] ?? null;
    return { row, severityChanged: row !== null && row.previous !== severity };
  }

  findOpenByKey(openKey: string): Promise<Alert | null> {
    return this.prisma.alert.findUnique({ where: { openKey } });
  }

  /** Sets the acknowledgement; returns null when there is no such alert. */
  async acknowledge(id: string, by: string, comment: string | null, at: Date): Promise<Alert | null> {
    const rows = await this.prisma.$queryRaw<Alert[]>`
      UPDATE "Alert" SET "acknowledgedAt" = ${at}, "acknowledgedBy" = ${by}, "ackComment" = ${comment},
        "updatedAt" = now()
      WHERE "id" = ${id}::uuid
      RETURNING *`;
    return rows[0] ?? null;
  }

  async unacknowledge(id: string): Promise<Alert | null> {
    const rows = await this.prisma.$queryRaw<Alert[]>`
      UPDATE "Alert" SET "acknowledgedAt" = NULL, "acknowledgedBy" = NULL, "ackComment" = NULL, "updatedAt" = now()
      WHERE "id" = ${id}::uuid
      RETURNING *`;
    return rows[0] ?? null;
  }

  /** Marks remediation applied (or given back with null); conditional so two workers act once. */
  async setRemediation(id: string, remediation: string | null, expected: string | null): Promise<boolean> {
    const changed = await this.prisma.$executeRaw`
      UPDATE "Alert" SET "remediation" = ${remediation},
        "remediatedAt" = ${remediation === null ? null : new Date()}, "updatedAt" = now()
      WHERE "id" = ${id}::uuid AND "remediation" IS NOT DISTINCT FROM ${expected}`;
    return changed === 1;
  }

  /** Records that a receiver was told of these alerts firing (or resolved), so it is not told again. */
  async markNotified(receiverId: string, firingIds: string[], resolvedIds: string[]): Promise<void> {
    if (firingIds.length) {
      await this.prisma.$executeRaw`
        UPDATE "Alert" SET "notifiedFiring" = array_append("notifiedFiring", ${receiverId})
        WHERE "id"::text = ANY(${firingIds}) AND NOT (${receiverId} = ANY("notifiedFiring"))`;
    }
    if (resolvedIds.length) {
      await this.prisma.$executeRaw`
        UPDATE "Alert" SET "notifiedResolved" = array_append("notifiedResolved", ${receiverId})
        WHERE "id"::text = ANY(${resolvedIds}) AND NOT (${receiverId} = ANY("notifiedResolved"))`;
    }
  }

  async ruleNodes(ruleId: string): Promise<number[] | null> {
    const rule = await this.prisma.alertRule.findUnique({ where: { id: ruleId }, select: { remediationNodes: true } });
    return rule?.remediationNodes ?? null;
  }

  /** Alerts (of any status) whose ids are given: a notification reads them fresh. */
  findMany(ids: string[]): Promise<Alert[]> {
    return this.prisma.alert.findMany({ where: { id: { in: ids } } });
  }

  /** Newest first, keyset on (createdAt, id). */
  list(filter: AlertListFilter, after: CursorPosition | undefined, take: number): Promise<Alert[]> {
    const parts: Prisma.Sql[] = [];
    if (filter.status?.length) {
      parts.push(Prisma.sql`"status"::text IN (${Prisma.join(filter.status)})`);
    }
    if (filter.severity?.length) {
      parts.push(Prisma.sql`"severity"::text IN (${Prisma.join(filter.severity)})`);
    }
    if (filter.boardId) {
      parts.push(Prisma.sql`"boardId" = ${filter.boardId}::uuid`);
    }
    if (filter.rule) {
      parts.push(Prisma.sql`"rule" = ${filter.rule}`);
    }
    if (filter.acknowledged !== undefined) {
      parts.push(filter.acknowledged ? Prisma.sql`"acknowledgedAt" IS NOT NULL` : Prisma.sql`"acknowledgedAt" IS NULL`);
    }
    if (filter.since) {
      parts.push(Prisma.sql`"createdAt" >= ${filter.since}`);
    }
    if (after) {
      parts.push(Prisma.sql`("createdAt", "id"::text) < (${String(after.sort)}::timestamptz, ${after.id})`);
    }
    const where = parts.length ? Prisma.sql`WHERE ${Prisma.join(parts, ' AND ')}` : Prisma.empty;
    return this.prisma.$queryRaw<Alert[]>`
      SELECT * FROM "Alert" ${where} ORDER BY "createdAt" DESC, "id"::text DESC LIMIT ${take}`;
  }
}
