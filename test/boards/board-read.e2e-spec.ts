// A board's page as the api reads it, against real PostgreSQL: the board (BoardsRepository.findById, one statement on
// the pool) with the same values, of the same types, as Prisma's `include` of the reading and the schedule gives for
// the same rows; a board without a reading; an id that names no board, or is no uuid at all; the raw thermal history
// (a time window, newest first, by sensor, limited); the 404 of the timeline, the thermal history and a deletion.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import pg from 'pg';
import { BoardsRepository } from '../../src/boards/boards.repository.js';
import { PollingScheduler } from '../../src/polling/polling.scheduler.js';
import { PrismaService } from '../../src/prisma/prisma.service.js';
import { apiClient } from './api.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { requireRedis } from '../support/redis.js';

const redis = requireRedis();

redis.describe("reading a board's page", () => {
  let app: TestApp;
  let sql: pg.Client;
  let read: string;
  let unread: string;

  beforeAll(async () => {
    app = await startTestApp({ redisUrl: redis.url });
    app.app.get(PollingScheduler).enabled = false; // the reading below is written by hand
    sql = new pg.Client({ connectionString: app.db.url });
    await sql.connect();
    const res = await apiClient(app.baseUrl)('POST', '/api/v1/boards/bulk', {
      boards: [
        { name: 'read', base_url: 'http://127.0.0.1:9', labels: { rack: 'r1' }, rack: 'r1', slot: 3 },
        { name: 'unread', base_url: 'http://127.0.0.1:10' },
      ],
    });
    expect(res.status).toBe(201);
    [read, unread] = res.body.items.map((b: { id: string }) => b.id);
    await sql.query(`DELETE FROM "BoardReading" WHERE "boardId" = ANY($1::uuid[])`, [[read, unread]]);
    await sql.query(
      `INSERT INTO "BoardReading" ("boardId", "health", "healthAt", "thermal", "thermalAt", "uptimeSeconds")
       VALUES ($1, $2, now() - interval '3 s', $3, now() - interval '2 s', 1234.5)`,
      [
        read,
        JSON.stringify({ uptime_seconds: 1234.5, hostname: 'tp' }),
        JSON.stringify([{ sensor: 'soc', temperature_c: 41.5 }]),
      ],
    );
    await sql.query(
      `UPDATE "Board" SET "dialect" = 'agent', "capabilities" = '["getHealth"]', "factsAt" = now(),
         "lastSuccessAt" = now() - interval '1 s', "consecutiveFailures" = 2 WHERE "id" = $1`,
      [read],
    );
  }, 60_000);

  afterAll(async () => {
    await sql?.end();
    await app?.close();
  });

  /** What Prisma reads for the same board, in the shape findById gives. */
  const throughPrisma = async (id: string) => {
    const found = await app.app.get(PrismaService).board.findUnique({
      where: { id },
      include: { reading: true, schedule: { select: { nextPollAt: true } } },
    });
    if (!found) {
      return null;
    }
    const { schedule, ...board } = found;
    return { ...board, nextPollAt: schedule?.nextPollAt ?? null };
  };

  it('gives a board with its reading and next poll as Prisma does, Dates as Dates', async () => {
    const board = await app.app.get(BoardsRepository).findById(read);
    expect(board).toEqual(await throughPrisma(read));
    expect(board?.reading?.health).toEqual({ uptime_seconds: 1234.5, hostname: 'tp' });
    expect(board?.reading?.uptimeSeconds).toBe(1234.5);
    expect(board?.reading?.healthAt).toBeInstanceOf(Date);
    expect(board?.lastSuccessAt).toBeInstanceOf(Date);
    expect(board?.nextPollAt).toBeInstanceOf(Date);
    expect(board?.slot).toBe(3);
  });

  it('gives a board that has no reading yet with a null reading', async () => {
    const board = await app.app.get(BoardsRepository).findById(unread);
    expect(board?.reading).toBeNull();
    expect(board).toEqual(await throughPrisma(unread));
  });

  it('finds nothing for an id that names no board, or is no uuid', async () => {
    const repository = app.app.get(BoardsRepository);
    expect(await repository.findById(randomUUID())).toBeNull();
    expect(await repository.findById('not-a-uuid')).toBeNull();
    expect(await repository.exists(read)).toBe(true);
    expect(await repository.exists(randomUUID())).toBe(false);
    expect(await repository.exists('not-a-uuid')).toBe(false);
  });

  it("gives a board's raw thermal samples of a window, newest first, by sensor and up to the limit", async () => {
    const now = Date.now();
    const samples: Array<[string, number, number]> = [
      ['soc', now - 2 * 3600_000, 70], // before the default window of an hour
      ['soc', now - 50 * 60_000, 41],
      ['board', now - 40 * 60_000, 30.25],
      ['soc', now - 30 * 60_000, 42.5],
      ['board', now - 20 * 60_000, 31],
    ];
    for (const [sensor, at, t] of samples) {
      await sql.query(
        `INSERT INTO "ThermalSample" ("boardId", "sensor", "at", "temperatureC") VALUES ($1, $2, $3, $4)`,
        [unread, sensor, new Date(at), t],
      );
    }
    const item = (sensor: string, at: number, t: number) => ({
      sensor,
      at: new Date(at).toISOString(),
      mean: t,
      min: t,
      max: t,
    });
    const get = async (query: string) =>
      (await apiClient(app.baseUrl)('GET', `/api/v1/boards/${unread}/thermal${query}`)).body.items;
    expect(await get('')).toEqual([
      item('board', now - 20 * 60_000, 31),
      item('soc', now - 30 * 60_000, 42.5),
      item('board', now - 40 * 60_000, 30.25),
      item('soc', now - 50 * 60_000, 41),
    ]);
    expect(await get('?sensor=soc&limit=1')).toEqual([item('soc', now - 30 * 60_000, 42.5)]);
    const from = new Date(now - 3 * 3600_000).toISOString();
    const to = new Date(now - 45 * 60_000).toISOString();
    expect(await get(`?sensor=soc&from=${from}&to=${to}`)).toEqual([
      item('soc', now - 50 * 60_000, 41),
      item('soc', now - 2 * 3600_000, 70),
    ]);
  });

  it('answers 404 with a problem for the timeline, thermal history and deletion of a board that does not exist', async () => {
    for (const path of ['timeline', 'thermal']) {
      const res = await apiClient(app.baseUrl)('GET', `/api/v1/boards/${randomUUID()}/${path}`);
      expect(res.status).toBe(404);
      expect(res.body.detail).toMatch(/board/);
    }
    const deleted = await apiClient(app.baseUrl)('DELETE', `/api/v1/boards/${randomUUID()}`);
    expect(deleted.status).toBe(404);
    expect(deleted.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(deleted.body.detail).toMatch(/board/);
  });
});
