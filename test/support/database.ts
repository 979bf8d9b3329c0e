// A database of its own for each integration/e2e test file, so files run in parallel:
//   const db = await createTestDatabase();  ...  afterAll(() => db.drop());
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startEmbeddedPostgres } from '../../src/db/embedded-postgres.js';
import { migrateDeploy, pgMigrationFactory } from '../../src/db/schema-engine.js';
import { TEMPLATE_DB, testEnv, withDatabase } from './env.js';

export interface TestDatabase {
  url: string;
  /** true: an in-memory PGlite served over a loopback socket (no PostgreSQL server was found). */
  embedded: boolean;
  drop(): Promise<void>;
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: withDatabase(testEnv.databaseUrl as string, 'postgres') });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/**
 * `migrated` (default): a copy of the template database (every migration applied). `empty`: a database with no
 * tables, for tests of the migration runner itself.
 */
export async function createTestDatabase(kind: 'migrated' | 'empty' = 'migrated'): Promise<TestDatabase> {
  if (testEnv.databaseUrl === null) {
    const pglite = await startEmbeddedPostgres('memory://');
    if (kind === 'migrated') {
      await migrateDeploy(pgMigrationFactory(pglite.url));
    }
    return { url: pglite.url, embedded: true, drop: () => pglite.stop() };
  }
  const name = `tpfleet_t_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name} TEMPLATE ${kind === 'migrated' ? TEMPLATE_DB : 'template0'}`));
  return {
    url: withDatabase(testEnv.databaseUrl, name),
    embedded: false,
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/** A BullMQ key prefix of its own for a test file that shares the Redis server. */
export function testQueuePrefix(): string {
  return `t${randomBytes(4).toString('hex')}`;
}
