// Entry point: `node dist/src/main.js [--role api|worker|all]`.
// Order matters: configuration, then the embedded database (when DATABASE_URL is unset), then AppModule.forRoot with
// the configuration completed by the database's URL.
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { configureHttpApp, createFastifyAdapter, stopAccepting } from './common/http-setup.js';
import { ConfigError, loadConfig, type AppConfig } from './config/config.service.js';
import { setHeapGrowth } from './config/heap-growth.js';
import { DataDirInUseError } from './db/data-dir-lock.js';
import type { EmbeddedPostgres } from './db/embedded-postgres.js';
import { AppLogger } from './logging/logging.module.js';

function readConfig(): AppConfig {
  const { values } = parseArgs({ options: { role: { type: 'string' } }, allowPositionals: true });
  try {
    return loadConfig(values.role === undefined ? {} : { ROLE: values.role });
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
}

async function bootstrap(): Promise<void> {
  let config = readConfig();
  // As soon as the role is known: the heap's growth is sized per role (src/config/heap-growth.ts).
  setHeapGrowth(config.role);
  const logger = new Logger('Main');
  // Written once the application logger exists, so they come out as JSON or pretty text like every other line.
  const startup: string[] = [];
  let embedded: EmbeddedPostgres | undefined;
  if (config.database.embedded) {
    // Imported only here: PGlite and pglite-socket are ~1 MiB of heap that a process on a PostgreSQL server never uses.
    const { startEmbeddedPostgres } = await import('./db/embedded-postgres.js');
    embedded = await startEmbeddedPostgres(config.database.embeddedDir);
    config = { ...config, database: { ...config.database, url: embedded.url } };
    startup.push(
      `No DATABASE_URL${config.redis.url === null ? ' or REDIS_URL' : ''}: embedded PostgreSQL (PGlite) in ` +
        `${config.database.embeddedDir}${config.redis.url === null ? ', queues in PostgreSQL' : ''}; ` +
        'for demos and first runs, set DATABASE_URL for anything else',
    );
  } else if (config.redis.url === null) {
    startup.push('No REDIS_URL: queues in PostgreSQL (BullMQ PostgreSQL backend, schema bullmq)');
  }

  const { AppModule } = await import('./app.module.js');
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config),
    createFastifyAdapter(config.http),
    {
      bufferLogs: true,
    },
  );
  app.useLogger(app.get(AppLogger));
  startup.forEach((line) => logger.log(line));
  configureHttpApp(app);

  // Own signal handling instead of enableShutdownHooks(): Nest would re-raise the signal before PGlite is closed,
  // and an unclean PGlite close means crash recovery (or a lost write) on the next start.
  let closing = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (closing) {
      return;
    }
    closing = true;
    logger.log(`${signal}: shutting down`);
    stopAccepting();
    app
      .close()
      .then(() => embedded?.stop())
      .then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error(`shutdown failed: ${err instanceof Error ? err.message : String(err)}`);
          process.exit(1);
        },
      );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);

  await app.listen(config.http.port, config.http.host);
  logger.log(`Fleet manager (role ${config.role}) listening on ${await app.getUrl()}`);
}

bootstrap().catch((err: unknown) => {
  // A refusal people act on is its message; anything else, the whole error.
  console.error(err instanceof DataDirInUseError ? err.message : err);
  process.exit(1);
});
