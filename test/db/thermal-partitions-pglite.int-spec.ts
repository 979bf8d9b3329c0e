// The embedded database (PGlite, DATABASE_URL unset) gets the same hourly partitions of raw thermal samples as a
// PostgreSQL server: the real migrations applied the way migrate-cli applies them there (pglite-prisma-adapter), then
// the upkeep function the compaction job calls. Runs on PGlite whether or not a server is around, because the
// partition tests in test/polling/thermal-partitions.e2e-spec.ts need Redis and are skipped where neither server is.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PGlite } from '@electric-sql/pglite';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { migrateDeploy } from '../../src/db/schema-engine.js';

const HOUR = 3600_000;
const T = Date.parse('2030-01-01T10:20:00Z');
const partitionOf = (ms: number) => `ThermalSample_p${new Date(ms).toISOString().slice(0, 13).replace(/\D/g, '')}`;

describe('thermal sample partitions on PGlite', () => {
  let db: PGlite;

  beforeAll(async () => {
    db = new PGlite('memory://');
    await migrateDeploy(new PrismaPGlite(db) as unknown as SqlMigrationAwareDriverAdapterFactory);
  }, 180_000); // every migration on WASM PostgreSQL: ~28 s alone on a busy 2-core machine, more beside a full run
  afterAll(() => db?.close());

  const maintain = async (now: number, keepAfter: number) =>
    (
      await db.query<{ created: number; dropped: number; deleted: string }>(
        'SELECT "created", "dropped", "deleted"::text FROM "thermal_sample_maintain"($1, 3, $2)',
        [new Date(now), new Date(keepAfter)],
      )
    ).rows[0];
  const insert = async (at: number) =>
    (
      await db.query<{ part: string }>(
        `INSERT INTO "ThermalSample" ("boardId", "sensor", "at", "temperatureC")
         VALUES (gen_random_uuid(), 'cpu', $1, 40) RETURNING tableoid::regclass::text AS part`,
        [new Date(at)],
      )
    ).rows[0]!.part.replaceAll('"', '');

  it('creates hours ahead, routes inserts at the edges, and drops whole expired hours', async () => {
    expect(await maintain(T, T - 24 * HOUR)).toMatchObject({ created: 4, deleted: '0' });
    const hour10 = Date.parse('2030-01-01T10:00:00Z');
    expect(await insert(hour10)).toBe(partitionOf(hour10));
    expect(await insert(hour10 + HOUR - 1)).toBe(partitionOf(hour10));
    expect(await insert(hour10 + HOUR)).toBe(partitionOf(hour10 + HOUR));
    expect(await insert(T + 10 * HOUR)).toBe('ThermalSample_default');

    // Three hours later with one hour of retention: 10:00 and 11:00 end by 12:20 and go; the row that waited in
    // the default partition moves into its hour.
    expect(await maintain(T + 3 * HOUR, T + 2 * HOUR)).toEqual({ created: 4, dropped: 2, deleted: '0' });
    const rows = await db.query<{ part: string }>(
      'SELECT tableoid::regclass::text AS part FROM "ThermalSample" ORDER BY "at"',
    );
    expect(rows.rows.map((r) => r.part.replaceAll('"', ''))).toEqual([partitionOf(T + 10 * HOUR)]);
  });
});
