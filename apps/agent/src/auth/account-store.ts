/**
 * The local accounts, shared by the authenticator's credential check and POST /access/password
 * (src/access/password-change.ts): one store, so a changed password is what the next Basic check and login verify.
 * The simulated board keeps scrypt hashes (local-accounts.ts); the controller reads /etc/shadow and changes it with
 * `chpasswd` (shadow-accounts.ts).
 */
export interface AccountStore {
  /** Constant-cost check: an unknown account costs as much as a wrong password. */
  verify(username: string, password: string): Promise<boolean>;
  /** Replace the password; the account's bearer sessions are then revoked (through `onPasswordChange`). */
  setPassword(username: string, password: string): Promise<void>;
  /**
   * Told the user name whenever an account's password changes or the account goes, however it happened (the API,
   * the rack, `passwd` on the console): the authenticator revokes that account's sessions.
   */
  onPasswordChange?(listener: (username: string) => void): void;
}
