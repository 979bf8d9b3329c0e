import { Injectable } from '@nestjs/common';
import { PrismaService } from '../prisma/prisma.service.js';

export interface TileRow {
  id: string;
  name: string;
  rack: string | null;
  slot: number | null;
  state: string;
  stateSince: Date;
  firmwareVersion: string | null;
  lastSuccessAt: Date | null;
  /** The latest GET /thermal body as polled (validated against the board-api schema when it was stored). */
  thermal: unknown;
}

@Injectable()
export class OverviewRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Every board in service with its latest thermal reading: one query, by rack and slot. */
  tiles(): Promise<TileRow[]> {
    return this.prisma.$queryRaw<TileRow[]>`
      SELECT b."id", b."name", b."rack", b."slot", b."state"::text AS "state", b."stateSince",
             b."firmwareVersion", b."lastSuccessAt", r."thermal"
      FROM "Board" b LEFT JOIN "BoardReading" r ON r."boardId" = b."id"
      WHERE b."state" <> 'decommissioned'
      ORDER BY b."rack" NULLS LAST, b."slot" NULLS LAST, b."name"`;
  }
}
