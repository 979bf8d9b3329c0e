import { Injectable } from '@nestjs/common';
import { type Board, type BoardReading, type BoardSchedule, Prisma } from '../generated/prisma/client.js';
import type { BoardDialect, BoardState, CredentialKind } from '../generated/prisma/enums.js';
import type { LabelRequirement } from '../common/label-selector.js';
import type { CursorPosition } from '../common/pagination.js';
import { PrismaService } from '../prisma/prisma.service.js';

/** Row types other files may name; the client itself stays here. */
export type { Board } from '../generated/prisma/client.js';
export type { BoardState } from '../generated/prisma/enums.js';

export type BoardRow = Board;

/**
 * The columns a board's API shape shows (`toBoardDto`): lists read only these, not the sealed credentials or the
 * poller's bookkeeping (a page of 100 boards is decoded on every console refresh). Timestamps a list reads as ISO 8601
 * text (`isoSql`). `capabilities` only when the list asks for them (`list(…, withCapabilities)`).
 */
const SHOWN = {
  id: 'value',
  name: 'value',
  baseUrl: 'value',
  labels: 'value',
  rack: 'value',
  slot: 'value',
  notes: 'value',
  credentialKind: 'value',
  credentialKeyId: 'value',
  tlsFingerprint: 'value',
  pollIntervalSeconds: 'value',
  dialect: 'value',
  model: 'value',
  serial: 'value',
  daemonVersion: 'value',
  firmwareVersion: 'value',
  capabilities: 'value',
  state: 'value',
  stateSince: 'timestamp',
  stateReason: 'value',
  consecutiveFailures: 'value',
  lastPolledAt: 'timestamp',
  lastSuccessAt: 'timestamp',
  bannedUntil: 'timestamp',
  decommissionedAt: 'timestamp',
  createdAt: 'timestamp',
  updatedAt: 'timestamp',
} as const satisfies Partial<Record<keyof Board, 'value' | 'timestamp'>>;
type ShownColumn = keyof typeof SHOWN;

/**
 * A board as the API shows it: its columns and, from its schedule, when it is polled next. Timestamps are Dates, or
 * ISO 8601 text (`…T…Z`, as `Date.toISOString` writes it) where a list read them.
 */
export type ShownBoard = {
  [K in ShownColumn]: Board[K] extends Date
    ? Date | string
    : Board[K] extends Date | null
      ? Date | string | null
      : Board[K];
} & { nextPollAt: Date | string | null };

/** A row of a list: its capabilities only when asked for. */
export type ListedBoard = Omit<ShownBoard, 'capabilities'> & { capabilities?: Board['capabilities'] };

/**
 * A timestamptz as the API writes it, formatted by PostgreSQL: a page of 100 boards has 800 timestamps, and parsing
 * each into a Date and formatting it again was a quarter of the api process's CPU for a list (docs/benchmarks.md).
 */
const isoSql = (expression: string): string =>
  `to_char(${expression} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

const shownSql = (withCapabilities: boolean) =>
  Prisma.raw(
    [
      ...Object.entries(SHOWN)
        .filter(([c]) => withCapabilities || c !== 'capabilities')
        .map(([c, kind]) => (kind === 'timestamp' ? `${isoSql(`b."${c}"`)} AS "${c}"` : `b."${c}"`)),
      `${isoSql(`(SELECT s."nextPollAt" FROM "BoardSchedule" s WHERE s."boardId" = b."id")`)} AS "nextPollAt"`,
    ].join(', '),
  );
const SHOWN_SQL = { withCapabilities: shownSql(true), withoutCapabilities: shownSql(false) };

/** An id PostgreSQL cannot read as a uuid (22P02; a restored archive's, say) names no board: no rows, not an error. */
function noBoardForMalformedId(err: unknown): never[] {
  if ((err as { code?: unknown }).code === '22P02') {
    return [];
  }
  throw err;
}

export type BoardWithReading = Board & { reading: BoardReading | null; nextPollAt: Date | null };

/**
 * Every column of a board and of its reading, named here so that a column the schema adds and this list misses is a
 * type error: a board's page reads them in one statement (`findById`), decoded by pg as Prisma would (timestamptz as
 * Date, jsonb parsed, float8 and int4 as numbers).
 */
const BOARD_COLUMNS = Object.keys({
  id: true,
  name: true,
  baseUrl: true,
  labels: true,
  rack: true,
  slot: true,
  notes: true,
  credentialKind: true,
  credentialSealed: true,
  credentialKeyId: true,
  credentialVersion: true,
  tlsFingerprint: true,
  pollIntervalSeconds: true,
  dialect: true,
  model: true,
  serial: true,
  daemonVersion: true,
  firmwareVersion: true,
  capabilities: true,
  factsAt: true,
  state: true,
  stateSince: true,
  stateReason: true,
  consecutiveFailures: true,
  lastPolledAt: true,
  lastSuccessAt: true,
  bannedUntil: true,
  decommissionedAt: true,
  createdAt: true,
  updatedAt: true,
} satisfies Record<keyof Board, true>);
const READING_COLUMNS = Object.keys({
  boardId: true,
  health: true,
  healthAt: true,
  thermal: true,
  thermalAt: true,
  firmwareCheck: true,
  firmwareAt: true,
  slots: true,
  slotsAt: true,
  about: true,
  aboutAt: true,
  cooling: true,
  coolingAt: true,
  sdcard: true,
  sdcardAt: true,
  uptimeSeconds: true,
} satisfies Record<keyof BoardReading, true>) as Array<keyof BoardReading>;
/** The reading's columns come back as `reading.<column>`; a board without a reading row has a null `reading.boardId`. */
const BOARD_WITH_READING_SQL = Prisma.raw(
  [
    ...BOARD_COLUMNS.map((c) => `b."${c}"`),
    `s."nextPollAt"`,
    ...READING_COLUMNS.map((c) => `r."${c}" AS "reading.${c}"`),
  ].join(', '),
);

/** What the poll schedule of a board (BoardSchedule) can be told from outside the poller. */
export type ScheduleChange = Partial<Pick<BoardSchedule, 'nextPollAt' | 'nextSlowPollAt' | 'aboutDue'>>;

export interface NewBoard {
  id: string;
  name: string;
  baseUrl: string;
  labels: Record<string, string>;
  rack: string | null;
  slot: number | null;
  notes: string | null;
  credentialKind: CredentialKind | null;
  credentialSealed: string | null;
  credentialKeyId: string | null;
  pollIntervalSeconds: number | null;
  nextPollAt: Date;
  nextSlowPollAt: Date;
}

export interface BoardPatch {
  name?: string;
  baseUrl?: string;
  labels?: Record<string, string>;
  rack?: string | null;
  slot?: number | null;
  notes?: string | null;
  credentialKind?: CredentialKind | null;
  credentialSealed?: string | null;
  credentialKeyId?: string | null;
  pollIntervalSeconds?: number | null;
  /** null: forget the pinned certificate (a new address, or an admin trusting a re-keyed board). */
  tlsFingerprint?: string | null;
  /**
   * Bump the credential generation (cached sessions of older generations are dropped). It also ends the poll in
   * flight, whose result the new generation refuses anyway: a new lease, free at once, so the new address or
   * credentials are polled now instead of after the old poll's lease runs out (interval + 8 request timeouts).
   */
  bumpCredentialVersion?: boolean;
  /** Written to the board's schedule in the same transaction. */
  schedule?: ScheduleChange;
  state?: BoardState;
  stateReason?: string | null;
  stateSince?: Date;
  consecutiveFailures?: number;
  bannedUntil?: Date | null;
  decommissionedAt?: Date | null;
}

export interface BoardFacts {
  dialect: BoardDialect;
  model: string | null;
  serial: string | null;
  daemonVersion: string | null;
  firmwareVersion: string | null;
  capabilities: unknown;
}

export type BoardSortField = 'name' | 'created_at' | 'state' | 'updated_at';

export interface BoardListFilter {
  states?: BoardState[];
  selector?: LabelRequirement[];
  dialect?: BoardDialect;
  version?: string;
  q?: string;
  includeDecommissioned?: boolean;
  ids?: string[];
}

/** A unique column (name or base URL) already belongs to another board. */
export class BoardConflictError extends Error {
  constructor(readonly fields: string[]) {
    super(`another board already has this ${fields.join(' and ')}`);
  }
}

const SORT_COLUMNS: Record<BoardSortField, Prisma.Sql> = {
  name: Prisma.sql`"name"`,
  created_at: Prisma.sql`"createdAt"`,
  state: Prisma.sql`"state"::text`,
  updated_at: Prisma.sql`"updatedAt"`,
};

/**
 * Label selector → SQL over the JSONB labels column (no board is loaded to be filtered in memory). `key=value` is a
 * containment test, which the GIN index on labels answers (prisma/schema/boards.prisma); labels are flat string maps,
 * so it matches exactly the boards whose `labels->>key` is `value`.
 */
export function selectorSql(requirements: readonly LabelRequirement[]): Prisma.Sql[] {
  return requirements.map((r) => {
    switch (r.op) {
      case 'eq':
        return Prisma.sql`"labels" @> ${JSON.stringify({ [r.key]: r.value })}::jsonb`;
      case 'neq':
        return Prisma.sql`("labels"->>${r.key}) IS DISTINCT FROM ${r.value}`;
      case 'exists':
        return Prisma.sql`jsonb_exists("labels", ${r.key})`;
      case 'absent':
        return Prisma.sql`NOT jsonb_exists("labels", ${r.key})`;
    }
  });
}

function likePattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function whereSql(filter: BoardListFilter): Prisma.Sql {
  const parts: Prisma.Sql[] = [];
  if (!filter.includeDecommissioned && !filter.states?.includes('decommissioned')) {
    parts.push(Prisma.sql`"decommissionedAt" IS NULL`);
  }
  if (filter.states?.length) {
    parts.push(Prisma.sql`"state"::text IN (${Prisma.join(filter.states)})`);
  }
  if (filter.dialect) {
    parts.push(Prisma.sql`"dialect"::text = ${filter.dialect}`);
  }
  if (filter.version) {
    parts.push(Prisma.sql`"daemonVersion" = ${filter.version}`);
  }
  if (filter.ids) {
    parts.push(filter.ids.length ? Prisma.sql`"id"::text IN (${Prisma.join(filter.ids)})` : Prisma.sql`false`);
  }
  if (filter.q) {
    const p = likePattern(filter.q);
    parts.push(
      Prisma.sql`("name" ILIKE ${p} OR "baseUrl" ILIKE ${p} OR "rack" ILIKE ${p} OR "notes" ILIKE ${p} OR "serial" ILIKE ${p})`,
    );
  }
  parts.push(...selectorSql(filter.selector ?? []));
  return parts.length ? Prisma.sql`WHERE ${Prisma.join(parts, ' AND ')}` : Prisma.empty;
}

@Injectable()
export class BoardsRepository {
  constructor(private readonly prisma: PrismaService) {}

  async createMany(boards: NewBoard[]): Promise<Array<Board & { nextPollAt: Date }>> {
    try {
      // One INSERT for the whole list and one for their schedules, in one transaction (all or nothing), not a
      // statement per board.
      return await this.prisma.$transaction(async (tx) => {
        const created = await tx.board.createManyAndReturn({
          data: boards.map(({ nextPollAt: _next, nextSlowPollAt: _slow, ...board }) => board),
        });
        await tx.boardSchedule.createMany({
          data: boards.map((b) => ({ boardId: b.id, nextPollAt: b.nextPollAt, nextSlowPollAt: b.nextSlowPollAt })),
        });
        const nextPollAt = new Map(boards.map((b) => [b.id, b.nextPollAt]));
        return created.map((b) => ({ ...b, nextPollAt: nextPollAt.get(b.id)! }));
      });
    } catch (err) {
      throw await this.conflictOf(err, boards);
    }
  }

  /** Whether a board has this id (an id PostgreSQL cannot read as a uuid names none). */
  async exists(id: string): Promise<boolean> {
    const rows = await this.prisma
      .rows(Prisma.sql`SELECT 1 FROM "Board" WHERE "id" = ${id}::uuid`)
      .catch(noBoardForMalformedId);
    return rows.length > 0;
  }

  /**
   * A board with its reading and next poll, in one statement on the pool: through Prisma's `include` it was three
   * (the board, then its reading, then its schedule), each a round trip and a wake-up of both processes, and the
   * query interpreter's work on each; a board's page is read on every console refresh (docs/benchmarks.md).
   */
  async findById(id: string): Promise<BoardWithReading | null> {
    const [row] = await this.prisma
      .rows<Record<string, unknown>>(
        Prisma.sql`
          SELECT ${BOARD_WITH_READING_SQL}
          FROM "Board" b
          LEFT JOIN "BoardSchedule" s ON s."boardId" = b."id"
          LEFT JOIN "BoardReading" r ON r."boardId" = b."id"
          WHERE b."id" = ${id}::uuid`,
      )
      .catch(noBoardForMalformedId);
    if (!row) {
      return null;
    }
    const board: Record<string, unknown> = { nextPollAt: row.nextPollAt };
    for (const c of BOARD_COLUMNS) {
      board[c] = row[c];
    }
    let reading: Record<string, unknown> | null = null;
    if (row['reading.boardId'] !== null) {
      reading = {};
      for (const c of READING_COLUMNS) {
        reading[c] = row[`reading.${c}`];
      }
    }
    board.reading = reading;
    return board as BoardWithReading;
  }

  /**
   * A change of the schedule too is one transaction, the schedule first, then the board's row: the order a poll's
   * write takes them in (PollingRepository.applyPolls), so the two never wait on each other's locks.
   */
  async update(id: string, patch: BoardPatch): Promise<Board> {
    const { bumpCredentialVersion, labels, schedule, ...rest } = patch;
    const updateBoard = (client: Prisma.TransactionClient) =>
      client.board.update({
        where: { id },
        data: {
          ...rest,
          ...(labels !== undefined ? { labels } : {}),
          ...(bumpCredentialVersion ? { credentialVersion: { increment: 1 } } : {}),
        },
      });
    try {
      if (!schedule && !bumpCredentialVersion) {
        return await updateBoard(this.prisma);
      }
      return await this.prisma.$transaction(async (tx) => {
        await tx.boardSchedule.update({
          where: { boardId: id },
          data: {
            ...schedule,
            ...(bumpCredentialVersion ? { pollLease: { increment: 1 }, pollLeaseUntil: null } : {}),
          },
        });
        return updateBoard(tx);
      });
    } catch (err) {
      throw await this.conflictOf(err, [{ name: patch.name, baseUrl: patch.baseUrl }], id);
    }
  }

  /** Moves a board's next polls (a refresh asked for); the board's own row is not written. */
  async reschedule(id: string, change: ScheduleChange): Promise<void> {
    await this.prisma.boardSchedule.update({ where: { boardId: id }, data: change });
  }

  /**
   * The one writer of what a board's /about says (detection, a poll, a verified install); `tx` when it is part of a
   * caller's transaction.
   */
  async updateFacts(
    id: string,
    facts: Partial<BoardFacts>,
    tx: Prisma.TransactionClient = this.prisma,
  ): Promise<Board> {
    return tx.board.update({
      where: { id },
      data: { ...facts, capabilities: facts.capabilities as Prisma.InputJsonValue | undefined, factsAt: new Date() },
    });
  }

  /**
   * Pins a certificate on these boards (trust on first use; a rack serves several boards on one origin), by id.
   * Returns the boards that now hold this pin: those that had none, and those that already held this one.
   */
  async pinCertificate(ids: readonly string[], fingerprint: string): Promise<string[]> {
    if (!ids.length) {
      return [];
    }
    const rows = await this.prisma.$queryRaw<{ id: string }[]>`
      UPDATE "Board" SET "tlsFingerprint" = ${fingerprint}, "updatedAt" = now()
      WHERE "id"::text IN (${Prisma.join([...ids])})
        AND ("tlsFingerprint" IS NULL OR "tlsFingerprint" = ${fingerprint})
      RETURNING "id"::text AS id`;
    return rows.map((r) => r.id);
  }

  findAllUrls(): Promise<Pick<Board, 'id' | 'baseUrl'>[]> {
    return this.prisma.board.findMany({ select: { id: true, baseUrl: true } });
  }

  /**
   * The schedule first, then the board (and, by cascade, the rest): the lock order of a poll's write, which a
   * board's delete could otherwise deadlock with.
   */
  async delete(id: string): Promise<void> {
    await this.prisma.$transaction([
      this.prisma.boardSchedule.deleteMany({ where: { boardId: id } }),
      this.prisma.board.delete({ where: { id } }),
    ]);
  }

  /** One page, keyset-paginated on (sort column, id). */
  list(
    filter: BoardListFilter,
    sort: { field: BoardSortField; descending: boolean },
    after: CursorPosition | undefined,
    take: number,
    withCapabilities = false,
  ): Promise<ListedBoard[]> {
    const column = SORT_COLUMNS[sort.field];
    const dir = sort.descending ? Prisma.sql`DESC` : Prisma.sql`ASC`;
    const where = whereSql(filter);
    let keyset = Prisma.empty;
    if (after) {
      const cmp = sort.descending ? Prisma.sql`<` : Prisma.sql`>`;
      const value =
        sort.field === 'created_at' || sort.field === 'updated_at'
          ? Prisma.sql`${String(after.sort)}::timestamptz`
          : Prisma.sql`${String(after.sort)}`;
      keyset = Prisma.sql`${where === Prisma.empty ? Prisma.sql`WHERE` : Prisma.sql`AND`} (${column}, "id"::text) ${cmp} (${value}, ${after.id})`;
    }
    // On the pool itself (PrismaService.rows): a page of 100 boards is read on every console refresh, and
    // $queryRaw's decoding of its 2,800 cells cost more CPU than the statement's round trip.
    // Capabilities only when asked for: 50 operation ids a board, half of a page's bytes.
    const columns = withCapabilities ? SHOWN_SQL.withCapabilities : SHOWN_SQL.withoutCapabilities;
    return this.prisma.rows<ListedBoard>(Prisma.sql`
      SELECT ${columns} FROM "Board" b ${where} ${keyset}
      ORDER BY ${column} ${dir}, "id"::text ${dir}
      LIMIT ${take}`);
  }

  /** Every board matching a filter (bulk actions); bounded by `max`. */
  findMatching(filter: BoardListFilter, max: number): Promise<Board[]> {
    return this.prisma.$queryRaw<Board[]>`
      SELECT * FROM "Board" ${whereSql(filter)} ORDER BY "name" LIMIT ${max}`;
  }

  findAllSealed(): Promise<Pick<Board, 'id' | 'credentialSealed'>[]> {
    return this.prisma.board.findMany({
      where: { credentialSealed: { not: null } },
      select: { id: true, credentialSealed: true },
    });
  }

  async countByStateAndDialect(): Promise<{ state: BoardState; dialect: BoardDialect | null; count: number }[]> {
    const rows = await this.prisma.board.groupBy({ by: ['state', 'dialect'], _count: { _all: true } });
    return rows.map((r) => ({ state: r.state, dialect: r.dialect, count: r._count._all }));
  }

  /**
   * Which unique fields the refused write collides on, by asking the table (PostgreSQL names only the first
   * violated constraint, and the driver error's text mentions `name` whatever collided): the names and base URLs
   * other boards already have, or that the same bulk request lists twice.
   */
  private async conflictOf(
    err: unknown,
    wanted: ReadonlyArray<{ name?: string; baseUrl?: string }>,
    exceptId?: string,
  ): Promise<unknown> {
    if (!(err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002')) {
      return err;
    }
    const names = wanted.flatMap((w) => (w.name === undefined ? [] : [w.name]));
    const urls = wanted.flatMap((w) => (w.baseUrl === undefined ? [] : [w.baseUrl]));
    const taken = await this.prisma.board.findMany({
      where: {
        OR: [{ name: { in: names } }, { baseUrl: { in: urls } }],
        ...(exceptId ? { id: { not: exceptId } } : {}),
      },
      select: { name: true, baseUrl: true },
    });
    const repeated = (list: string[]) => new Set(list).size < list.length;
    const fields = [
      taken.some((b) => names.includes(b.name)) || repeated(names) ? 'name' : null,
      taken.some((b) => urls.includes(b.baseUrl)) || repeated(urls) ? 'base URL' : null,
    ].filter((f): f is string => f !== null);
    return new BoardConflictError(fields.length ? fields : ['name or base URL']);
  }
}
