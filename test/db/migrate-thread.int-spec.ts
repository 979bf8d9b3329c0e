// The auto-migration at start (src/prisma/prisma.service.ts) runs the schema engine on a worker thread
// (src/db/migrate-thread.ts): the repository's migrations against an empty database of its own, as a server started
// with DB_AUTO_MIGRATE (or in embedded mode) applies them.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readdir } from 'node:fs/promises';
import pg from 'pg';
import { migrateDeployOnThread } from '../../src/db/migrate-thread.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

describe('migrateDeployOnThread', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase('empty');
  });
  afterAll(() => db.drop());

  it('applies every migration of prisma/migrations on an empty database, then none on a second run', async () => {
    const migrations = (await readdir('prisma/migrations', { withFileTypes: true }))
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
    expect(await migrateDeployOnThread(db.url)).toEqual(migrations);
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      const { rows } = await c.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM _prisma_migrations WHERE finished_at IS NOT NULL',
      );
      expect(rows[0]?.n).toBe(migrations.length);
    } finally {
      await c.end();
    }
    expect(await migrateDeployOnThread(db.url)).toEqual([]);
  });

  it("rejects with the engine's error when the database cannot be reached", async () => {
    await expect(migrateDeployOnThread('postgresql://nobody@127.0.0.1:9/none')).rejects.toThrow();
  });
});
