import { BoardError } from '../backend/backend.js';
import type { AccountStore } from '../auth/account-store.js';
import { MAX_PASSWORD_BYTES } from '../auth/credential-limits.js';

export const MIN_PASSWORD_CHARACTERS = 12;

/** POST /access/password: the daemon's checks in order, one message for an unknown account and a mismatch. */
export async function changePassword(
  accounts: AccountStore,
  body: { username: string; current_password: string; new_password: string },
): Promise<void> {
  if (body.username.trim() === '') {
    throw new BoardError(400, '`username` is required');
  }
  // Unicode characters, not bytes (or UTF-16 units).
  if ([...body.new_password].length < MIN_PASSWORD_CHARACTERS) {
    throw new BoardError(400, `the new password is too short: at least ${MIN_PASSWORD_CHARACTERS} characters`);
  }
  // Before any hashing: a long password costs the crypt check the square of its length, and no login could use it.
  if (Buffer.byteLength(body.new_password, 'utf8') > MAX_PASSWORD_BYTES) {
    throw new BoardError(400, `the new password is too long: at most ${MAX_PASSWORD_BYTES} bytes`);
  }
  if (Buffer.byteLength(body.current_password, 'utf8') > MAX_PASSWORD_BYTES) {
    throw new BoardError(400, `the current password is longer than ${MAX_PASSWORD_BYTES} bytes, so it is wrong`);
  }
  if (body.new_password === body.current_password) {
    throw new BoardError(400, 'the new password is the same as the current one');
  }
  if (!(await accounts.verify(body.username, body.current_password))) {
    throw new BoardError(403, 'the current password is wrong');
  }
  try {
    await accounts.setPassword(body.username, body.new_password);
  } catch (err) {
    if (err instanceof BoardError) {
      throw err;
    }
    throw new BoardError(
      500,
      `Failed to change the password: the system refused the change: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}
