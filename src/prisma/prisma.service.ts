import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { Clocks } from '../clock/clocks.js';
import { ConfigService } from '../config/config.service.js';
import { guardedPgClient } from '../db/pg-client.js';
import { migrateDeploy, pgMigrationFactory } from '../db/schema-engine.js';
import { PrismaClient } from '../generated/prisma/client.js';
import { forgetDebugHistory } from './debug-history.js';

/** The Prisma client (query compiler in WASM, adapter-pg). Only repositories inject it. */
@Injectable()
export class PrismaService extends PrismaClient implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(PrismaService.name);

  constructor(
    private readonly config: ConfigService,
    private readonly clocks: Clocks,
  ) {
    super({ adapter: new PrismaPg({ connectionString: config.databaseUrl, max: 10, Client: guardedPgClient }) });
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
    // @prisma/debug keeps the arguments of its last 100 debug calls for crash reports, logging enabled or not, and
    // adapter-pg makes one per statement with all its parameters: after a bulk registration of 10,000 boards the idle
    // API process held ~275 MiB of old statement parameters (heap snapshot: argsHistory in debugCreate's closure).
    // Emptied every second, it holds at most a second's statements (and the runtime's copy its query plans:
    // src/prisma/debug-history.ts). In every role: the API process is where the bulk registrations land.
    this.clocks.every('prisma-forget-debug-args', 1000, async () => forgetDebugHistory(), { everyRole: true });
  }

  // After every module's onModuleDestroy (PrismaModule is global, so its destroy hook would run first of all): the
  // jobs JobsWorker gives a grace to finish and the clock ticks Clocks waits for still read and write.
  async onApplicationShutdown(): Promise<void> {
    this.clocks.stop('prisma-forget-debug-args');
    await this.$disconnect();
  }

  /** For /readyz: resolves when the database answers. */
  async ping(): Promise<void> {
    await this.$queryRaw`SELECT 1`;
  }
}
