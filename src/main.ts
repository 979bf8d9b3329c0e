// Entry point: `node dist/src/main.js [--role api|worker|all]`.
// Order matters: configuration, then the embedded database (when DATABASE_URL is unset), and only then the
// dynamic import of AppModule, whose providers and decorator options read the loaded configuration.
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { Logger, type LogLevel as NestLogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { configureHttpApp, createFastifyAdapter } from './common/http-setup.js';
import { ConfigError, loadConfig, setConfig, type AppConfig, type LogLevel } from './config/config.service.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './db/embedded-postgres.js';

const LEVELS: NestLogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];
function logLevels(level: LogLevel): NestLogLevel[] {
  return LEVELS.slice(0, LEVELS.indexOf(level) + 1);
}

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
  const logger = new Logger('Main');
  Logger.overrideLogger(logLevels(config.logLevel));
  let embedded: EmbeddedPostgres | undefined;
  if (config.database.embedded) {
    embedded = await startEmbeddedPostgres(config.database.embeddedDir);
    config = setConfig({ ...config, database: { ...config.database, url: embedded.url } });
    logger.log(
      `No DATABASE_URL${config.redis.url === null ? ' or REDIS_URL' : ''}: embedded PostgreSQL (PGlite) in ` +
        `${config.database.embeddedDir}${config.redis.url === null ? ', queues in PostgreSQL' : ''}; ` +
        'for demos and first runs, set DATABASE_URL for anything else',
    );
  } else if (config.redis.url === null) {
    logger.log('No REDIS_URL: queues in PostgreSQL (BullMQ PostgreSQL backend, schema bullmq)');
  }

  const { AppModule } = await import('./app.module.js');
  const app = await NestFactory.create<NestFastifyApplication>(AppModule, createFastifyAdapter(), {
    logger: logLevels(config.logLevel),
  });
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
  console.error(err);
  process.exit(1);
});
