// Thermal history benchmark: one hour of raw samples for BENCH_BOARDS boards at one sample per sensor every 15 s
// (10,000 boards, one sensor: 2.4 million rows), stored in the hourly-partitioned "ThermalSample" (migration
// 20261125030000_thermal_sample_partitions) and, as the baseline in the same run, in a table laid out as the raw
// samples were before it (one heap, B-tree primary key on id, B-trees on (boardId, sensor, at) and on at). Reports:
// table and index size of that hour; one compaction over the hour and one steady-state compaction run (the job's
// window: the last three 5-minute buckets), through PollingRepository.compactThermal against the same SQL on the
// baseline; and retention: the upkeep dropping the hour's partition (PollingRepository.maintainThermalPartitions)
// against the DELETE of the same rows (and the VACUUM that DELETE leaves to do). Writes a Markdown table to stdout.
//
//   BENCH_BOARDS=10000 npm run bench -- thermal
//
// Rows are generated inside PostgreSQL (generate_series into an unlogged staging table, then one INSERT … SELECT
// into each layout), so the client's encoding is not measured. CPU is the PostgreSQL backend's own (utime + stime
// from /proc): parallel query and parallel vacuum are off in the bench database, so a statement's work stays in
// the one backend that ran it. The simulated board reports one sensor; BENCH_SENSORS=5 gives the ~290 million rows
// a day of issue 19.
import { expect, it } from '@jest/globals';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '../src/generated/prisma/client.js';
import { PollingRepository } from '../src/polling/polling.repository.js';
import { THERMAL_BUCKET_SECONDS, THERMAL_PARTITIONS_AHEAD_HOURS } from '../src/polling/polling.settings.js';
import type { PrismaService } from '../src/prisma/prisma.service.js';
import { createTestDatabase } from '../test/support/database.js';
import { testEnv } from '../test/support/env.js';
import { cpuSecondsOf } from '../test/support/fleet-process.js';

const BOARDS = Number(process.env.BENCH_BOARDS ?? 10000);
const SENSORS = Number(process.env.BENCH_SENSORS ?? 1);
const INTERVAL_S = 15;
const HOUR = 3600_000;
const MIB = 1024 * 1024;

interface Cost {
  wallS: number;
  cpuS: number;
}

it(`stores, compacts and expires an hour of thermal samples of ${BOARDS} boards`, async () => {
  if (!testEnv.databaseUrl) {
    throw new Error('the thermal bench needs PostgreSQL: run it with `npm run bench -- thermal`');
  }
  const db = await createTestDatabase();
  const dbName = new URL(db.url).pathname.slice(1);
  const setup = new pg.Client({ connectionString: db.url });
  await setup.connect();
  await setup.query(`ALTER DATABASE "${dbName}" SET max_parallel_workers_per_gather = 0`);
  await setup.query(`ALTER DATABASE "${dbName}" SET max_parallel_maintenance_workers = 0`);
  await setup.end();

  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  // One connection, never closed when idle, so the repository's statements run in one backend whose CPU can be read.
  const prisma = new PrismaClient({
    adapter: new PrismaPg({ connectionString: db.url, max: 1, idleTimeoutMillis: 0 }),
  });
  const repository = new PollingRepository(prisma as unknown as PrismaService);
  try {
    const sqlPid = (await sql.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const now = Date.now();
    const hourEnd = Math.floor(now / HOUR) * HOUR; // the generated hour is the last complete one
    const hourStart = hourEnd - HOUR;
    const partition = `ThermalSample_p${new Date(hourStart).toISOString().slice(0, 13).replace(/\D/g, '')}`;
    // The partitions a day of retention keeps (THERMAL_RAW_RETENTION_HOURS=24): the hours before the generated one are
    // empty here, but the compaction's plan has to prune them.
    await repository.maintainThermalPartitions(
      new Date(hourStart - 23 * HOUR),
      23 + THERMAL_PARTITIONS_AHEAD_HOURS + 1,
      new Date(hourStart - 24 * HOUR),
    );
    const prismaPid = (
      await sql.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
      )
    ).rows.map((r) => r.pid);
    expect(prismaPid).toHaveLength(1);
    const timed = async (pid: number, fn: () => Promise<unknown>): Promise<Cost> => {
      const cpu0 = cpuSecondsOf(pid);
      const t0 = performance.now();
      await fn();
      return { wallS: (performance.now() - t0) / 1000, cpuS: cpuSecondsOf(pid) - cpu0 };
    };
    const viaRepository = (fn: () => Promise<unknown>) => timed(prismaPid[0]!, fn);
    const viaSql = (text: string, values: unknown[] = []) => timed(sqlPid, () => sql.query(text, values));

    // The baseline: the raw samples' table as migration 20261122133125_init made it, and a rollup table of its own.
    await sql.query(`
      CREATE TABLE "FlatSample" ("id" BIGSERIAL NOT NULL, "boardId" UUID NOT NULL, "sensor" TEXT NOT NULL,
        "at" TIMESTAMPTZ(3) NOT NULL, "temperatureC" DOUBLE PRECISION NOT NULL, CONSTRAINT "FlatSample_pkey" PRIMARY KEY ("id"));
      CREATE INDEX "FlatSample_boardId_sensor_at_idx" ON "FlatSample"("boardId", "sensor", "at");
      CREATE INDEX "FlatSample_at_idx" ON "FlatSample"("at");
      CREATE TABLE "FlatRollup" (LIKE "ThermalRollup" INCLUDING ALL);`);

    // An hour of samples in arrival order: every board once per 15 s, the boards spread over the interval.
    const ticks = HOUR / 1000 / INTERVAL_S;
    await sql.query(
      'CREATE UNLOGGED TABLE staging ("boardId" uuid, "sensor" text, "at" timestamptz, "temperatureC" float8)',
    );
    await sql.query(
      `INSERT INTO staging
       SELECT b.id AS "boardId", 'sensor' || s AS "sensor",
         $1::timestamptz + make_interval(secs => t * $2 + b.n * $2::float8 / $3) AS "at",
         40 + 30 * random() AS "temperatureC"
       FROM generate_series(0, $4 - 1) AS t,
         (SELECT n, gen_random_uuid() AS id FROM generate_series(0, $3 - 1) AS n) AS b,
         generate_series(1, $5) AS s
       ORDER BY 3`,
      [new Date(hourStart), INTERVAL_S, BOARDS, ticks, SENSORS],
    );
    const rows = BOARDS * SENSORS * ticks;
    const columns = '"boardId", "sensor", "at", "temperatureC"';
    const insertFlat = await viaSql(`INSERT INTO "FlatSample" (${columns}) SELECT ${columns} FROM staging`);
    const insertParted = await viaSql(`INSERT INTO "ThermalSample" (${columns}) SELECT ${columns} FROM staging`);
    await sql.query('DROP TABLE staging');
    // The BRIN index summarises each block range once the next one fills (autosummarize, migration
    // 20261125040000_thermal_at_brin_autosummarize), by autovacuum within a minute or so: in production the hour's
    // ranges are summarised long before the compaction reads them. This hour was written in one statement a moment
    // ago, so summarise it now as autovacuum would have.
    await sql.query(`SELECT brin_summarize_new_values('"${partition}_at_idx"'::regclass)`);
    await sql.query('ANALYZE "FlatSample"; ANALYZE "ThermalSample"');
    const inPartition = await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${partition}"`);
    expect(inPartition.rows[0]!.n).toBe(rows);

    const size = async (table: string) =>
      (
        await sql.query<{ heap: string; indexes: string }>(
          `SELECT pg_table_size($1::regclass) AS heap, pg_indexes_size($1::regclass) AS indexes`,
          [`"${table}"`],
        )
      ).rows.map((r) => ({ heap: Number(r.heap), indexes: Number(r.indexes) }))[0]!;
    const flatSize = await size('FlatSample');
    const partSize = await size(partition);

    // Compaction: the repository's statement on the partitioned table; the same SQL on the baseline.
    const flatCompaction = (since: number) =>
      viaSql(
        `INSERT INTO "FlatRollup" ("boardId", "sensor", "bucket", "mean", "min", "max", "samples")
         SELECT "boardId", "sensor", to_timestamp(floor(extract(epoch FROM "at") / $2) * $2) AS bucket,
           avg("temperatureC"), min("temperatureC"), max("temperatureC"), count(*)::int
         FROM "FlatSample" WHERE "at" >= $1 GROUP BY 1, 2, 3
         ON CONFLICT ("boardId", "sensor", "bucket") DO UPDATE SET
           "mean" = EXCLUDED."mean", "min" = EXCLUDED."min", "max" = EXCLUDED."max", "samples" = EXCLUDED."samples"`,
        [new Date(since), THERMAL_BUCKET_SECONDS],
      );
    const partCompaction = (since: number) =>
      viaRepository(() => repository.compactThermal(new Date(since), new Date(0), THERMAL_BUCKET_SECONDS));
    const flatHour = await flatCompaction(hourStart);
    const partHour = await partCompaction(hourStart);
    // The job's run recomputes the last three buckets (src/polling/polling.worker.ts), every 5 minutes.
    const window = hourEnd - 3 * THERMAL_BUCKET_SECONDS * 1000;
    const flatRun = await flatCompaction(window);
    const partRun = await partCompaction(window);
    const means = await sql.query<{ n: number; same: number }>(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE f."samples" = r."samples" AND abs(f."mean" - r."mean") < 1e-9
         AND f."min" = r."min" AND f."max" = r."max")::int AS same
       FROM "ThermalRollup" r FULL JOIN "FlatRollup" f USING ("boardId", "sensor", "bucket")`,
    );
    const buckets = BOARDS * SENSORS * (HOUR / 1000 / THERMAL_BUCKET_SECONDS);
    expect(means.rows[0]).toEqual({ n: buckets, same: buckets });
    const plan = await sql.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN SELECT "boardId", count(*) FROM "ThermalSample" WHERE "at" >= '${new Date(window).toISOString()}' GROUP BY 1`,
    );
    const scanned = [
      ...new Set(
        plan.rows
          .map((r) => /Scan on "?(ThermalSample_[^"\s]+)/.exec(r['QUERY PLAN'])?.[1])
          .filter((n): n is string => n !== undefined && !n.endsWith('_idx')),
      ),
    ];
    const partitions = (
      await sql.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = '"ThermalSample"'::regclass`,
      )
    ).rows[0]!.n;

    // Retention of that hour: the upkeep drops its partition; the baseline deletes its rows, then vacuums.
    let dropped = 0;
    const drop = await viaRepository(async () => {
      dropped = (
        await repository.maintainThermalPartitions(new Date(now), THERMAL_PARTITIONS_AHEAD_HOURS, new Date(hourEnd))
      ).dropped;
    });
    expect(dropped).toBeGreaterThanOrEqual(1);
    expect(await sql.query(`SELECT to_regclass('"${partition}"') AS r`)).toMatchObject({ rows: [{ r: null }] });
    const del = await viaSql(`DELETE FROM "FlatSample" WHERE "at" < $1`, [new Date(hourEnd)]);
    const vacuum = await viaSql('VACUUM "FlatSample"');

    const f = (x: number, d = 2) => x.toFixed(d);
    const ratio = (a: number, b: number) => (b > 0 ? `${f(a / b)} ×` : '—');
    const cost = (c: Cost) => `${f(c.wallS)} s wall, ${f(c.cpuS)} s CPU`;
    const mib = (b: number) => `${f(b / MIB, 1)} MiB`;
    const lines = [
      `thermal: ${BOARDS} boards × ${SENSORS} sensor(s) at ${INTERVAL_S} s = ${rows.toLocaleString('en')} rows in the hour ${new Date(hourStart).toISOString()}`,
      '',
      '| per hour of raw samples | partitioned (hourly, BRIN on at) | baseline (one table, B-trees) | ratio |',
      '|---|---|---|---|',
      `| table (heap) | ${mib(partSize.heap)} | ${mib(flatSize.heap)} | ${ratio(partSize.heap, flatSize.heap)} |`,
      `| indexes | ${mib(partSize.indexes)} | ${mib(flatSize.indexes)} | ${ratio(partSize.indexes, flatSize.indexes)} |`,
      `| table + indexes | ${mib(partSize.heap + partSize.indexes)} | ${mib(flatSize.heap + flatSize.indexes)} | ${ratio(partSize.heap + partSize.indexes, flatSize.heap + flatSize.indexes)} |`,
      `| bytes per row | ${f((partSize.heap + partSize.indexes) / rows, 1)} | ${f((flatSize.heap + flatSize.indexes) / rows, 1)} | |`,
      `| insert of the hour (one INSERT … SELECT) | ${cost(insertParted)} | ${cost(insertFlat)} | CPU ${ratio(insertParted.cpuS, insertFlat.cpuS)} |`,
      `| compaction of the whole hour (${buckets.toLocaleString('en')} means) | ${cost(partHour)} | ${cost(flatHour)} | CPU ${ratio(partHour.cpuS, flatHour.cpuS)} |`,
      `| one job run (last 3 buckets) | ${cost(partRun)} | ${cost(flatRun)} | CPU ${ratio(partRun.cpuS, flatRun.cpuS)} |`,
      `| compaction per hour (12 job runs) | ${f(12 * partRun.cpuS)} s CPU | ${f(12 * flatRun.cpuS)} s CPU | |`,
      `| retention of the hour | drop partition: ${cost(drop)} | DELETE: ${cost(del)}; then VACUUM: ${cost(vacuum)} | wall ${ratio(drop.wallS, del.wallS)} (vs DELETE + VACUUM ${ratio(drop.wallS, del.wallS + vacuum.wallS)}) |`,
      '',
      `One job run's scan (EXPLAIN): ${scanned.join(', ')} of ${partitions} partitions.`,
    ];
    console.log(`\nBENCH RESULT\n${lines.join('\n')}\n`);
  } finally {
    await prisma.$disconnect();
    await sql.end();
    await db.drop();
  }
}, 1_800_000);
