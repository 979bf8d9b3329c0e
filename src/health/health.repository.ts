import { Injectable } from '@nestjs/common';
import { PrismaService } from '../prisma/prisma.service.js';

/** The database side of /readyz: the one query the health probes run. */
@Injectable()
export class HealthRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Resolves when the database answers. */
  ping(): Promise<void> {
    return this.prisma.ping();
  }
}
