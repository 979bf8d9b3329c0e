// The scheduler's claim against real PostgreSQL: a claim moves each due board's next poll on; firmware reads are
// claimed only while the slow lane keeps up, and otherwise stay due for a later tick instead of being skipped. A
// claim leases the board: not claimed again while the lease runs, and a result is written only under its lease and
// only if it is newer than the stored one.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type pg from 'pg';
import { PollingRepository, type PollWrite } from '../../src/polling/polling.repository.js';
import { apiClient } from '../boards/api.js';
import type { TestApp } from '../support/app.js';
import { requireRedis } from '../support/redis.js';
import { CLAIM, pollWrite, startOneBoardApp, type OneBoardApp } from './one-board.js';

const redis = requireRedis();

redis.describe('claiming due boards', () => {
  let fixture: OneBoardApp;
  let app: TestApp;
  let sql: pg.Client;
  let id: string;

  beforeAll(async () => {
    fixture = await startOneBoardApp(redis.url, 'due');
    ({ app, sql, id } = fixture);
  }, 60_000);

  afterAll(async () => {
    await fixture?.close();
  });

  const makeDue = () =>
    sql.query(
      `UPDATE "BoardSchedule" SET "nextPollAt" = now() - interval '1 s', "nextSlowPollAt" = now() - interval '1 s'
       WHERE "boardId" = $1`,
      [id],
    );
  const slowAt = async () =>
    (await sql.query<{ at: Date }>(`SELECT "nextSlowPollAt" AS at FROM "BoardSchedule" WHERE "boardId" = $1`, [id]))
      .rows[0]!.at;

  it('leaves the firmware reads due while the slow lane is behind, and claims them once it catches up', async () => {
    const repository = app.app.get(PollingRepository);
    await makeDue();
    const behind = await repository.claimDue({ ...CLAIM, includeSlow: false });
    expect(behind).toEqual([
      { id, slow: false, medium: expect.any(Boolean), lease: 1, lagging: false, handedOff: false },
    ]);
    expect((await slowAt()).getTime()).toBeLessThanOrEqual(Date.now()); // still due

    await sql.query(
      `UPDATE "BoardSchedule" SET "nextPollAt" = now() - interval '1 s', "pollLeaseUntil" = NULL WHERE "boardId" = $1`,
      [id],
    );
    const caughtUp = await repository.claimDue(CLAIM);
    expect(caughtUp).toEqual([
      { id, slow: true, medium: expect.any(Boolean), lease: 2, lagging: false, handedOff: false },
    ]);
    expect((await slowAt()).getTime()).toBeGreaterThan(Date.now() + 3000 * 1000); // an interval (±10 %) on
    // Claimed: not due again this tick.
    expect(await repository.claimDue(CLAIM)).toEqual([]);
  });

  const write = (lease: number, polledAt: Date, state = 'online') => pollWrite(id, lease, polledAt, state);
  const row = async () =>
    (
      await sql.query<{ success: Date | null; lease: number; until: Date | null; state: string; events: number }>(
        `SELECT "lastSuccessAt" AS success, "pollLease" AS lease, "pollLeaseUntil" AS until, "state"::text AS state,
           (SELECT count(*)::int FROM "BoardEvent" e WHERE e."boardId" = b."id" AND e."kind" = 'state') AS events
         FROM "Board" b JOIN "BoardSchedule" s ON s."boardId" = b."id" WHERE "id" = $1`,
        [id],
      )
    ).rows[0]!;

  /** Makes the board due with its lease free, claims it, and writes one poll under that claim that read `reading`. */
  const pollUnderNewClaim = async (polledAt: Date, reading: NonNullable<PollWrite['reading']>) => {
    await sql.query(
      `UPDATE "BoardSchedule" SET "nextPollAt" = now() - interval '1 s', "pollLeaseUntil" = NULL WHERE "boardId" = $1`,
      [id],
    );
    const repository = app.app.get(PollingRepository);
    const [claim] = (await repository.claimDue(CLAIM))!;
    await repository.applyPolls([{ ...write(claim!.lease, polledAt), reading, events: [] }]);
  };

  it('does not claim a leased board, and writes only under the current lease and only forward in time', async () => {
    const repository = app.app.get(PollingRepository);
    await sql.query(
      `UPDATE "BoardSchedule" SET "pollLeaseUntil" = NULL, "nextPollAt" = now() - interval '1 s' WHERE "boardId" = $1`,
      [id],
    );
    const [first] = (await repository.claimDue(CLAIM))!;
    expect(first).toMatchObject({ id });
    // Due again (a poll slower than its interval), but still leased: not claimed a second time.
    await sql.query(`UPDATE "BoardSchedule" SET "nextPollAt" = now() - interval '1 s' WHERE "boardId" = $1`, [id]);
    expect(await repository.claimDue(CLAIM)).toEqual([]);
    // The lease ran out (a worker died): claimed again, with a new lease.
    await sql.query(`UPDATE "BoardSchedule" SET "pollLeaseUntil" = now() - interval '1 ms' WHERE "boardId" = $1`, [id]);
    const [second] = (await repository.claimDue(CLAIM))!;
    expect(second!.lease).toBe(first!.lease + 1);
    const before = await row();

    // The first poll comes back late: its lease is gone, nothing it found is written (state, event, sample).
    const t0 = new Date();
    await repository.applyPolls([write(first!.lease, t0, 'degraded')]);
    expect(await row()).toEqual(before);

    // The current lease's result is written, and gives the lease back.
    const t1 = new Date(t0.getTime() + 1000);
    await repository.applyPolls([write(second!.lease, t1)]);
    expect(await row()).toMatchObject({ success: t1, until: null, state: 'online', events: before.events + 1 });

    // An older result under the same lease (two writes of one poll group out of order) never moves time back.
    await repository.applyPolls([write(second!.lease, t0, 'degraded')]);
    expect(await row()).toMatchObject({ success: t1, state: 'online', events: before.events + 1 });
  });

  it('moves the firmware check and slots forward only, whether the slow lane or a poll writes them', async () => {
    const repository = app.app.get(PollingRepository);
    const stored = async () =>
      (
        await sql.query<{ fw: unknown; slots: unknown }>(
          `SELECT "firmwareCheck" AS fw, "slots" FROM "BoardReading" WHERE "boardId" = $1`,
          [id],
        )
      ).rows[0]!;
    const slow = (readAt: Date, tag: string) =>
      repository.applySlowReads([
        { boardId: id, readAt, firmwareCheck: { tag }, slots: { tag }, events: [], retryAt: null },
      ]);
    const poll = (polledAt: Date, tag: string) =>
      pollUnderNewClaim(polledAt, { firmwareCheck: { tag }, slots: { tag } });
    const base = Date.now() + 60_000; // after every poll the earlier tests wrote
    await slow(new Date(base + 10_000), 'slow, newest');
    await slow(new Date(base), 'slow, older');
    expect(await stored()).toEqual({ fw: { tag: 'slow, newest' }, slots: { tag: 'slow, newest' } });
    // A poll newer than the board's last poll, but with reads older than the slow lane's: the readings stay.
    await poll(new Date(base + 5000), 'poll, older');
    expect(await stored()).toEqual({ fw: { tag: 'slow, newest' }, slots: { tag: 'slow, newest' } });
    await poll(new Date(base + 20_000), 'poll, newest');
    expect(await stored()).toEqual({ fw: { tag: 'poll, newest' }, slots: { tag: 'poll, newest' } });
    await slow(new Date(base + 15_000), 'slow, older again');
    expect(await stored()).toEqual({ fw: { tag: 'poll, newest' }, slots: { tag: 'poll, newest' } });
  });

  it('keeps the readings a poll did not read, with their times, and stores those it read', async () => {
    const stored = async () =>
      (
        await sql.query<{ health: unknown; healthAt: Date; cooling: unknown; coolingAt: Date; uptime: number }>(
          `SELECT "health", "healthAt", "cooling", "coolingAt", "uptimeSeconds" AS uptime
           FROM "BoardReading" WHERE "boardId" = $1`,
          [id],
        )
      ).rows[0]!;
    const base = Date.now() + 90_000; // after every poll the earlier tests wrote
    const cooling = [{ device: 'system fan', speed: 2, max_speed: 3, zone: null, overridden: false }];
    // A poll with /cooling (every few polls), then one without it: /cooling and its time stay as they were.
    await pollUnderNewClaim(new Date(base), { health: { tag: 'first' }, cooling, uptimeSeconds: 100 });
    await pollUnderNewClaim(new Date(base + 1000), { health: { tag: 'second' }, uptimeSeconds: 101 });
    expect(await stored()).toEqual({
      health: { tag: 'second' },
      healthAt: new Date(base + 1000),
      cooling,
      coolingAt: new Date(base),
      uptime: 101,
    });
  });

  // Last: these move the board to a new credential generation, which the writes above (generation 1) would not match.
  it('gives back the lease of a result it refuses, so the board is not left unpolled until the lease runs out', async () => {
    const repository = app.app.get(PollingRepository);
    await sql.query(
      `UPDATE "BoardSchedule" SET "pollLeaseUntil" = NULL, "nextPollAt" = now() - interval '1 s' WHERE "boardId" = $1`,
      [id],
    );
    const [claim] = (await repository.claimDue(CLAIM))!;
    // Another process gives the board new credentials while this poll runs: its result is not the board's any more.
    await sql.query(`UPDATE "Board" SET "credentialVersion" = "credentialVersion" + 1 WHERE "id" = $1`, [id]);
    const before = await row();
    expect(before.until).not.toBeNull();
    await repository.applyPolls([write(claim!.lease, new Date(Date.now() + 120_000), 'degraded')]);
    expect(await row()).toEqual({ ...before, until: null });
  });

  it('polls a board at its new address at once, even while a poll of the old one holds the lease', async () => {
    const api = apiClient(app.baseUrl);
    const repository = app.app.get(PollingRepository);
    // (The tests above wrote polls dated in the future: forget them, or this poll would be older and not written.)
    await sql.query(
      `UPDATE "BoardSchedule" SET "pollLeaseUntil" = NULL, "nextPollAt" = now() - interval '1 s' WHERE "boardId" = $1`,
      [id],
    );
    await sql.query(`UPDATE "Board" SET "lastPolledAt" = NULL, "stateReason" = NULL WHERE "id" = $1`, [id]);
    const [inFlight] = (await repository.claimDue(CLAIM))!;
    expect(inFlight).toMatchObject({ id });
    const moved = await api('PATCH', `/api/v1/boards/${id}`, { base_url: 'http://127.0.0.1:10' });
    expect(moved.status).toBe(200);
    const polled = await api('POST', `/api/v1/boards/${id}/poll`);
    expect(polled.status).toBe(200);
    // Polled in this request, at the new address (port 10 refuses), not the stored state of before.
    expect(polled.body.last_polled_at).not.toBeNull();
    expect(polled.body.state_reason).toMatch(/127\.0\.0\.1:10\b/);
  });

  it('hands a board whose fast poll ran over its budget to the lagging lane: due now, lease back, nothing else', async () => {
    const repository = app.app.get(PollingRepository);
    await sql.query(
      `UPDATE "BoardSchedule" SET "pollLeaseUntil" = NULL, "pollLagging" = false, "nextPollAt" = now() - interval '1 s'
       WHERE "boardId" = $1`,
      [id],
    );
    const [claim] = (await repository.claimDue(CLAIM))!;
    expect(claim).toMatchObject({ id, lagging: false });
    const lane = async () =>
      (
        await sql.query<{ lagging: boolean; due: boolean; until: Date | null; polled: Date | null }>(
          `SELECT "pollLagging" AS lagging, "nextPollAt" <= now() AS due, "pollLeaseUntil" AS until,
             "lastPolledAt" AS polled FROM "Board" b JOIN "BoardSchedule" s ON s."boardId" = b."id" WHERE "id" = $1`,
          [id],
        )
      ).rows[0]!;
    const before = { ...(await row()), polled: (await lane()).polled };
    // Under a lease that is no longer the board's: nothing changes.
    await repository.handToLaggingLane([{ id, lease: claim!.lease - 1 }]);
    expect(await lane()).toMatchObject({ lagging: false, due: false });
    await repository.handToLaggingLane([{ id, lease: claim!.lease }]);
    expect(await lane()).toEqual({ lagging: true, due: true, until: null, polled: before.polled });
    expect(await row()).toMatchObject({ state: before.state, success: before.success, events: before.events });
    // The next claim puts it in the lagging lane, marked handed off (its second try goes ahead of that lane's boards),
    // even while that lane is behind.
    const [next] = (await repository.claimDue({ ...CLAIM, includeLagging: false }))!;
    expect(next).toMatchObject({ id, lagging: true, handedOff: true });
    // A written poll ends the hand-off: a board that was slow again stays in the lagging lane as one of its own.
    const { rows } = await sql.query<{ cv: number }>(`SELECT "credentialVersion" AS cv FROM "Board" WHERE "id" = $1`, [
      id,
    ]);
    await repository.applyPolls([
      { ...write(next!.lease, new Date(Date.now() + 240_000)), credentialVersion: rows[0]!.cv, lagging: true },
    ]);
    await sql.query(`UPDATE "BoardSchedule" SET "nextPollAt" = now() - interval '1 s' WHERE "boardId" = $1`, [id]);
    expect(await repository.claimDue({ ...CLAIM, includeLagging: false })).toEqual([]);
    const [again] = (await repository.claimDue(CLAIM))!;
    expect(again).toMatchObject({ id, lagging: true, handedOff: false });
  });
});
