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
  | { ok: true; username: string }
  | { ok: false; reason: 'unknown' }
  | { ok: false; reason: 'revoked'; username: string }
  | { ok: false; reason: 'expired'; agoMs: number };

/** Absolute session lifetime unless told otherwise: a working day and then some, whatever the use. */
export const DEFAULT_TOKEN_LIFETIME_MS = 24 * 3600 * 1000;

interface Session {
  username: string;
  issued: number;
  lastUsed: number;
}

/**
 * Bearer sessions in memory only (a restart logs everyone out, as on the board). Expiry slides: each successful use
 * restarts the clock; besides, a session ends `lifetimeMs` after its login however busy it is (never before the
 * sliding expiry), so a leaked token does not live forever. A password change revokes the account's sessions; a
 * revoked token is remembered for one sliding period, so its holder is told why (and is not counted as a guesser).
 */
export class TokenStore {
  private readonly sessions = new Map<string, Session>();
  private readonly revoked = new Map<string, { username: string; at: number }>();
  private readonly lifetimeMs: number;

  constructor(
    private readonly expiryMs: number,
    private readonly now: () => number = Date.now,
    lifetimeMs = DEFAULT_TOKEN_LIFETIME_MS,
  ) {
    this.lifetimeMs = Math.max(lifetimeMs, expiryMs);
  }

  issue(username: string): string {
    this.purge();
    const token = newToken();
    const now = this.now();
    this.sessions.set(token, { username, issued: now, lastUsed: now });
    return token;
  }

  check(token: string): TokenCheck {
    const session = this.sessions.get(token);
    if (!session) {
      const revoked = this.revoked.get(token);
      return revoked ? { ok: false, reason: 'revoked', username: revoked.username } : { ok: false, reason: 'unknown' };
    }
    const now = this.now();
    const endsAt = this.endOf(session);
    if (now > endsAt) {
      this.sessions.delete(token);
      return { ok: false, reason: 'expired', agoMs: now - endsAt };
    }
    session.lastUsed = now;
    return { ok: true, username: session.username };
  }

  /** End every session of `username` (its password changed); returns how many there were. */
  revokeUser(username: string): number {
    const at = this.now();
    let count = 0;
    for (const [token, session] of this.sessions) {
      if (session.username === username) {
        this.sessions.delete(token);
        this.revoked.set(token, { username, at });
        count += 1;
      }
    }
    return count;
  }

  clear(): void {
    this.sessions.clear();
    this.revoked.clear();
  }

  private endOf(session: Session): number {
    return Math.min(session.lastUsed + this.expiryMs, session.issued + this.lifetimeMs);
  }

  private purge(): void {
    const now = this.now();
    for (const [token, session] of this.sessions) {
      if (now > this.endOf(session)) {
        this.sessions.delete(token);
      }
    }
    for (const [token, revoked] of this.revoked) {
      if (now - revoked.at > this.expiryMs) {
        this.revoked.delete(token);
      }
    }
  }
}
