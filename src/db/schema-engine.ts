// Migrations without Prisma's native schema-engine binary (which only binaries.prisma.sh serves): Prisma's own WASM
// schema engine from npm, driven through a migration-aware driver adapter. Writes the standard
// prisma/migrations/*/migration.sql, migration_lock.toml and _prisma_migrations rows, so the layout stays compatible
// with the Prisma CLI. Unlike the CLI it never prompts (no data-loss or reset confirmation).
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, extname, join, resolve } from 'node:path';
import pg from 'pg';
import { parse as parsePgUrl } from 'pg-connection-string';
import { PrismaPg } from '@prisma/adapter-pg';
import { GuardedPgClient } from './pg-client.js';
import {
  bindMigrationAwareSqlAdapterFactory,
  type SqlMigrationAwareDriverAdapterFactory,
} from '@prisma/driver-adapter-utils';
import type {
  DiagnoseMigrationHistoryOutput,
  MigrationList,
  SchemaEngine,
} from '@prisma/schema-engine-wasm/schema_engine_bg';

const LOCK = 'migration_lock.toml';
const filters = { externalTables: [], externalEnums: [] };

/** Where the schema and the migrations live; tests point these at a fixture copy. */
export interface MigrationPaths {
  schema: string;
  migrations: string;
}
// Same locations as prisma.config.ts: a folder of per-domain .prisma files (or a single schema.prisma).
export const defaultPaths: MigrationPaths = {
  schema: existsSync(resolve('prisma/schema')) ? resolve('prisma/schema') : resolve('prisma/schema.prisma'),
  migrations: resolve('prisma/migrations'),
};

type EngineModule = typeof import('@prisma/schema-engine-wasm/schema_engine_bg');
interface WasmExports {
  __wbindgen_start(): void;
}
// lib ES2023 + @types/node 20 carry no WebAssembly typings: the few members used here.
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: Record<string, unknown>) => { exports: WasmExports };
}

let enginePromise: Promise<EngineModule> | undefined;
function loadEngineModule(): Promise<EngineModule> {
  // The package's main entry imports the .wasm as an ES module (needs an experimental flag): instantiate it by
  // hand from schema_engine_bg.js + schema_engine_bg.wasm instead.
  enginePromise ??= (async () => {
    const runtime = await import('@prisma/schema-engine-wasm/schema_engine_bg');
    const require = createRequire(import.meta.url);
    const wasmPath = join(
      dirname(require.resolve('@prisma/schema-engine-wasm/schema_engine_bg')),
      'schema_engine_bg.wasm',
    );
    const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
    // The engine arms timeouts (e.g. 10 s around the migration advisory lock) and never clears them: unref them,
    // or every process that migrated stays alive for those seconds.
    const imports: Record<string, unknown> = { ...runtime };
    for (const key of Object.keys(imports).filter((k) => k.startsWith('__wbg_setTimeout'))) {
      const arm = imports[key] as (...a: unknown[]) => NodeJS.Timeout;
      imports[key] = (...a: unknown[]) => arm(...a).unref();
    }
    const instance = new wasm.Instance(new wasm.Module(await readFile(wasmPath)), { './schema_engine_bg.js': imports });
    runtime.__wbg_set_wasm(instance.exports);
    instance.exports.__wbindgen_start();
    return runtime;
  })();
  return enginePromise;
}

interface QueryResultLike {
  fields?: { dataTypeID: number }[];
}
const PG_CHAR = 18;
const PG_TEXT = 25;
function charAsText<T>(res: T): T {
  for (const r of (Array.isArray(res) ? res : [res]) as QueryResultLike[]) {
    for (const f of r?.fields ?? []) {
      if (f.dataTypeID === PG_CHAR) {
        f.dataTypeID = PG_TEXT;
      }
    }
  }
  return res;
}

// Workaround 1: adapter-pg throws "Unsupported column type char" for PostgreSQL's one-byte "char" (OID 18), which
// the engine's schema describer selects (pg_constraint.contype). Report it as text. adapter-pg queries through
// pg.Pool, which calls client.query(config, values, callback); direct callers get a promise.
type Callback = (err: unknown, res: unknown) => void;
class CharAsTextClient extends GuardedPgClient {
  override query(...args: unknown[]): never {
    const run = super.query.bind(this) as (...a: unknown[]) => unknown;
    const cbAt = args.findIndex((a) => typeof a === 'function');
    if (cbAt >= 0) {
      const cb = args[cbAt] as Callback;
      args[cbAt] = (err: unknown, res: unknown) => cb(err, err ? res : charAsText(res));
      return run(...args) as never;
    }
    const out = run(...args);
    return (out instanceof Promise ? out.then(charAsText) : out) as never;
  }
}

// Workaround 2: adapter-pg 7.10.1 connectToShadowDb() (a) builds the shadow pool as {...config, database}, and a
// `connectionString` overrides `database`, so the "shadow" is the main database; (b) drops the shadow database
// while its pool is still connected. Use discrete fields; close, then drop.
class PgWithShadowDb extends PrismaPg {
  constructor(private readonly fields: pg.PoolConfig) {
    super(fields);
  }

  override async connect(): Promise<Awaited<ReturnType<PrismaPg['connect']>>> {
    return wholeScripts(await super.connect());
  }

  override async connectToShadowDb(): Promise<Awaited<ReturnType<PrismaPg['connectToShadowDb']>>> {
    const main = await this.connect();
    const name = `prisma_migrate_shadow_db_${globalThis.crypto.randomUUID()}`;
    await main.executeScript(`CREATE DATABASE "${name}"`);
    const shadow = wholeScripts(await new PrismaPg({ ...this.fields, database: name }).connect());
    const dispose = shadow.dispose.bind(shadow);
    let disposed = false;
    shadow.dispose = async () => {
      if (disposed) {
        return;
      }
      disposed = true;
      await dispose();
      await main.executeScript(`DROP DATABASE IF EXISTS "${name}"`);
      await main.dispose();
    };
    return shadow;
  }
}

// Workaround 3: adapter-pg 7.10.1 executeScript() splits a migration on every ';' and sends the pieces one by one,
// which cuts a function body ($$ … ; … $$) or a ';' inside a string or comment apart (the thermal partition
// functions in prisma/migrations/20261125030000_thermal_sample_partitions are such bodies). Send the script as one
// simple-protocol query instead, as Prisma's native schema engine does: PostgreSQL runs its statements in order, as
// one implicit transaction, so a migration that fails half-way leaves nothing behind.
type PgAdapter = Awaited<ReturnType<PrismaPg['connect']>>;
function wholeScripts(adapter: PgAdapter): PgAdapter {
  const pool = adapter.underlyingDriver() as pg.Pool;
  // onError turns a pg error into the DriverAdapterError the engine reports (it always throws).
  const onError = (adapter as unknown as { onError(e: unknown): never }).onError.bind(adapter);
  adapter.executeScript = async (script: string) => {
    try {
      await pool.query(script);
    } catch (err) {
      onError(err);
    }
  };
  return adapter;
}

/** A migration-aware adapter factory for a PostgreSQL server URL (the role needs CREATEDB for `dev`). */
export function pgMigrationFactory(url: string): SqlMigrationAwareDriverAdapterFactory {
  const c = parsePgUrl(url);
  return new PgWithShadowDb({
    host: c.host ?? undefined,
    port: c.port ? Number(c.port) : undefined,
    user: c.user,
    password: c.password,
    database: c.database ?? undefined,
    Client: CharAsTextClient as unknown as typeof pg.Client,
  });
}

async function schemaFiles(paths: MigrationPaths) {
  const files = (await stat(paths.schema)).isDirectory()
    ? (await readdir(paths.schema))
        .filter((f) => extname(f) === '.prisma')
        .sort()
        .map((f) => join(paths.schema, f))
    : [paths.schema];
  return Promise.all(files.map(async (path) => ({ path, content: await readFile(path, 'utf8') })));
}

async function migrationsList(paths: MigrationPaths): Promise<MigrationList> {
  const dir = paths.migrations;
  const names = existsSync(dir)
    ? (await readdir(dir, { withFileTypes: true }))
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .sort()
    : [];
  const lock = join(dir, LOCK);
  return {
    baseDir: dir,
    lockfile: { path: LOCK, content: existsSync(lock) ? await readFile(lock, 'utf8') : null },
    shadowDbInitScript: '',
    migrationDirectories: await Promise.all(
      names.map(async (name) => ({
        path: name,
        migrationFile: {
          path: 'migration.sql',
          content: { tag: 'ok' as const, value: await readFile(join(dir, name, 'migration.sql'), 'utf8') },
        },
      })),
    ),
  };
}

async function withEngine<T>(
  factory: SqlMigrationAwareDriverAdapterFactory,
  fn: (e: SchemaEngine) => Promise<T>,
): Promise<T> {
  // The engine never disposes the connections it opens, and applyMigrations leaves its session advisory lock on a
  // pooled connection: without disposing them here, the next migration call waits for the pool's 10 s idle timeout.
  const opened: { dispose(): Promise<void> }[] = [];
  const tracked = new Proxy(factory, {
    get(target, prop) {
      if (prop === 'connect' || prop === 'connectToShadowDb') {
        return async () => {
          const adapter = await target[prop]();
          opened.push(adapter);
          return adapter;
        };
      }
      const value: unknown = Reflect.get(target, prop);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  const runtime = await loadEngineModule();
  const engine = await runtime.SchemaEngine.new(
    { datamodels: undefined },
    () => {},
    bindMigrationAwareSqlAdapterFactory(tracked),
  );
  try {
    return await fn(engine);
  } finally {
    engine.free();
    for (const a of opened.reverse()) {
      await a.dispose().catch(() => undefined); // the engine may have disposed some already
    }
  }
}

/** Applies every pending migration; returns the names applied (empty when up to date). */
export async function migrateDeploy(
  factory: SqlMigrationAwareDriverAdapterFactory,
  paths: MigrationPaths = defaultPaths,
): Promise<string[]> {
  return withEngine(factory, async (e) => {
    const out = await e.applyMigrations({ migrationsList: await migrationsList(paths), filters });
    return out.appliedMigrationNames;
  });
}

export async function migrateStatus(
  factory: SqlMigrationAwareDriverAdapterFactory,
  paths: MigrationPaths = defaultPaths,
): Promise<DiagnoseMigrationHistoryOutput> {
  return withEngine(factory, async (e) =>
    e.diagnoseMigrationHistory({ migrationsList: await migrationsList(paths), optInToShadowDatabase: false, filters }),
  );
}

/** Pending migration names and problems (failed, edited, diverged history) from a status diagnosis. */
export function summarizeStatus(s: DiagnoseMigrationHistoryOutput): { pending: string[]; problems: string[] } {
  const problems = [
    ...s.failedMigrationNames.map((n) => `failed: ${n}`),
    ...s.editedMigrationNames.map((n) => `edited after it was applied: ${n}`),
  ];
  let pending: string[] = [];
  switch (s.history?.diagnostic) {
    case undefined:
      break;
    case 'databaseIsBehind':
      pending = s.history.unappliedMigrationNames;
      break;
    case 'migrationsDirectoryIsBehind':
      problems.push(
        `applied but missing from the migrations directory: ${s.history.unpersistedMigrationNames.join(', ')}`,
      );
      break;
    case 'historiesDiverge':
      problems.push(`history diverges after ${s.history.lastCommonMigrationName ?? '(start)'}`);
      pending = s.history.unappliedMigrationNames;
      break;
  }
  return { pending, problems };
}

/**
 * Creates a migration from the difference between the schema and the migration history (checked on a shadow
 * database), then applies it unless `createOnly`. Returns the new migration's directory name, or null when the
 * schema has no changes.
 */
export async function migrateDev(
  factory: SqlMigrationAwareDriverAdapterFactory,
  name: string,
  opts: { createOnly?: boolean; paths?: MigrationPaths; warn?: (msg: string) => void } = {},
): Promise<string | null> {
  const paths = opts.paths ?? defaultPaths;
  return withEngine(factory, async (e) => {
    const list = await migrationsList(paths);
    const schema = { files: await schemaFiles(paths) };
    const diag = await e.devDiagnostic({ migrationsList: list, filters });
    if (diag.action.tag === 'reset') {
      throw new Error(`Database needs a reset: ${diag.action.reason}`);
    }
    const applied = await e.applyMigrations({ migrationsList: list, filters });
    // Ordering trick: on a database with no applied migrations devDiagnostic did not set up the shadow database, and
    // evaluateDataLoss/createMigration then fail with "PostgreSQL shadow DB must be provided through an external
    // factory". Diagnosing again after applying makes the engine set it up.
    if (applied.appliedMigrationNames.length) {
      await e.devDiagnostic({ migrationsList: list, filters });
    }
    const loss = await e.evaluateDataLoss({ migrationsList: list, schema, filters });
    for (const w of loss.warnings ?? []) {
      (opts.warn ?? console.warn)(`data-loss warning: ${w.message}`);
    }
    if (loss.unexecutableSteps?.length) {
      throw new Error(loss.unexecutableSteps.map((s) => s.message).join('\n'));
    }
    const created = await e.createMigration({
      draft: false,
      migrationName: name,
      migrationsList: list,
      schema,
      filters,
    });
    if (created.migrationScript === null) {
      return null;
    }
    const generated = sequencedMigrationName(
      list.migrationDirectories.map((d) => d.path),
      created.generatedMigrationName,
    );
    const dir = join(paths.migrations, generated);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, `migration.${created.extension}`), created.migrationScript);
    if (!list.lockfile.content) {
      await writeFile(
        join(paths.migrations, LOCK),
        '# Please do not edit this file manually\n# It should be added in your version-control system (e.g., Git)\n' +
          `provider = "${created.connectorType}"\n`,
      );
    }
    if (!opts.createOnly) {
      await e.applyMigrations({ migrationsList: await migrationsList(paths), filters });
    }
    return generated;
  });
}

/**
 * Migrations apply in the order of their names, whose prefix is the creation time to the second: two created within
 * one second sorted by their descriptive part (`…14_add_size` before `…14_init`). A new migration's prefix is made
 * later than every existing one (a second after the latest when the clock has not moved on), so name order is
 * creation order and cannot tie.
 */
export function sequencedMigrationName(existing: readonly string[], generated: string): string {
  const m = /^(\d{14})_(.*)$/.exec(generated);
  const latest = existing
    .map((n) => /^(\d{14})_/.exec(n)?.[1])
    .filter((p): p is string => p !== undefined)
    .sort()
    .at(-1);
  if (!m || latest === undefined || m[1]! > latest) {
    return generated;
  }
  const t = latest.replace(/^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/, '$1-$2-$3T$4:$5:$6Z');
  const next = new Date(Date.parse(t) + 1000).toISOString().replace(/\D/g, '').slice(0, 14);
  return `${next}_${m[2]}`;
}
