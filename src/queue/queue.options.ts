// How BullMQ connects, decided once from the configuration: Redis when REDIS_URL is set, otherwise BullMQ's
// PostgreSQL backend in schema `bullmq` of the application database.
import { createPostgresBackend, setDefaultBackendFactory, type QueueOptions } from 'bullmq';
import type { AppConfig, Role } from '../config/config.service.js';
import { guardedPgClient } from '../db/pg-client.js';

export type QueueBackend = 'redis' | 'postgres';

export function queueBackend(config: AppConfig): QueueBackend {
  return config.redis.url === null ? 'postgres' : 'redis';
}

/**
 * Root options for every Queue and Worker. Switches BullMQ's process-wide default backend, so call it before any
 * queue is constructed (QueueModule's factory does).
 */
export function queueRootOptions(config: AppConfig): QueueOptions {
  if (config.redis.url === null) {
    setDefaultBackendFactory(createPostgresBackend);
    // Each Queue and Worker gets its own pool; on the embedded database every connection shares one session, so
    // more than two per pool only queue up inside PGlite.
    const max = config.database.embedded ? 2 : 5;
    // Client: its connections never lack an 'error' listener (see GuardedPgClient).
    const connection = {
      connectionString: config.database.url,
      schema: 'bullmq',
      migrate: true,
      max,
      Client: guardedPgClient,
    };
    // BullMQ's option types describe ioredis options; the PostgreSQL backend takes pg pool options here.
    return { connection: connection as unknown as QueueOptions['connection'], prefix: config.redis.prefix };
  }
  setDefaultBackendFactory(); // back to Redis (a test process may have switched it)
  const u = new URL(config.redis.url);
  return {
    connection: {
      host: u.hostname,
      port: Number(u.port || 6379),
      username: u.username || undefined,
      password: u.password ? decodeURIComponent(u.password) : undefined,
      db: u.pathname.length > 1 ? Number(u.pathname.slice(1)) : undefined,
      tls: u.protocol === 'rediss:' ? {} : undefined,
    },
    prefix: config.redis.prefix,
  };
}

/**
 * Seconds a worker waits on an empty queue before looking again. NOTIFY does not cross pglite-socket, so an
 * embedded worker only notices new jobs when this wait ends: keep it short there.
 */
export function workerDrainDelay(config: AppConfig): number {
  return config.database.embedded && config.redis.url === null ? 0.2 : 5;
}

export function runsWorkers(role: Role): boolean {
  return role !== 'api';
}
