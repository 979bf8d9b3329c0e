import { Injectable } from '@nestjs/common';
import type {
  Alert,
  AlertDelivery,
  AlertNotifyGroup,
  AlertReceiver,
  AlertSeverity,
  AlertSilence,
} from '../generated/prisma/client.js';
import { Prisma } from '../generated/prisma/client.js';
import { PrismaService } from '../prisma/prisma.service.js';

/** Row types other files may name; the client itself stays here. */
export type { AlertReceiver, AlertSilence } from '../generated/prisma/client.js';

export type ReceiverRow = AlertReceiver;
export type SilenceRow = AlertSilence;

export interface NewReceiver {
  name: string;
  type: string;
  url: string;
  enabled: boolean;
  minSeverity: AlertSeverity;
  groupBy: string[];
  groupIntervalSeconds: number;
  repeatIntervalSeconds: number;
}

export class ReceiverConflictError extends Error {}

/** Receivers, silences, notification groups and the delivery log. */
@Injectable()
export class NotifyRepository {
  constructor(private readonly prisma: PrismaService) {}

  // Receivers

  enabledReceivers(): Promise<AlertReceiver[]> {
    return this.prisma.alertReceiver.findMany({ where: { enabled: true } });
  }

  receivers(): Promise<AlertReceiver[]> {
    return this.prisma.alertReceiver.findMany({ orderBy: { name: 'asc' } });
  }

  receiver(id: string): Promise<AlertReceiver | null> {
    return this.prisma.alertReceiver.findUnique({ where: { id } });
  }

  async createReceiver(data: NewReceiver & { id: string; secretSealed: string | null }): Promise<AlertReceiver> {
    try {
      return await this.prisma.alertReceiver.create({ data });
    } catch (err) {
      throw conflict(err);
    }
  }

  async updateReceiver(
    id: string,
    data: Partial<NewReceiver> & { secretSealed?: string | null },
  ): Promise<AlertReceiver | null> {
    try {
      return await this.prisma.alertReceiver.update({ where: { id }, data });
    } catch (err) {
      if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2025') {
        return null;
      }
      throw conflict(err);
    }
  }

  async deleteReceiver(id: string): Promise<boolean> {
    const deleted = await this.prisma.alertReceiver.deleteMany({ where: { id } });
    await this.prisma.alertNotifyGroup.deleteMany({ where: { receiverId: id } });
    return deleted.count === 1;
  }

  // Silences

  silencesActiveAt(at: Date): Promise<AlertSilence[]> {
    return this.prisma.alertSilence.findMany({
      where: { startsAt: { lte: at }, endsAt: { gt: at }, expiredAt: null },
    });
  }

  silences(): Promise<AlertSilence[]> {
    return this.prisma.alertSilence.findMany({ orderBy: { createdAt: 'desc' }, take: 1000 });
  }

  silence(id: string): Promise<AlertSilence | null> {
    return this.prisma.alertSilence.findUnique({ where: { id } });
  }

  createSilence(data: Omit<AlertSilence, 'id' | 'createdAt' | 'expiredAt'>): Promise<AlertSilence> {
    return this.prisma.alertSilence.create({
      data: { ...data, matchers: data.matchers as Prisma.InputJsonValue },
    });
  }

  /** Expiring keeps the record (who silenced what, when) and ends it now. */
  async expireSilence(id: string, at: Date): Promise<AlertSilence | null> {
    const rows = await this.prisma.$queryRaw<AlertSilence[]>`
      UPDATE "AlertSilence" SET "expiredAt" = ${at}, "endsAt" = LEAST("endsAt", ${at})
      WHERE "id" = ${id}::uuid AND "expiredAt" IS NULL
      RETURNING *`;
    return rows[0] ?? null;
  }

  // Notification groups

  /**
   * Marks a group as changed. A new group is due after its group wait; an existing one keeps its slot if it is
   * already due, else becomes due one group interval after its last send: so however many alerts of a group change
   * at once, one notification goes out per interval (Alertmanager's group_wait / group_interval).
   */
  async markGroup(
    receiverId: string,
    groupKey: string,
    groupLabels: Record<string, string>,
    waitSeconds: number,
    intervalSeconds: number,
  ): Promise<void> {
    await this.prisma.$executeRaw`
      INSERT INTO "AlertNotifyGroup" ("receiverId", "groupKey", "groupLabels", "dueAt", "dirty")
      VALUES (${receiverId}::uuid, ${groupKey}, ${JSON.stringify(groupLabels)}::jsonb,
        now() + make_interval(secs => ${waitSeconds}), true)
      ON CONFLICT ("receiverId", "groupKey") DO UPDATE SET
        "dirty" = true,
        "dueAt" = CASE
          WHEN "AlertNotifyGroup"."dirty" THEN "AlertNotifyGroup"."dueAt"
          ELSE GREATEST(now(), COALESCE("AlertNotifyGroup"."lastSentAt", now())
            + make_interval(secs => ${intervalSeconds}))
        END`;
  }

  /**
   * Claims the groups whose time has come (FOR UPDATE SKIP LOCKED: two schedulers never claim the same group) and
   * moves them on: the next due time is the repeat interval (Alertmanager needs firing alerts re-sent), `dirty`
   * clears. Returns the claimed groups with what they were before the claim.
   */
  claimDueGroups(limit: number): Promise<Array<AlertNotifyGroup & { wasDirty: boolean; previousSentAt: Date | null }>> {
    return this.prisma.$queryRaw`
      WITH due AS (
        SELECT g."receiverId", g."groupKey", g."dirty", g."lastSentAt", r."repeatIntervalSeconds"
        FROM "AlertNotifyGroup" g JOIN "AlertReceiver" r ON r."id" = g."receiverId"
        WHERE g."dueAt" <= now() AND r."enabled"
        ORDER BY g."dueAt"
        LIMIT ${limit}
        FOR UPDATE OF g SKIP LOCKED
      )
      UPDATE "AlertNotifyGroup" g SET
        "dirty" = false,
        "lastSentAt" = now(),
        "dueAt" = now() + make_interval(secs => due."repeatIntervalSeconds")
      FROM due
      WHERE g."receiverId" = due."receiverId" AND g."groupKey" = due."groupKey"
      RETURNING g.*, due."dirty" AS "wasDirty", due."lastSentAt" AS "previousSentAt"`;
  }

  /** A group with nothing left to say (no firing alert) is dropped; a later alert creates it again. */
  async dropGroup(receiverId: string, groupKey: string): Promise<void> {
    await this.prisma.$executeRaw`
      DELETE FROM "AlertNotifyGroup"
      WHERE "receiverId" = ${receiverId}::uuid AND "groupKey" = ${groupKey} AND NOT "dirty"`;
  }

  /** Firing alerts plus those resolved since `resolvedSince`: the candidates of a group's notification. */
  groupCandidates(resolvedSince: Date, severities: AlertSeverity[]): Promise<Alert[]> {
    return this.prisma.alert.findMany({
      where: {
        severity: { in: severities },
        OR: [{ status: 'firing' }, { status: 'resolved', resolvedAt: { gte: resolvedSince } }],
      },
      orderBy: { createdAt: 'asc' },
      take: 5000,
    });
  }

  // Delivery log

  logDelivery(entry: Omit<AlertDelivery, 'id' | 'at'>): Promise<AlertDelivery> {
    return this.prisma.alertDelivery.create({ data: entry });
  }

  deliveries(receiverId: string, limit: number): Promise<AlertDelivery[]> {
    return this.prisma.alertDelivery.findMany({ where: { receiverId }, orderBy: { id: 'desc' }, take: limit });
  }
}

function conflict(err: unknown): unknown {
  if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
    return new ReceiverConflictError('a receiver with this name exists');
  }
  return err;
}
