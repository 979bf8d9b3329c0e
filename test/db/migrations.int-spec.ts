// The migration runner (src/db/schema-engine.ts, Prisma's WASM schema engine) against a real database: a fixture
// schema in a temporary directory, an empty database of its own. Without a PostgreSQL server it runs on PGlite
// through pglite-prisma-adapter, as `migrate-cli` does for the embedded database (pglite-socket serves a single
// database, so adapter-pg cannot create a shadow database there).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import {
  migrateDeploy,
  migrateDev,
  migrateStatus,
  pgMigrationFactory,
  summarizeStatus,
  type MigrationPaths,
} from '../../src/db/schema-engine.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { testEnv } from '../support/env.js';

interface Target {
  factory(): SqlMigrationAwareDriverAdapterFactory;
  columns(table: string): Promise<string[]>;
  value(sql: string): Promise<unknown>;
  close(): Promise<void>;
}

const COLUMNS_SQL =
  "SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position";

async function postgresTarget(): Promise<Target> {
  const db: TestDatabase = await createTestDatabase('empty');
  return {
    factory: () => pgMigrationFactory(db.url),
    async columns(table) {
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      try {
        return (await c.query<{ column_name: string }>(COLUMNS_SQL, [table])).rows.map((x) => x.column_name);
      } finally {
        await c.end();
      }
    },
    async value(sql) {
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      try {
        return Object.values((await c.query<Record<string, unknown>>(sql)).rows[0] ?? {})[0];
      } finally {
        await c.end();
      }
    },
    close: () => db.drop(),
  };
}

async function pgliteTarget(): Promise<Target> {
  const db = new PGlite('memory://');
  return {
    factory: () => new PrismaPGlite(db) as unknown as SqlMigrationAwareDriverAdapterFactory,
    columns: async (table) =>
      (await db.query<{ column_name: string }>(COLUMNS_SQL, [table])).rows.map((x) => x.column_name),
    value: async (sql) => Object.values((await db.query<Record<string, unknown>>(sql)).rows[0] ?? {})[0],
    close: () => db.close(),
  };
}

describe('migration runner (WASM schema engine)', () => {
  let target: Target;
  let dir: string;
  let paths: MigrationPaths;
  const factory = () => target.factory();
  const columns = (table: string) => target.columns(table);

  beforeAll(async () => {
    target = testEnv.databaseUrl === null ? await pgliteTarget() : await postgresTarget();
    dir = await mkdtemp(join(tmpdir(), 'tpfleet-migrations-'));
    await cp(join(import.meta.dirname, '../fixtures/migrations/schema.prisma'), join(dir, 'schema.prisma'));
    paths = { schema: join(dir, 'schema.prisma'), migrations: join(dir, 'migrations') };
  });
  afterAll(async () => {
    await target?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('dev creates the first migration from the schema and applies it', async () => {
    const name = await migrateDev(factory(), 'init', { paths });
    expect(name).toMatch(/^\d{14}_init$/);
    const sql = await readFile(join(paths.migrations, name as string, 'migration.sql'), 'utf8');
    expect(sql).toContain('CREATE TABLE "Widget"');
    expect(await readFile(join(paths.migrations, 'migration_lock.toml'), 'utf8')).toContain('provider = "postgresql"');
    expect(await columns('Widget')).toEqual(['id', 'name']);
  });

  it('dev with an unchanged schema creates nothing', async () => {
    expect(await migrateDev(factory(), 'noop', { paths })).toBeNull();
  });

  it('dev --create-only writes a migration for a schema change without applying it; status reports it pending', async () => {
    const schema = await readFile(paths.schema, 'utf8');
    await writeFile(paths.schema, schema.replace('name String', 'name String\n  size Int @default(1)'));
    const name = await migrateDev(factory(), 'add_size', { paths, createOnly: true });
    expect(name).toMatch(/_add_size$/);
    // Created after init, so it sorts after init, even within the same second (names are the apply order).
    const [, last] = (await readdir(paths.migrations)).filter((n) => n !== 'migration_lock.toml').sort();
    expect(last).toBe(name);
    expect(await readFile(join(paths.migrations, name as string, 'migration.sql'), 'utf8')).toContain(
      'ADD COLUMN     "size" INTEGER NOT NULL DEFAULT 1',
    );
    expect(await columns('Widget')).toEqual(['id', 'name']);
    expect(summarizeStatus(await migrateStatus(factory(), paths))).toEqual({ pending: [name], problems: [] });
  });

  it('deploy applies pending migrations, and a second deploy is a no-op', async () => {
    const [, second] = (await readdir(paths.migrations)).filter((n) => n !== 'migration_lock.toml').sort();
    expect(await migrateDeploy(factory(), paths)).toEqual([second]);
    expect(await columns('Widget')).toEqual(['id', 'name', 'size']);
    expect(await migrateDeploy(factory(), paths)).toEqual([]);
    expect(summarizeStatus(await migrateStatus(factory(), paths))).toEqual({ pending: [], problems: [] });
  });

  it('deploy applies a hand-written migration whose function body and comments hold semicolons', async () => {
    // adapter-pg split scripts on every ';' (src/db/schema-engine.ts, wholeScripts): this body came apart.
    const name = '29991231235959_function';
    await mkdir(join(paths.migrations, name));
    await writeFile(
      join(paths.migrations, name, 'migration.sql'),
      `-- A comment; with a semicolon.
CREATE FUNCTION "widget_count"(p_min int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  n int;
BEGIN
  SELECT count(*) INTO n FROM "Widget" WHERE "size" >= p_min;
  RETURN n + length('a;b');
END
$$;
`,
    );
    expect(await migrateDeploy(factory(), paths)).toEqual([name]);
    expect(await target.value('SELECT "widget_count"(1) AS n')).toBe(3);
  });

  it('status reports a migration edited after it was applied', async () => {
    const [first] = (await readdir(paths.migrations)).filter((n) => n !== 'migration_lock.toml').sort();
    const file = join(paths.migrations, first as string, 'migration.sql');
    await writeFile(file, `${await readFile(file, 'utf8')}\n-- edited\n`);
    expect(summarizeStatus(await migrateStatus(factory(), paths)).problems).toEqual([
      `edited after it was applied: ${first}`,
    ]);
  });
});
