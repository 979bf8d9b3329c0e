// Once per jest run: make sure a template database exists for this exact set of prisma/migrations (its name carries a
// hash of them, so test runs of two checkouts with different migrations never rebuild each other's template under
// them). Each integration/e2e file then copies it (createTestDatabase) in ~0.1 s; the name reaches the test workers
// through TEST_TEMPLATE_DB (see ./env.ts).
// jest loads this file as CommonJS without the moduleNameMapper, so it imports only node builtins and pg, and runs
// the migrations through the built CLI (npm test builds first).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';

const TEMPLATE_PREFIX = 'tpfleet_test_template'; // also in ./env.ts
const LOCK_ID = 4_187_301; // serialises concurrent test runs against one server
const CLI = 'dist/src/db/migrate-cli.js';

function migrationsHash(dir = 'prisma/migrations'): string {
  const h = createHash('sha256');
  for (const name of existsSync(dir) ? readdirSync(dir).sort() : []) {
    const sql = join(dir, name, 'migration.sql');
    if (existsSync(sql)) {
      h.update(name).update('\0').update(readFileSync(sql)).update('\0');
    }
  }
  return h.digest('hex').slice(0, 16);
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export default async function globalSetup(): Promise<void> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) {
    return; // embedded: each file migrates its own in-memory PGlite
  }
  const hash = migrationsHash();
  const TEMPLATE_DB = `${TEMPLATE_PREFIX}_${hash}`;
  process.env.TEST_TEMPLATE_DB = TEMPLATE_DB; // read by the test workers, which start after this
  const admin = new pg.Client({ connectionString: withDatabase(url, 'postgres') });
  await admin.connect();
  try {
    await admin.query('SELECT pg_advisory_lock($1)', [LOCK_ID]);
    // The COMMENT is written last: a template without it is one whose migration failed or was interrupted.
    const found = await admin.query<{ comment: string | null }>(
      'SELECT shobj_description(oid, $2) AS comment FROM pg_database WHERE datname = $1',
      [TEMPLATE_DB, 'pg_database'],
    );
    if (found.rows[0]?.comment === 'complete') {
      return;
    }
    if (!existsSync(CLI)) {
      throw new Error(`${CLI} is missing: build first (\`npm run build\`; \`npm test\` does it)`);
    }
    await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DB} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${TEMPLATE_DB}`);
    const run = spawnSync(process.execPath, [CLI, 'deploy'], {
      env: { ...process.env, DATABASE_URL: withDatabase(url, TEMPLATE_DB) },
      encoding: 'utf8',
    });
    if (run.status !== 0) {
      throw new Error(`migrating ${TEMPLATE_DB} failed:\n${run.stdout}${run.stderr}`);
    }
    await admin.query(`COMMENT ON DATABASE ${TEMPLATE_DB} IS 'complete'`);
  } finally {
    await admin.query('SELECT pg_advisory_unlock($1)', [LOCK_ID]).catch(() => undefined);
    await admin.end();
  }
}
