import { Injectable } from '@nestjs/common';
import { type BoardEvent, Prisma } from '../generated/prisma/client.js';
import { PrismaService } from '../prisma/prisma.service.js';

@Injectable()
export class TimelineRepository {
  constructor(private readonly prisma: PrismaService) {}

  async record(boardId: string, kind: string, summary: string, detail?: unknown): Promise<void> {
    await this.prisma.boardEvent.create({
      data: { boardId, kind, summary, detail: detail as Prisma.InputJsonValue | undefined },
    });
  }

  async recordMany(events: Array<{ boardId: string; kind: string; summary: string; detail?: unknown }>): Promise<void> {
    if (events.length) {
      await this.prisma.boardEvent.createMany({
        data: events.map((e) => ({ ...e, detail: e.detail as Prisma.InputJsonValue | undefined })),
      });
    }
  }

  /** Newest first, keyset on id (ids grow with time within one table). */
  list(
    boardId: string,
    beforeId: bigint | undefined,
    kinds: string[] | undefined,
    take: number,
  ): Promise<BoardEvent[]> {
    return this.prisma.boardEvent.findMany({
      where: {
        boardId,
        ...(beforeId !== undefined ? { id: { lt: beforeId } } : {}),
        ...(kinds?.length ? { kind: { in: kinds } } : {}),
      },
      orderBy: { id: 'desc' },
      take,
    });
  }

  async thermalHistory(
    boardId: string,
    resolution: 'raw' | '5m',
    from: Date,
    to: Date,
    sensor: string | undefined,
    take: number,
  ): Promise<Array<{ sensor: string; at: Date; mean: number; min: number; max: number }>> {
    if (resolution === 'raw') {
      // On the pool itself (PrismaService.rows): an hour of a board's raw samples is hundreds of rows, and Prisma's
      // decoding of each cell cost the api more CPU than the statement (docs/benchmarks.md, the API section).
      const rows = await this.prisma.rows<{ sensor: string; at: Date; temperatureC: number }>(Prisma.sql`
        SELECT "sensor", "at", "temperatureC" FROM "ThermalSample"
        WHERE "boardId" = ${boardId}::uuid AND "at" >= ${from} AND "at" <= ${to}
          ${sensor ? Prisma.sql`AND "sensor" = ${sensor}` : Prisma.empty}
        ORDER BY "at" DESC
        LIMIT ${take}`);
      return rows.map((r) => ({
        sensor: r.sensor,
        at: r.at,
        mean: r.temperatureC,
        min: r.temperatureC,
        max: r.temperatureC,
      }));
    }
    const rows = await this.prisma.thermalRollup.findMany({
      where: { boardId, bucket: { gte: from, lte: to }, ...(sensor ? { sensor } : {}) },
      orderBy: { bucket: 'desc' },
      take,
    });
    return rows.map((r) => ({ sensor: r.sensor, at: r.bucket, mean: r.mean, min: r.min, max: r.max }));
  }

  async deleteThermal(boardId: string): Promise<void> {
    await this.prisma.$transaction([
      this.prisma.thermalSample.deleteMany({ where: { boardId } }),
      this.prisma.thermalRollup.deleteMany({ where: { boardId } }),
    ]);
  }
}
