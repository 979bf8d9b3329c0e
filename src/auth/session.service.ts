import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { parseCookie, stringifySetCookie } from 'cookie';
import { z } from 'zod';
import { SecretBox } from '../common/secret-box.service.js';
import { ConfigService } from '../config/config.service.js';
import type { Actor } from './roles.js';
import { hashToken, TokensService } from './tokens.service.js';

export const SESSION_COOKIE = 'tpfleet_session';
export const CSRF_HEADER = 'x-csrf-token';
/** A console session ends this long after sign-in, however busy (sign in again with the token). */
export const SESSION_TTL_MS = 12 * 3600_000;
/** Bound as additional data: a value sealed for another purpose (a board credential) never opens as a session. */
const SEAL_CONTEXT = 'tpfleet-console-session';

const ZSessionPayload = z.object({ h: z.string(), c: z.string(), e: z.number() });

/** What a console session cookie carries: the API token's hash (never the token), its CSRF token, its end. */
export interface ConsoleSession {
  tokenHash: string;
  csrf: string;
  expiresAt: number;
}

/**
 * Console sessions: the API token typed into the sign-in form is exchanged for a cookie sealed with SECRET_KEY
 * (AES-256-GCM), HttpOnly so page scripts never see it, SameSite=Strict so other sites cannot send it, scoped to
 * /api. Each request through the cookie authenticates the token's hash again, so revoking the token ends its
 * sessions. Mutations through the cookie also need the session's CSRF token in the X-CSRF-Token header.
 */
@Injectable()
export class SessionService {
  private readonly box: SecretBox;

  constructor(
    config: ConfigService,
    private readonly tokens: TokensService,
  ) {
    this.box = new SecretBox(config.security.secretKey, config.security.previousKeys);
  }

  actorOf(apiToken: string): Promise<Actor | null> {
    return this.tokens.authenticate(apiToken);
  }

  create(apiToken: string, secure: boolean, now = Date.now()): { cookie: string; session: ConsoleSession } {
    const session = {
      tokenHash: hashToken(apiToken),
      csrf: randomBytes(24).toString('base64url'),
      expiresAt: now + SESSION_TTL_MS,
    };
    const sealed = this.box.seal(
      JSON.stringify({ h: session.tokenHash, c: session.csrf, e: session.expiresAt }),
      SEAL_CONTEXT,
    );
    return { cookie: this.cookie(sealed, SESSION_TTL_MS / 1000, secure), session };
  }

  /** The session in a Cookie header, or null when absent, tampered with, sealed by an unknown key or expired. */
  fromCookieHeader(header: string | undefined, now = Date.now()): ConsoleSession | null {
    const sealed = header ? parseCookie(header)[SESSION_COOKIE] : undefined;
    if (!sealed) {
      return null;
    }
    try {
      const payload = ZSessionPayload.parse(JSON.parse(this.box.open(sealed, SEAL_CONTEXT)));
      return payload.e > now ? { tokenHash: payload.h, csrf: payload.c, expiresAt: payload.e } : null;
    } catch {
      return null;
    }
  }

  /** Names a session on the event bus (sign-out) without carrying its CSRF token: a hash of it. */
  idOf(session: ConsoleSession): string {
    return createHash('sha256').update(`session:${session.csrf}`).digest('hex');
  }

  csrfMatches(session: ConsoleSession, sent: string | string[] | undefined): boolean {
    if (typeof sent !== 'string') {
      return false;
    }
    const a = Buffer.from(sent);
    const b = Buffer.from(session.csrf);
    return a.length === b.length && timingSafeEqual(a, b);
  }

  /** The Set-Cookie value that deletes the session cookie (sign-out). */
  clearCookie(secure: boolean): string {
    return this.cookie('', 0, secure);
  }

  /** `secure` when the request came over HTTPS: a plain-HTTP first run on a LAN must still be able to sign in. */
  private cookie(value: string, maxAgeSeconds: number, secure: boolean): string {
    return stringifySetCookie({
      name: SESSION_COOKIE,
      value,
      httpOnly: true,
      sameSite: 'strict',
      secure,
      path: '/api',
      maxAge: maxAgeSeconds,
    });
  }
}
