import { ConflictError, UnprocessableError } from '../common/errors.js';
import { boardRefusal, offers } from '../boards/board-capabilities.js';
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

/** Why nothing may be imported into this board, or null (checked before anything is sent). */
export function importRefusal(board: Board): ConfigRefusal | null {
  const detail = boardRefusal(board, { needs: ['postConfig'], what: 'import a configuration', gate: 'importable' });
  return detail ? { kind: ConflictError, detail } : null;
}

/** Why no configuration can be read from this board (its daemon has no GET /config), or null. */
export function exportRefusal(board: Board): string | null {
  return offers(board, 'getConfig')
    ? null
    : `board ${board.name} runs the ${board.dialect} daemon ${board.daemonVersion ?? ''}, which has no GET /config`;
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
