import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { Clocks } from '../clock/clocks.js';
import { ConfigService } from '../config/config.service.js';
import { guardedPgClient } from '../db/pg-client.js';
import { migrateDeployOnThread } from '../db/migrate-thread.js';
import { PrismaClient, type Prisma } from '../generated/prisma/client.js';
import { forgetDebugHistory } from './debug-history.js';

/** PostgreSQL's SQLSTATE for "deadlock detected". */
const DEADLOCK_DETECTED = '40P01';
/** Runs of a deadlocked statement after the first. */
const DEADLOCK_RETRIES = 3;

/**
 * The Prisma client (query compiler in WASM, adapter-pg) and, for the statements that run for every poll, the same
 * connection pool without Prisma in between (`rows`, `execute`, `transaction`). Only repositories inject it.
 */
@Injectable()
export class PrismaService extends PrismaClient implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(PrismaService.name);
  private readonly pool: pg.Pool;

  constructor(
    private readonly config: ConfigService,
    private readonly clocks: Clocks,
  ) {
    const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 10, Client: guardedPgClient });
    super({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
    this.pool = pool;
  }

  /**
   * Runs a `Prisma.sql` statement on the pool itself and returns its rows as pg decodes them (timestamptz as Date,
   * int4 and float8 as numbers, jsonb parsed, enums and uuids as strings; int8 and numeric as strings, unlike
   * $queryRaw). For the hot paths only: the poll's claim, load and write run for every board every interval, and
   * $queryRaw's query interpreter and per-cell result decoding cost about as much CPU as the rest of the statement's
   * client side (docs/benchmarks.md, "Polling"); and the pages read most (a board list, a board's page, its raw
   * thermal history; docs/benchmarks.md, the API section).
   */
  async rows<T>(statement: Prisma.Sql): Promise<T[]> {
    return (await this.pool.query(statement.text, statement.values)).rows as T[];
  }

  /**
   * As `rows`, for a statement whose rows are not read: the number of rows it affected. A statement PostgreSQL aborts
   * for a deadlock is run again (up to DEADLOCK_RETRIES times): it ran on its own, so it was rolled back whole, and
   * running it again is running it a moment later. The poll's write and the slow lane's write lock the same boards'
   * rows in different orders and deadlock now and then; before, the poll's results were lost.
   */
  async execute(statement: Prisma.Sql): Promise<number> {
    for (let retry = 0; ; retry++) {
      try {
        return (await this.pool.query(statement.text, statement.values)).rowCount ?? 0;
      } catch (err) {
        if ((err as { code?: unknown }).code !== DEADLOCK_DETECTED || retry >= DEADLOCK_RETRIES) {
          throw err;
        }
        this.logger.warn(`deadlock detected; the statement runs again (${retry + 1} of ${DEADLOCK_RETRIES})`);
      }
    }
  }

  /** `fn` inside BEGIN … COMMIT on one connection of the pool (ROLLBACK when it throws), with `rows` on it. */
  async transaction<T>(fn: (rows: <R>(statement: Prisma.Sql) => Promise<R[]>) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken: unknown;
    try {
      await client.query('BEGIN');
      const result = await fn(async <R>(s: Prisma.Sql) => (await client.query(s.text, s.values)).rows as R[]);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch((rollbackErr: unknown) => (broken = rollbackErr));
      throw err;
    } finally {
      // A connection whose ROLLBACK failed is in an unknown state: the pool closes it instead of reusing it.
      client.release(broken instanceof Error ? broken : undefined);
    }
  }

  async onModuleInit(): Promise<void> {
    // Embedded mode always migrates (nobody else will); a server database only when DB_AUTO_MIGRATE is on. On a
    // thread of its own, so the schema engine's WASM does not stay in this process (src/db/migrate-thread.ts).
    if (this.config.database.autoMigrate) {
      const applied = await migrateDeployOnThread(this.config.databaseUrl);
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
