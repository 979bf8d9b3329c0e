import { Injectable } from '@nestjs/common';
import type { Prisma } from '../generated/prisma/client.js';
import { PrismaService } from '../prisma/prisma.service.js';

export interface AuditRecord {
  actor: string;
  tokenId: string | null;
  action: string;
  target: string;
  boardId: string | null;
  outcome: string;
  status: number;
  requestId: string;
  detail?: Record<string, unknown>;
}

export interface AuditRow extends Omit<AuditRecord, 'detail'> {
  id: bigint;
  at: Date;
  detail: unknown;
}

@Injectable()
export class AuditRepository {
  constructor(private readonly prisma: PrismaService) {}

  async insert(record: AuditRecord): Promise<bigint> {
    const row = await this.prisma.auditEntry.create({
      data: { ...record, detail: record.detail as Prisma.InputJsonValue | undefined },
      select: { id: true },
    });
    return row.id;
  }

  /** Several entries in one statement: all are written or none. */
  insertMany(records: AuditRecord[]): Promise<Array<{ id: bigint; boardId: string | null }>> {
    return this.prisma.auditEntry.createManyAndReturn({
      data: records.map((r) => ({ ...r, detail: r.detail as Prisma.InputJsonValue | undefined })),
      select: { id: true, boardId: true },
    });
  }

  /** The same outcome for several entries written before their action ran. */
  async finishMany(ids: bigint[], outcome: Pick<AuditRecord, 'outcome' | 'status'>): Promise<void> {
    await this.prisma.auditEntry.updateMany({ where: { id: { in: ids } }, data: outcome });
  }

  /** The outcome of an entry written before its action ran. */
  async finish(id: bigint, outcome: Pick<AuditRecord, 'outcome' | 'status' | 'detail'>): Promise<void> {
    await this.prisma.auditEntry.update({
      where: { id },
      data: { ...outcome, detail: outcome.detail as Prisma.InputJsonValue | undefined },
    });
  }

  /** Newest first, keyset-paginated by id. */
  list(filter: { boardId?: string; beforeId?: bigint; limit: number }): Promise<AuditRow[]> {
    return this.prisma.auditEntry.findMany({
      where: {
        ...(filter.boardId ? { boardId: filter.boardId } : {}),
        ...(filter.beforeId !== undefined ? { id: { lt: filter.beforeId } } : {}),
      },
      orderBy: { id: 'desc' },
      take: filter.limit,
    });
  }
}
