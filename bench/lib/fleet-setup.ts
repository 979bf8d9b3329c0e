// Setup shared by the fleet benches: a warmed rack, its boards registered through the API, the wait for the
// registration's one-off backup burst, and the run that stops the fleet processes (and the rest) whatever happens.
import type pg from 'pg';
import { Agent, request } from 'undici';
import type { apiClient } from '../../test/boards/api.js';
import type { RackProcess } from '../../test/boards/rack.js';
import type { FleetProcess } from '../../test/support/fleet-process.js';

/**
 * Runs a bench's body. If it fails, the fleet processes' output is printed (what they logged is the clue); either
 * way they are stopped, then each of `teardown` runs in order (database, rack, servers of the bench's own).
 * `fleet` is the array the body fills as it starts processes.
 */
export async function runWithFleet(
  fleet: FleetProcess[],
  body: () => Promise<void>,
  teardown: Array<() => Promise<unknown>>,
): Promise<void> {
  try {
    await body();
  } catch (err) {
    for (const f of fleet) {
      console.error(`fleet ${f.role} output:\n${f.output()}`);
    }
    throw err;
  } finally {
    for (const f of fleet) {
      await f.stop();
    }
    for (const step of teardown) {
      await step();
    }
  }
}

/**
 * The rack starts each simulated board on first contact (state files, password hash): seconds of simulator CPU per
 * hundred boards. Touching every board first keeps the simulator's boot out of the measurement. Returns seconds.
 */
export async function warmRack(rack: RackProcess, boards: number): Promise<number> {
  // A rack started with --tls: its self-signed certificate taken as it is.
  const warm = new Agent({ connections: 32, connect: { rejectUnauthorized: false } });
  const t0 = performance.now();
  let nextBoard = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (nextBoard < boards) {
        const i = ++nextBoard;
        const r = await request(`${rack.boardUrl(i)}/api/bmc/about`, { dispatcher: warm });
        await r.body.text();
      }
    }),
  );
  await warm.close();
  return (performance.now() - t0) / 1000;
}

/** Registers boards 1..`boards` of the rack as `b<i>`, 1,000 per bulk request, with `labelsOf(i)`. */
export async function registerRackBoards(
  api: ReturnType<typeof apiClient>,
  rack: RackProcess,
  boards: number,
  labelsOf: (i: number) => Record<string, string> = () => ({}),
): Promise<void> {
  for (let i = 0; i < boards; i += 1000) {
    const res = await api('POST', '/api/v1/boards/bulk', {
      boards: Array.from({ length: Math.min(1000, boards - i) }, (_, k) => ({
        name: `b${i + k + 1}`,
        base_url: rack.boardUrl(i + k + 1),
        labels: labelsOf(i + k + 1),
      })),
    });
    if (res.status !== 201) {
      throw new Error(`bulk registration answered ${res.status}: ${JSON.stringify(res.body).slice(0, 500)}`);
    }
  }
}

/**
 * Registration queues every new board's first configuration backup (an export each, ~10 minutes for 10,000
 * boards); after that they are spread over the day. Waits until every board has one (read from PostgreSQL, so the
 * fleet processes are not loaded by the wait). Returns seconds.
 */
export async function waitFirstBackups(sql: pg.Client, boards: number): Promise<number> {
  const { seconds } = await waitForRows(
    sql,
    `SELECT count(*)::int AS n FROM "ConfigBoardState" WHERE "lastBackupStatus" IS NOT NULL`,
    boards,
  );
  return seconds;
}

/**
 * Every board's first slow-lane read (update check and slots; hourly after that) is written. Registration spreads
 * them over its first minutes (FIRST_FIRMWARE_CHECK_SPREAD_SECONDS): polling is measured once they are over, waiting
 * at most `maxSeconds`. Needs the update check to answer (bench/lib/github-mirror.ts). Returns the seconds waited and
 * how many boards had their read.
 */
export function waitFirstSlowReads(
  sql: pg.Client,
  boards: number,
  maxSeconds: number,
): Promise<{ seconds: number; n: number }> {
  // Bounded: a board whose first read never lands (unreachable, say) must not keep the bench from its window.
  return waitForRows(
    sql,
    `SELECT count(*)::int AS n FROM "BoardReading" WHERE "firmwareAt" IS NOT NULL`,
    boards,
    maxSeconds,
  );
}

/**
 * Reads `count` (a query returning `n`) every 5 s until it reaches `atLeast`, or `maxSeconds` passed; returns the
 * seconds waited and the last count.
 */
async function waitForRows(
  sql: pg.Client,
  count: string,
  atLeast: number,
  maxSeconds = Infinity,
): Promise<{ seconds: number; n: number }> {
  const t0 = performance.now();
  for (;;) {
    const { rows } = await sql.query<{ n: number }>(count);
    const seconds = (performance.now() - t0) / 1000;
    if (rows[0]!.n >= atLeast || seconds >= maxSeconds) {
      return { seconds, n: rows[0]!.n };
    }
    await new Promise((r) => setTimeout(r, 5000));
  }
}

/** The sum of a Prometheus counter's samples in a /metrics page (all label sets). */
export function counter(metricsText: string, name: string): number {
  return metricsText
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

/**
 * The boards whose stored update check finds a newer stable release, and once their firmware_update_available alerts
 * are open (they open at a full evaluation pass after the check), for at most `maxSeconds`: how many are open.
 */
export async function waitUpdateAlerts(
  sql: pg.Client,
  maxSeconds: number,
): Promise<{ outdated: number; open: number }> {
  const { rows } = await sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM "BoardReading" WHERE ("firmwareCheck" #>> '{stable,update_available}')::boolean`,
  );
  const outdated = rows[0]!.n;
  const { n } = await waitForRows(
    sql,
    `SELECT count(*)::int AS n FROM "Alert" WHERE "openKey" IS NOT NULL AND "kind" = 'firmware_update'`,
    outdated,
    maxSeconds,
  );
  return { outdated, open: n };
}
