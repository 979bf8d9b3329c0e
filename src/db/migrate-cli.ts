// `node dist/src/db/migrate-cli.js deploy | status | dev --name <name> [--create-only]
//   [--schema prisma/schema.prisma] [--migrations prisma/migrations]`
// Database: DATABASE_URL, or (unset) the embedded PGlite data directory PGLITE_DIR, opened directly.
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { databaseConfigFromEnv } from '../config/config.service.js';
import { lockDataDir } from './data-dir-lock.js';
import {
  defaultPaths,
  migrateDeploy,
  migrateDev,
  migrateStatus,
  pgMigrationFactory,
  summarizeStatus,
} from './schema-engine.js';

async function factoryFor(db: ReturnType<typeof databaseConfigFromEnv>) {
  if (db.url !== null) {
    return { factory: pgMigrationFactory(db.url), where: 'PostgreSQL', close: async () => {} };
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const { PrismaPGlite } = await import('pglite-prisma-adapter');
  mkdirSync(db.embeddedDir, { recursive: true }); // PGlite does not create parent directories
  const release = lockDataDir(db.embeddedDir); // not beside a fleet manager using it (data-dir-lock.ts)
  const pglite = new PGlite(db.embeddedDir);
  // pglite-prisma-adapter pins its own copy of @prisma/driver-adapter-utils: same shape, different nominal type.
  const factory = new PrismaPGlite(pglite) as unknown as SqlMigrationAwareDriverAdapterFactory;
  const close = () => pglite.close().finally(release);
  return { factory, where: `embedded PGlite (${db.embeddedDir})`, close };
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      'create-only': { type: 'boolean', default: false },
      schema: { type: 'string' },
      migrations: { type: 'string' },
    },
  });
  const command = positionals[0];
  const paths = {
    schema: values.schema ? resolve(values.schema) : defaultPaths.schema,
    migrations: values.migrations ? resolve(values.migrations) : defaultPaths.migrations,
  };
  const { factory, where, close } = await factoryFor(databaseConfigFromEnv());
  try {
    switch (command) {
      case 'deploy': {
        const applied = await migrateDeploy(factory, paths);
        console.log(applied.length ? `Applied to ${where}: ${applied.join(', ')}` : `${where} is up to date`);
        return 0;
      }
      case 'status': {
        const { pending, problems } = summarizeStatus(await migrateStatus(factory, paths));
        console.log(
          pending.length ? `Pending on ${where}: ${pending.join(', ')}` : `No pending migrations on ${where}`,
        );
        for (const p of problems) {
          console.log(p);
        }
        return problems.length || pending.length ? 1 : 0;
      }
      case 'dev': {
        if (!values.name) {
          console.error('dev needs --name <migration_name>');
          return 2;
        }
        const created = await migrateDev(factory, values.name, { createOnly: values['create-only'], paths });
        console.log(
          created === null
            ? 'The schema matches the migrations: nothing to create'
            : `Created ${paths.migrations}/${created}${values['create-only'] ? '' : ` and applied it to ${where}`}`,
        );
        return 0;
      }
      default:
        console.error('usage: migrate-cli deploy | status | dev --name <name> [--create-only]');
        return 2;
    }
  } finally {
    await close();
  }
}

main(process.argv.slice(2)).then(
  // Exit explicitly: adapter-pg pools otherwise keep the process alive for their 10 s idle timeout.
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
