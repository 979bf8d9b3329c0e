// Boots the whole fleet manager for an e2e file, on its own database and queue prefix:
//   const app = await startTestApp();  ...  afterAll(() => app.close());
import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { ConsoleLogger } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { parseConfig, type AppConfig } from '../../src/config/config.service.js';
import { createTestDatabase, testQueuePrefix, type TestDatabase } from './database.js';

export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';
// A fixed key for tests that is not patterned (the configuration refuses all-equal bytes and the like).
export const TEST_SECRET_KEY = createHash('sha256').update('tpfleet test key').digest('base64');

/** Loopback, which tests allow their receivers and scans to reach (src/common/outbound-policy.ts). */
export const LOOPBACK_NETWORKS = '127.0.0.0/8,::1/128';

export interface TestApp {
  baseUrl: string;
  app: NestFastifyApplication;
  config: AppConfig;
  db: TestDatabase;
  /** Every line the app logged at ERROR level or above so far (context and message). */
  errorLines(): string[];
  close(): Promise<void>;
}

/** Nest's console logger (errors and warnings, as before), keeping what it writes at ERROR level for errorLines(). */
class RecordingLogger extends ConsoleLogger {
  readonly errors: string[] = [];

  constructor() {
    super();
    this.setLogLevels(['error', 'warn', 'fatal']);
  }

  override error(message: unknown, ...rest: unknown[]): void {
    this.errors.push(`${String(rest.at(-1) ?? '')}: ${String(message)}`);
    super.error(message, ...rest);
  }

  override fatal(message: unknown, ...rest: unknown[]): void {
    this.errors.push(`${String(rest.at(-1) ?? '')}: ${String(message)}`);
    super.fatal(message, ...rest);
  }
}

export interface TestAppOptions {
  /** Queue on this Redis (see requireRedis); default: BullMQ's PostgreSQL backend in the test database. */
  redisUrl?: string;
  /** Extra settings, as environment variables (e.g. { POLL_INTERVAL_SECONDS: '1' }). */
  env?: Record<string, string>;
  /** An existing database (default: a fresh copy of the migrated template). */
  db?: TestDatabase;
}

export async function startTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const db = opts.db ?? (await createTestDatabase());
  const config = parseConfig({
    DATABASE_URL: db.url,
    REDIS_URL: opts.redisUrl,
    QUEUE_PREFIX: testQueuePrefix(),
    BOOTSTRAP_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    SECRET_KEY: TEST_SECRET_KEY,
    LOG_LEVEL: 'warn',
    // The tests' receivers, Alertmanager and racks listen on loopback, which the default policy refuses; a test of
    // the policy itself passes OUTBOUND_ALLOWED_NETWORKS: '' (unset) or another list.
    OUTBOUND_ALLOWED_NETWORKS: LOOPBACK_NETWORKS,
    ...opts.env,
  });
  // The embedded test database is PGlite behind a socket too: its workers need the short drainDelay.
  if (db.embedded) {
    config.database.embedded = true;
  }
  const { NestFactory } = await import('@nestjs/core');
  const { AppModule } = await import('../../src/app.module.js');
  const { configureHttpApp, createFastifyAdapter } = await import('../../src/common/http-setup.js');
  const logger = new RecordingLogger();
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config),
    createFastifyAdapter(config.http),
    {
      logger,
    },
  );
  configureHttpApp(app);
  await app.listen(0, '127.0.0.1');
  const baseUrl = await app.getUrl();
  return {
    baseUrl,
    app,
    config,
    db,
    errorLines: () => [...logger.errors],
    async close() {
      await app.close();
      if (!opts.db) {
        await db.drop();
      }
    },
  };
}
