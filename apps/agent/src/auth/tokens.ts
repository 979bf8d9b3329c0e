import { randomInt } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** 64 random `[A-Za-z0-9]` characters, as the daemon's session ids. */
export function newToken(): string {
  let token = '';
  for (let i = 0; i < 64; i++) {
    token += ALPHABET[randomInt(ALPHABET.length)];
  }
  return token;
}

export type TokenCheck =
  { ok: true; username: string } | { ok: false; reason: 'unknown' } | { ok: false; reason: 'expired'; agoMs: number };

/**
 * Bearer sessions in memory only (a restart logs everyone out, as on the board). Expiry slides: each successful use
 * restarts the clock. Expired tokens are removed when seen and purged whenever a new token is issued.
 */
export class TokenStore {
  private readonly sessions = new Map<string, { username: string; lastUsed: number }>();

  constructor(
    private readonly expiryMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  issue(username: string): string {
    this.purge();
    const token = newToken();
    this.sessions.set(token, { username, lastUsed: this.now() });
    return token;
  }

  check(token: string): TokenCheck {
    const session = this.sessions.get(token);
    if (!session) {
      return { ok: false, reason: 'unknown' };
    }
    const now = this.now();
    const age = now - session.lastUsed;
    if (age > this.expiryMs) {
      this.sessions.delete(token);
      return { ok: false, reason: 'expired', agoMs: age - this.expiryMs };
    }
    session.lastUsed = now;
    return { ok: true, username: session.username };
  }

  clear(): void {
    this.sessions.clear();
  }

  private purge(): void {
    const now = this.now();
    for (const [token, session] of this.sessions) {
      if (now - session.lastUsed > this.expiryMs) {
        this.sessions.delete(token);
      }
    }
  }
}
