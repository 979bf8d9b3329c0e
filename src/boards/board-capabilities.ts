import { routes, type OperationId } from '@tpfleet/board-api';
import { capabilities, type Dialect } from '@tpfleet/board-api/client';
import type { Board } from './boards.repository.js';

/** What a firmware install sends and reads (stage, then judge by the slots). */
export const FIRMWARE_INSTALL_OPERATIONS: readonly OperationId[] = ['postFirmwareInstall', 'getFirmwareSlots'];
/** What a firmware sources push sends. */
export const SOURCES_PUSH_OPERATIONS: readonly OperationId[] = ['postFirmwareSources'];

type BoardFacts = Pick<Board, 'name' | 'dialect' | 'daemonVersion'>;

/**
 * Why nothing may be sent to this board on a person's behalf now, whatever the operation, or null: it is
 * decommissioned, it refused its credentials (another login counts towards a ban), or it has not been reached yet
 * (its dialect and so its capabilities are unknown). Node actions and node images check this before their own rules.
 */
export function notCallableReason(
  board: Pick<Board, 'name' | 'dialect' | 'state' | 'decommissionedAt'>,
): string | null {
  if (board.decommissionedAt) {
    return `board ${board.name} is decommissioned`;
  }
  if (board.state === 'credentials_invalid') {
    return `board ${board.name} refused its credentials; update them first`;
  }
  if (!board.dialect) {
    return `board ${board.name} has not been reached yet, so its dialect and capabilities are unknown`;
  }
  return null;
}

/**
 * Why a bulk job must leave this board out: the capability matrix (dialect and daemon version, the same table the
 * client routes by) lacks an operation the job needs. Null when the board can do it, or when it has not been
 * reached yet (its dialect is unknown; the job judges it again when it runs, once the board has been polled).
 * A board left out this way is skipped with this reason, never dispatched: no job waits on a board that can never
 * do the work.
 */
export function unsupportedReason(board: BoardFacts, needs: readonly OperationId[], what: string): string | null {
  if (!board.dialect) {
    return null;
  }
  const offered = capabilities(board.dialect as Dialect, board.daemonVersion ?? undefined);
  const missing = needs.filter((op) => !offered.has(op));
  if (!missing.length) {
    return null;
  }
  const calls = missing.map((op) => `${routes[op].method} ${routes[op].path}`).join(', ');
  return `board ${board.name} runs the ${board.dialect} daemon ${board.daemonVersion ?? '(unknown version)'}, which cannot ${what} (no ${calls})`;
}
