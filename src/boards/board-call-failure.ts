import { BoardClientError, errorReason } from '@tpfleet/board-api/client';
import { BoardFailedError } from '../common/errors.js';

/**
 * Rethrows what a board call threw, for a request that waits on the board: a client error (no answer, a refusal, a
 * payload that does not fit the contract) becomes a 502 naming the board, what it did not do, and why; anything else
 * (a bug, the database) passes through as it is.
 */
export function throwBoardCallFailure(board: { id: string; name: string }, what: string, err: unknown): never {
  if (err instanceof BoardClientError) {
    throw new BoardFailedError(`board ${board.name} ${what}: ${err.message}`, {
      board_id: board.id,
      reason: errorReason(err),
    });
  }
  throw err;
}
