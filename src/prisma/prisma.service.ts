import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { ConfigService } from '../config/config.service.js';
import { migrateDeploy, pgMigrationFactory } from '../db/schema-engine.js';
import { PrismaClient } from '../generated/prisma/client.js';

/** The Prisma client (query compiler in WASM, adapter-pg). Only repositories inject it. */
@Injectable()
export class PrismaService extends PrismaClient implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(PrismaService.name);

  constructor(private readonly config: ConfigService) {
    super({ adapter: new PrismaPg({ connectionString: config.databaseUrl, max: 10 }) });
  }

  async onModuleInit(): Promise<void> {
    // Embedded mode always migrates (nobody else will); a server database only when DB_AUTO_MIGRATE is on.
    if (this.config.database.autoMigrate) {
      const applied = await migrateDeploy(pgMigrationFactory(this.config.databaseUrl));
      if (applied.length) {
        this.logger.log(`Applied migrations: ${applied.join(', ')}`);
      }
    }
    await this.$connect();
  }

  async onModuleDestroy(): Promise<void> {
    await this.$disconnect();
  }

  /** For /readyz: resolves when the database answers. */
  async ping(): Promise<void> {
    await this.$queryRaw`SELECT 1`;
  }
}
