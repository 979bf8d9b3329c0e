import { Injectable } from '@nestjs/common';
import { Readable } from 'node:stream';
import { z } from 'zod';
import { type Board, BoardsRepository } from '../boards/boards.repository.js';
import { parseLabelSelector } from '../common/label-selector.js';
import { InvalidInputError, TooLargeError } from '../common/errors.js';
import { ConfigBackupsRepository, type VersionRow } from './config-backups.repository.js';
import { versionFields } from './config-backups.mapper.js';
import { contentHash } from './config-document.js';

export const ARCHIVE_KIND = 'tpfleet-config-archive';
export const ARCHIVE_FORMAT = 1;
const MAX_BOARDS = 10_000;
const PAGE = 500;
const MAX_LINES = 200_000;

const ZHeaderSchema = z.object({ kind: z.literal(ARCHIVE_KIND), format: z.literal(ARCHIVE_FORMAT) });

const ZVersionLineSchema = z.object({
  kind: z.literal('version'),
  board: z.object({ id: z.uuid(), name: z.string().min(1) }),
  version: z.number().int().min(1),
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  format_version: z.number().int().nonnegative(),
  firmware_version: z.string().nullable(),
  source: z.string().max(32),
  captured_at: z.iso.datetime({ offset: true }),
  document: z.looseObject({ format_version: z.number().int().nonnegative() }),
});

export interface ImportSummary {
  lines: number;
  imported: number;
  duplicates: number;
  unmatched: Array<{ line: number; board: string }>;
  errors: Array<{ line: number; error: string }>;
}

/**
 * Off-site keeping: every stored version of the boards a selector matches as one JSON-lines archive (a header
 * line, then one line per version), and its import. Import is idempotent (a version already stored with the same
 * content and capture time is skipped) and checks each line's hash against its document.
 */
@Injectable()
export class ConfigArchiveService {
  constructor(
    private readonly boards: BoardsRepository,
    private readonly repository: ConfigBackupsRepository,
  ) {}

  async export(selector: string, includeDecommissioned: boolean): Promise<Readable> {
    const boards = await this.boards.findMatching(
      { selector: parseLabelSelector(selector), includeDecommissioned },
      MAX_BOARDS + 1,
    );
    if (boards.length > MAX_BOARDS) {
      throw new InvalidInputError(`the selector matches more than ${MAX_BOARDS} boards; narrow it`);
    }
    const byId = new Map(boards.map((b) => [b.id, b]));
    const ids = [...byId.keys()].sort();
    const repository = this.repository;
    async function* lines() {
      yield `${JSON.stringify({ kind: ARCHIVE_KIND, format: ARCHIVE_FORMAT, exported_at: new Date().toISOString(), selector, boards: ids.length })}\n`;
      let after: { boardId: string; seq: number } | undefined;
      for (;;) {
        const page = ids.length ? await repository.versionsPage(ids, after, PAGE) : [];
        for (const v of page) {
          yield `${JSON.stringify(versionLine(v, byId.get(v.boardId)))}\n`;
        }
        if (page.length < PAGE) {
          return;
        }
        const last = page.at(-1)!;
        after = { boardId: last.boardId, seq: last.seq };
      }
    }
    return Readable.from(lines());
  }

  async import(text: string): Promise<ImportSummary> {
    const raw = text.split('\n').map((l) => l.trim());
    const numbered = raw.map((l, i) => ({ line: i + 1, text: l })).filter((l) => l.text !== '');
    if (numbered.length === 0) {
      throw new InvalidInputError('the archive is empty');
    }
    if (numbered.length > MAX_LINES) {
      throw new TooLargeError(`the archive has ${numbered.length} lines; import at most ${MAX_LINES} at once`);
    }
    const header = parseLine(numbered[0]!.text);
    if (!ZHeaderSchema.safeParse(header).success) {
      throw new InvalidInputError(
        `line 1 is not a ${ARCHIVE_KIND} header of format ${ARCHIVE_FORMAT}; export an archive from GET /api/v1/config-backups/export`,
      );
    }
    const summary: ImportSummary = { lines: numbered.length, imported: 0, duplicates: 0, unmatched: [], errors: [] };
    const cache = new Map<string, Board | null>();
    for (const { line, text: lineText } of numbered.slice(1)) {
      const parsed = ZVersionLineSchema.safeParse(parseLine(lineText));
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        summary.errors.push({ line, error: `${issue?.path.join('.') || '(line)'}: ${issue?.message ?? 'invalid'}` });
        continue;
      }
      const v = parsed.data;
      if (contentHash(v.document) !== v.hash) {
        summary.errors.push({ line, error: 'the hash does not match the document (altered or truncated)' });
        continue;
      }
      const board = await this.match(v.board, cache);
      if (!board) {
        summary.unmatched.push({ line, board: v.board.name });
        continue;
      }
      const created = await this.repository.importVersion({
        boardId: board.id,
        boardName: board.name,
        hash: v.hash,
        formatVersion: v.format_version,
        firmwareVersion: v.firmware_version,
        document: v.document,
        source: 'import',
        capturedAt: new Date(v.captured_at),
      });
      if (created) {
        summary.imported++;
      } else {
        summary.duplicates++;
      }
    }
    return summary;
  }

  /** The same board id, else a board of the same name (an archive restored into a new fleet). */
  private async match(ref: { id: string; name: string }, cache: Map<string, Board | null>): Promise<Board | null> {
    const key = `${ref.id}|${ref.name}`;
    if (!cache.has(key)) {
      const byId = await this.boards.findById(ref.id);
      const found =
        byId ??
        (await this.boards.findMatching({ q: ref.name, includeDecommissioned: true }, MAX_BOARDS)).find(
          (b) => b.name === ref.name,
        ) ??
        null;
      cache.set(key, found);
    }
    return cache.get(key) ?? null;
  }
}

function versionLine(v: VersionRow, board: Board | undefined) {
  return {
    kind: 'version',
    board: {
      id: v.boardId,
      name: board?.name ?? v.boardName,
      serial: board?.serial ?? null,
      rack: board?.rack ?? null,
      slot: board?.slot ?? null,
    },
    ...versionFields(v),
    document: v.document,
  };
}

function parseLine(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
