import { routes, type OperationId } from '@tpfleet/board-api';
import { capabilities, type Dialect } from '@tpfleet/board-api/client';
import type { Board } from './boards.repository.js';

/** What a firmware install sends and reads (stage, then judge by the slots). */
export const FIRMWARE_INSTALL_OPERATIONS: readonly OperationId[] = ['postFirmwareInstall', 'getFirmwareSlots'];
/** What a firmware sources push sends. */
export const SOURCES_PUSH_OPERATIONS: readonly OperationId[] = ['postFirmwareSources'];

/** The facts a refusal reads; the gates below also read `state` and `decommissionedAt`. */
export type BoardFacts = Pick<Board, 'name' | 'dialect' | 'daemonVersion'> &
  Partial<Pick<Board, 'state' | 'decommissionedAt'>>;

/**
 * Work to send to a board, as the one refusal rule below judges it.
 *
 * - `needs`: the operations the work sends; the capability matrix (dialect and daemon version, the same table the
 *   client routes by) must offer each.
 * - `what`: the work in words, for "…, which cannot <what> (no POST /firmware/install)". Without it the refusal names
 *   the missing operation ids ("…, which does not offer postFlash, getFlash"), then `label` in brackets if given.
 * - `gate`, what refuses a board before the matrix is read:
 *   - `'matrix'` (the default): nothing. A board not reached yet (dialect unknown) is let through; the job judges it
 *     again when it runs, once the board has been polled. Bulk jobs skip what this refuses, so no job waits on a
 *     board that can never do the work.
 *   - `'callable'`: nothing may be sent on a person's behalf now: the board is decommissioned, refused its
 *     credentials (another login counts towards a ban), or has not been reached yet (its capabilities are unknown).
 *   - `'importable'`: decommissioned, refused its credentials, or banning this manager; a board not reached yet is
 *     let through as with `'matrix'`.
 */
export interface BoardWork {
  needs: readonly OperationId[];
  what?: string;
  label?: string;
  gate?: 'matrix' | 'callable' | 'importable';
}

/** The operations of `needs` the board (by dialect and version) lacks; none for a board not reached yet. */
function lacking(
  board: Pick<Board, 'dialect' | 'daemonVersion'>,
  needs: readonly OperationId[],
  offered: typeof capabilities = capabilities,
): OperationId[] {
  if (!board.dialect) {
    return [];
  }
  const offer = offered(board.dialect as Dialect, board.daemonVersion ?? undefined);
  return needs.filter((op) => !offer.has(op));
}

/** Whether the board (by dialect and version) offers the operation; a board not reached yet is given the benefit. */
export function offers(board: Pick<Board, 'dialect' | 'daemonVersion'>, op: OperationId): boolean {
  return lacking(board, [op]).length === 0;
}

/**
 * Why this work must not be sent to this board, or null: the one refusal of node actions, node images, firmware
 * installs and sources pushes, and configuration imports. `offered` stands in for the capability matrix in tests.
 */
export function boardRefusal(
  board: BoardFacts,
  work: BoardWork,
  offered: typeof capabilities = capabilities,
): string | null {
  const gate = work.gate ?? 'matrix';
  if (gate !== 'matrix') {
    if (board.decommissionedAt) {
      return `board ${board.name} is decommissioned`;
    }
    if (board.state === 'credentials_invalid') {
      return `board ${board.name} refused its credentials; update them first`;
    }
    if (gate === 'importable' && board.state === 'banned') {
      return `board ${board.name} is banning this manager after failed logins; wait for the ban to lapse`;
    }
    if (gate === 'callable' && !board.dialect) {
      return `board ${board.name} has not been reached yet, so its dialect and capabilities are unknown`;
    }
  }
  const missing = lacking(board, work.needs, offered);
  if (!missing.length) {
    return null;
  }
  const runs = `board ${board.name} runs the ${board.dialect} daemon ${board.daemonVersion ?? '(unknown version)'}`;
  if (work.what !== undefined) {
    const calls = missing.map((op) => `${routes[op].method} ${routes[op].path}`).join(', ');
    return `${runs}, which cannot ${work.what} (no ${calls})`;
  }
  return `${runs}, which does not offer ${missing.join(', ')}${work.label ? ` (${work.label})` : ''}`;
}
