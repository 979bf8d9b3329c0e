// Raw thermal samples partitioned by hour, against real PostgreSQL (prisma/migrations/
// 20261125030000_thermal_sample_partitions, PollingRepository.maintainThermalPartitions): the upkeep creates the
// hour's partition and the next ones ahead, idempotently and safely from two workers at once; an insert always
// lands (its hour's partition, or the default one until the upkeep moves it into its hour); retention drops whole
// partitions. The clock is passed in, so the hours are fixed ones in 2030, away from the samples the app writes.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { PollingRepository } from '../../src/polling/polling.repository.js';
import { PollingScheduler } from '../../src/polling/polling.scheduler.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { requireRedis } from '../support/redis.js';

const redis = requireRedis();
const HOUR = 3600_000;
const T = Date.parse('2030-01-01T10:20:00Z');
const partitionOf = (ms: number) => `ThermalSample_p${new Date(ms).toISOString().slice(0, 13).replace(/\D/g, '')}`;

redis.describe('thermal sample partitions', () => {
  let app: TestApp;
  let sql: pg.Client;
  let repository: PollingRepository;
  const board = randomUUID();

  beforeAll(async () => {
    app = await startTestApp({ redisUrl: redis.url });
    app.app.get(PollingScheduler).enabled = false; // no compaction job runs the upkeep with the real clock meanwhile
    repository = app.app.get(PollingRepository);
    sql = new pg.Client({ connectionString: app.db.url });
    await sql.connect();
  }, 60_000);

  afterAll(async () => {
    await sql?.end();
    await app?.close();
  });

  const partitions = async () =>
    (
      await sql.query<{ name: string }>(
        `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
         WHERE i.inhparent = '"ThermalSample"'::regclass ORDER BY 1`,
      )
    ).rows.map((r) => r.name);
  const insert = async (at: number, t = 40) =>
    (
      await sql.query<{ part: string }>(
        `INSERT INTO "ThermalSample" ("boardId", "sensor", "at", "temperatureC") VALUES ($1, 'cpu', $2, $3)
         RETURNING tableoid::regclass::text AS part`,
        [board, new Date(at), t],
      )
    ).rows[0]!.part.replaceAll('"', '');
  const where = async () =>
    (
      await sql.query<{ at: Date; part: string }>(
        `SELECT "at", tableoid::regclass::text AS part FROM "ThermalSample" WHERE "boardId" = $1 ORDER BY "at"`,
        [board],
      )
    ).rows.map((r) => [r.at.toISOString(), r.part.replaceAll('"', '')]);

  it('creates the partition of the hour and the next ones ahead, once', async () => {
    const first = await repository.maintainThermalPartitions(new Date(T), 3, new Date(T - 24 * HOUR));
    expect(first.created).toBe(4);
    const names = await partitions();
    for (const h of [0, 1, 2, 3]) {
      expect(names).toContain(partitionOf(T + h * HOUR));
    }
    expect(names).toContain('ThermalSample_default');
    expect(names).not.toContain(partitionOf(T + 4 * HOUR));
    // Each new partition's BRIN index on "at" is summarised by autovacuum as it fills, or the compaction's time bound
    // would match every unsummarised block range and read the whole hour.
    const brin = await sql.query<{ options: string[] | null }>(
      `SELECT reloptions AS options FROM pg_class WHERE relname = $1`,
      [`${partitionOf(T)}_at_idx`],
    );
    expect(brin.rows).toEqual([{ options: ['autosummarize=on'] }]);

    // A later run adds only the hour that came into reach, and an immediate re-run nothing.
    expect(await repository.maintainThermalPartitions(new Date(T + HOUR), 3, new Date(T - 24 * HOUR))).toMatchObject({
      created: 1,
      dropped: 0,
    });
    expect(await repository.maintainThermalPartitions(new Date(T + HOUR), 3, new Date(T - 24 * HOUR))).toEqual({
      created: 0,
      dropped: 0,
      deleted: 0,
    });
    expect(await partitions()).toContain(partitionOf(T + 4 * HOUR));
  });

  it('puts a sample at either edge of an hour in that hour, and one beyond the partitions in the default', async () => {
    const hour10 = Date.parse('2030-01-01T10:00:00Z');
    expect(await insert(hour10)).toBe(partitionOf(hour10));
    expect(await insert(hour10 + HOUR - 1)).toBe(partitionOf(hour10)); // 10:59:59.999
    expect(await insert(hour10 + HOUR)).toBe(partitionOf(hour10 + HOUR)); // 11:00:00.000
    // No partition this far ahead: the insert still succeeds, into the default partition ...
    const far = Date.parse('2030-01-02T07:30:00Z');
    expect(await insert(far)).toBe('ThermalSample_default');
    // ... and the next upkeep gives that hour its partition and moves the row there.
    expect((await repository.maintainThermalPartitions(new Date(T), 3, new Date(T - 24 * HOUR))).created).toBe(1);
    expect(await where()).toEqual([
      ['2030-01-01T10:00:00.000Z', partitionOf(hour10)],
      ['2030-01-01T10:59:59.999Z', partitionOf(hour10)],
      ['2030-01-01T11:00:00.000Z', partitionOf(hour10 + HOUR)],
      ['2030-01-02T07:30:00.000Z', partitionOf(far)],
    ]);
  });

  it('drops the partitions wholly past retention and keeps the hour that straddles it', async () => {
    // A day of samples later (the clock at 2030-01-02 10:20), with two hours of retention the cut is 08:20: the
    // partitions ending by then go, with all their rows; 08:00–09:00 is kept whole (a partition is dropped only
    // once its last row is past retention, so raw history is kept up to an hour longer than configured).
    const now = T + 24 * HOUR;
    // The upkeep ran through the night: partitions from 08:00 on (the earlier hours would have been dropped).
    await repository.maintainThermalPartitions(new Date(now - 2 * HOUR), 5, new Date(now - 24 * HOUR));
    const kept = [now - 2 * HOUR + 10 * 60_000, now - 2 * HOUR - 10 * 60_000]; // 08:30, 08:10
    await insert(kept[0]!);
    await insert(kept[1]!);
    const before = await partitions();
    const expired = before.filter((n) => n.startsWith('ThermalSample_p') && n < partitionOf(now - 2 * HOUR));
    // 2030-01-01 10:00 to 14:00 (the first tests' hours, with their rows), and 2030-01-02 07:00.
    expect(expired).toEqual([...[0, 1, 2, 3, 4].map((h) => partitionOf(T + h * HOUR)), partitionOf(now - 3 * HOUR)]);

    const result = await repository.maintainThermalPartitions(new Date(now), 3, new Date(now - 2 * HOUR));
    expect(result).toEqual({ created: 0, dropped: expired.length, deleted: 0 });
    const after = await partitions();
    expect(after.filter((n) => expired.includes(n))).toEqual([]);
    expect(after).toContain(partitionOf(now - 2 * HOUR));
    expect(await where()).toEqual([
      [new Date(kept[1]!).toISOString(), partitionOf(now - 2 * HOUR)],
      [new Date(kept[0]!).toISOString(), partitionOf(now - 2 * HOUR)],
    ]);
  });

  it('deletes expired rows that waited in the default partition', async () => {
    const now = T + 24 * HOUR;
    // A row older than retention in an hour that has no partition (as when the upkeep did not run for hours):
    // it waits in the default partition, and retention deletes it there.
    const old = now - 5 * HOUR;
    expect(await insert(old)).toBe('ThermalSample_default');
    expect(await repository.maintainThermalPartitions(new Date(now), 3, new Date(now - 2 * HOUR))).toEqual({
      created: 0,
      dropped: 0,
      deleted: 1,
    });
    expect((await where()).map(([at]) => at)).not.toContain(new Date(old).toISOString());
  });

  it('two workers running the upkeep at once create and drop each partition once, and both succeed', async () => {
    const now = T + 48 * HOUR;
    // Hold the lock the upkeep starts with, so that both runs are queued before either starts, then let them race.
    const holder = new pg.Client({ connectionString: app.db.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE "ThermalSample" IN SHARE UPDATE EXCLUSIVE MODE');
      const runs = [0, 1].map(() => repository.maintainThermalPartitions(new Date(now), 3, new Date(now - 2 * HOUR)));
      await waitForWaiters(sql, 2);
      await holder.query('COMMIT');
      const [a, b] = await Promise.all(runs);
      // 2030-01-02 08:00 to 13:00 are now past retention; 2030-01-03 10:00 to 13:00 are new.
      expect(a!.created + b!.created).toBe(4);
      expect([a!.created, b!.created]).toContain(0);
      expect(a!.dropped + b!.dropped).toBe(6);
      expect([a!.dropped, b!.dropped]).toContain(0);
    } finally {
      await holder.end();
    }
    const names = (await partitions()).filter((n) => n !== 'ThermalSample_default');
    expect(names).toEqual([0, 1, 2, 3].map((h) => partitionOf(now + h * HOUR)));
    // And inserts keep working across the new set.
    expect(await insert(now)).toBe(partitionOf(now));
  });
});

/** Waits until `n` sessions wait for a lock on "ThermalSample" (polls pg_locks; the runs start asynchronously). */
async function waitForWaiters(sql: pg.Client, n: number): Promise<void> {
  for (;;) {
    const { rows } = await sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = '"ThermalSample"'::regclass`,
    );
    if (rows[0]!.n >= n) {
      return;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}
