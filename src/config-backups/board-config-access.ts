import type { OperationId } from '@tpfleet/board-api';
import { capabilities, type Dialect } from '@tpfleet/board-api/client';
import { ConflictError, UnprocessableError } from '../common/errors.js';
import type { Board } from '../boards/boards.repository.js';

/** Why a configuration may not go to a board: the kind of refusal and its detail. */
export interface ConfigRefusal {
  kind: typeof ConflictError | typeof UnprocessableError;
  detail: string;
}

/** Config formats a board can import. Every daemon with POST /config reads format 1 only. */
export function readableFormats(board: Pick<Board, 'dialect' | 'daemonVersion'>): number[] {
  return offers(board, 'postConfig') ? [1] : [];
}

/** Whether the board (by dialect and version) offers the operation; an unknown dialect is given the benefit. */
export function offers(board: Pick<Board, 'dialect' | 'daemonVersion'>, op: OperationId): boolean {
  if (!board.dialect) {
    return true;
  }
  return capabilities(board.dialect as Dialect, board.daemonVersion ?? undefined).has(op);
}

/** Why nothing may be imported into this board, or null (checked before anything is sent). */
export function importRefusal(board: Board): ConfigRefusal | null {
  if (board.decommissionedAt) {
    return { kind: ConflictError, detail: `board ${board.name} is decommissioned` };
  }
  if (board.state === 'credentials_invalid') {
    return { kind: ConflictError, detail: `board ${board.name} refused its credentials; update them first` };
  }
  if (board.state === 'banned') {
    return {
      kind: ConflictError,
      detail: `board ${board.name} is banning this manager after failed logins; wait for the ban to lapse`,
    };
  }
  if (!offers(board, 'postConfig')) {
    return {
      kind: ConflictError,
      detail: `board ${board.name} runs the ${board.dialect} daemon ${board.daemonVersion ?? '(unknown version)'}, which cannot import a configuration (no POST /config)`,
    };
  }
  return null;
}

/** Why this version cannot go to this board because of its format, or null. */
export function formatRefusal(board: Board, formatVersion: number): ConfigRefusal | null {
  const readable = readableFormats(board);
  if (!readable.includes(formatVersion)) {
    return {
      kind: UnprocessableError,
      detail:
        `the version is config format ${formatVersion}, and board ${board.name} (${board.dialect ?? 'unknown'} ${board.daemonVersion ?? ''}) reads format ${readable.join(', ') || 'none'}; nothing was sent`.replace(
          ' )',
          ')',
        ),
    };
  }
  return null;
}
