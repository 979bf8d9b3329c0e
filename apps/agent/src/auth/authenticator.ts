import type { IncomingMessage, ServerResponse } from 'node:http';

import { type AuditActor, type AuditEntry, requestIdOf } from '../audit/audit-log.js';
import { BoardError } from '../backend/backend.js';
import { readBody } from '../http/body.js';
import { sendJson, sendProblem, sendRefusal, sendText, type Spelling } from '../http/reply.js';
import { BanPatrol, formatDuration } from './ban-patrol.js';
import { LOGIN_BODY_LIMIT, oversizedCredential } from './credential-limits.js';
import { proxiedIdentity } from '../tls/https.js';
import type { AccountStore } from './account-store.js';
import { LocalAccounts } from './local-accounts.js';
import type { PasswordHash } from './password.js';
import { TokenStore } from './tokens.js';

export const REALM = 'Access to Baseboard Management Controller';
export const LOGIN_PATH = '/api/bmc/authenticate';
export interface AuthOptions {
  /**
   * The accounts login and Basic check, shared with POST /access/password (the controller's /etc/shadow). Without
   * it, the simulated board's `root` account is built from `password` (persisted in `accountsFile` when given).
   */
  accounts?: AccountStore;
  /** Password of the simulated `root` account, or its precomputed hash (the rack shares one hash across boards). */
  password?: string | PasswordHash;
  /** Keep the simulated root's hash here so an API password change survives a restart. */
  accountsFile?: string;
  /** Sliding bearer-token lifetime; default 10800 s (3 h). */
  tokenExpirySeconds?: number;
  /** Absolute bearer-token lifetime from the login, however busy the session; default 86400 s (24 h). */
  tokenLifetimeSeconds?: number;
  /** Admit loopback peers without a credential, as the real board does. Off by default: tests and the simulator run on loopback. */
  trustLoopback?: boolean;
  /** Consecutive failures that trigger a ban; default 5. */
  attempts?: number;
  /** First ban length; default 60 s. */
  baseBanMs?: number;
  now?: () => number;
  /**
   * The identity header in effect when a verified client certificate may vouch for a proxied operator;
   * undefined while no client CA is in effect. Read per request: a reload swaps it.
   */
  proxyIdentityHeader?: () => string | undefined;
}

/** Who a request was admitted as (the board's `actor`). */
export interface Actor {
  name: string;
  scheme: 'token' | 'basic' | 'loopback' | 'mtls';
}

export type Admission = { admitted: true; actor: Actor } | { admitted: false };

/**
 * Authentication for `/api/bmc/**` as the real board does it: ban check first (429 on every path,
 * the login included), then the loopback exemption when trusted, then the login path, then `Authorization` (Bearer
 * with sliding expiry, or Basic checked against the account store on every request). No roles.
 */
export class Authenticator {
  private readonly tokens: TokenStore;
  private readonly bans: BanPatrol;
  private readonly now: () => number;
  private readonly trustLoopback: boolean;
  private readonly proxyIdentityHeader?: () => string | undefined;
  private audit?: { record(entry: AuditEntry): void };

  private constructor(
    readonly accounts: AccountStore,
    options: AuthOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.tokens = new TokenStore(
      (options.tokenExpirySeconds ?? 10800) * 1000,
      this.now,
      options.tokenLifetimeSeconds === undefined ? undefined : options.tokenLifetimeSeconds * 1000,
    );
    // A changed password ends the account's sessions, whoever changed it (a departure from the daemon, issue 14).
    accounts.onPasswordChange?.((username) => this.tokens.revokeUser(username));
    this.bans = new BanPatrol({ attempts: options.attempts, baseBanMs: options.baseBanMs, now: this.now });
    this.trustLoopback = options.trustLoopback ?? false;
    this.proxyIdentityHeader = options.proxyIdentityHeader;
  }

  static async create(options: AuthOptions): Promise<Authenticator> {
    if (options.accounts) {
      return new Authenticator(options.accounts, options);
    }
    if (options.password === undefined) {
      throw new Error('Authenticator needs `accounts` or a `password`');
    }
    return new Authenticator(
      await LocalAccounts.open({ password: options.password, file: options.accountsFile }),
      options,
    );
  }

  /**
   * Put a root password in effect from outside the API (rack fault injection and its restore); simulated accounts
   * only. Root's sessions are revoked when the password really changes, as after any other change.
   */
  async setPassword(password: string | PasswordHash): Promise<void> {
    if (!(this.accounts instanceof LocalAccounts)) {
      throw new Error("only a simulated board's password can be replaced");
    }
    await this.accounts.replace(password);
  }

  /** Where logins and failed credential checks are recorded (the board's audit log, built after the authenticator). */
  auditTo(audit: { record(entry: AuditEntry): void } | undefined): void {
    this.audit = audit;
  }

  /** Forget sessions and bans (a controller reboot). */
  reset(): void {
    this.tokens.clear();
  }

  /**
   * Decide whether the request may proceed. When it may not, or when it was the login itself, the answer has
   * already been written and `admitted` is false.
   */
  async admit(req: IncomingMessage, res: ServerResponse, pathname: string): Promise<Admission> {
    const peer = peerAddress(req);
    const banMs = this.bans.remainingBanMs(peer);
    if (banMs > 0 && !(this.trustLoopback && isLoopback(peer))) {
      const seconds = Math.max(1, Math.ceil(banMs / 1000));
      sendText(
        res,
        429,
        `Exceeded allowed authentication attempts. Access blocked for ${formatDuration(seconds)}. ` +
          'The credentials were not checked, so this says nothing about whether they are correct.',
        { 'Retry-After': String(seconds) },
      );
      return { admitted: false };
    }
    // The login answers even from a trusted loopback peer, so local tools can still obtain a token.
    if (pathname === LOGIN_PATH) {
      await this.login(req, res, peer);
      return { admitted: false };
    }
    if (this.trustLoopback && isLoopback(peer)) {
      return { admitted: true, actor: { name: 'loopback', scheme: 'loopback' } };
    }
    // A verified proxy: a client certificate that verified against the client CA plus the identity header.
    const header = this.proxyIdentityHeader?.();
    const proxied = header === undefined ? undefined : proxiedIdentity(req, header);
    if (proxied !== undefined) {
      return { admitted: true, actor: { name: proxied, scheme: 'mtls' } };
    }
    return this.checkAuthorization(req, res, peer, spellingOf(pathname));
  }

  private async login(req: IncomingMessage, res: ServerResponse, peer: string): Promise<void> {
    let raw: Buffer;
    try {
      // A few KiB hold any credentials this board can accept; more is refused before it is buffered.
      raw = await readBody(req, LOGIN_BODY_LIMIT);
    } catch (err) {
      if (err instanceof BoardError) {
        sendProblem(res, err.status, `a login body is at most ${LOGIN_BODY_LIMIT} bytes; nothing was checked`);
        return;
      }
      throw err;
    }
    let username: string;
    let password: string;
    try {
      const parsed: unknown = JSON.parse(raw.toString('utf8'));
      if (
        typeof parsed !== 'object' ||
        parsed === null ||
        typeof (parsed as Record<string, unknown>)['username'] !== 'string' ||
        typeof (parsed as Record<string, unknown>)['password'] !== 'string'
      ) {
        throw new Error('expected an object with string members `username` and `password`');
      }
      ({ username, password } = parsed as { username: string; password: string });
    } catch (err) {
      sendText(res, 403, `error trying to parse credentials: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    const claimed = claimedActor(username, 'password');
    const oversized = oversizedCredential(username, password);
    if (oversized !== undefined) {
      this.failed(req, peer, claimed, `400 ${oversized}`);
      sendProblem(res, 400, oversized);
      return;
    }
    const verdict = await this.verifyOrRefuse(res, 'path', username, password);
    if (verdict === undefined) {
      return;
    }
    if (!verdict) {
      this.failed(req, peer, claimed, '403 credentials incorrect');
      sendText(res, 403, 'credentials incorrect');
      return;
    }
    this.bans.success(peer);
    this.record(req, peer, claimed, 'ok');
    const token = this.tokens.issue(username);
    sendJson(
      res,
      200,
      { id: token, name: 'User Session', description: 'User Session', username },
      { 'X-Auth-Token': token },
    );
  }

  /**
   * The account check; undefined when it could not be made (the hashing pool is saturated) and the refusal has been
   * written in the request's spelling.
   */
  private async verifyOrRefuse(
    res: ServerResponse,
    spelling: Spelling,
    username: string,
    password: string,
  ): Promise<boolean | undefined> {
    try {
      return await this.verify(username, password);
    } catch (err) {
      if (err instanceof BoardError && err.status === 503) {
        sendRefusal(res, spelling, 503, err.message, { 'Retry-After': '1' });
        return undefined;
      }
      throw err;
    }
  }

  private async checkAuthorization(
    req: IncomingMessage,
    res: ServerResponse,
    peer: string,
    spelling: Spelling,
  ): Promise<Admission> {
    const header = req.headers.authorization;
    if (header === undefined || header.trim() === '') {
      return this.challenge(res, 'no authorization header provided', `Basic realm="${REALM}"`);
    }
    const space = header.indexOf(' ');
    const scheme = space < 0 ? header : header.slice(0, space);
    const credential = space < 0 ? '' : header.slice(space + 1).trim();
    if (scheme.toLowerCase() === 'bearer') {
      const check = this.tokens.check(credential);
      if (check.ok) {
        this.bans.success(peer);
        return { admitted: true, actor: { name: check.username, scheme: 'token' } };
      }
      if (check.reason === 'expired') {
        const message = `token expired ${formatDuration(check.agoMs / 1000)} ago`;
        return this.challenge(res, message, bearerChallenge(message));
      }
      // A session ended by a password change: its holder once knew the password, so this is no guess.
      if (check.reason === 'revoked') {
        const message = `token revoked: the password of ${check.username} changed; log in again`;
        return this.challenge(res, message, bearerChallenge(message));
      }
      // The token itself stays out of the log: a mistyped one may be close to a live one.
      this.failed(req, peer, null, '401 bearer token not registered');
      const message = `token ${credential} is not registered`;
      return this.challenge(res, message, bearerChallenge(message));
    }
    if (scheme.toLowerCase() === 'basic') {
      const decoded = Buffer.from(credential, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      const [username, password] = [decoded.slice(0, Math.max(colon, 0)), decoded.slice(colon + 1)];
      const claimed = colon > 0 ? claimedActor(username, 'basic') : null;
      const oversized = colon > 0 ? oversizedCredential(username, password) : undefined;
      if (oversized !== undefined) {
        this.failed(req, peer, claimed, `401 ${oversized}`);
        sendRefusal(res, spelling, 401, oversized, { 'WWW-Authenticate': `Basic realm="${REALM}"` });
        return { admitted: false };
      }
      const verdict = colon > 0 ? await this.verifyOrRefuse(res, spelling, username, password) : false;
      if (verdict === undefined) {
        return { admitted: false };
      }
      if (verdict) {
        this.bans.success(peer);
        return { admitted: true, actor: { name: username, scheme: 'basic' } };
      }
      this.failed(req, peer, claimed, '401 credentials incorrect');
      return this.challenge(res, 'credentials incorrect', `Basic realm="${REALM}"`);
    }
    return this.challenge(res, `${scheme} authentication not supported`, `realm="${REALM}"`);
  }

  /** The account check behind login and Basic, shared with POST /access/password (one password store). */
  verifyAccount(username: string, password: string): Promise<boolean> {
    return this.verify(username, password);
  }

  private verify(username: string, password: string): Promise<boolean> {
    return this.accounts.verify(username, password);
  }

  /** A failed credential: counted towards a ban and audited (with the ban it started, if any). */
  private failed(req: IncomingMessage, peer: string, claimed: AuditActor | null, outcome: string): void {
    const banMs = this.bans.failure(peer);
    this.record(req, peer, claimed, banMs > 0 ? `${outcome}; banned for ${formatDuration(banMs / 1000)}` : outcome);
  }

  private record(req: IncomingMessage, peer: string, actor: AuditActor | null, outcome: string): void {
    this.audit?.record({ action: 'login', actor, peer, outcome, requestId: requestIdOf(req.headers['x-request-id']) });
  }

  private challenge(res: ServerResponse, message: string, challenge: string): Admission {
    sendText(res, 401, message, { 'WWW-Authenticate': challenge });
    return { admitted: false };
  }
}

/** The name a login claims; an over-long one is not repeated into the audit log. */
function claimedActor(username: string, scheme: 'password' | 'basic'): AuditActor | null {
  return username === '' || oversizedCredential(username, '') !== undefined ? null : { name: username, scheme };
}

/** The legacy form is `/api/bmc?opt=&type=` itself; every other path is the path form. */
function spellingOf(pathname: string): Spelling {
  return pathname === '/api/bmc' || pathname === '/api/bmc/' ? 'legacy' : 'path';
}

function bearerChallenge(description: string): string {
  return `Bearer realm="${REALM}" error="invalid_token" error_description="${description.replace(/["\\]/g, '\\$&')}"`;
}

export function peerAddress(req: IncomingMessage): string {
  const address = req.socket.remoteAddress ?? 'unknown';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

export function isLoopback(address: string): boolean {
  return address === '::1' || address.startsWith('127.');
}

/** The authenticator's accounts as the access operations' AccountStore: one store, so a change is what the next login checks. */
export function accountsOf(auth: Authenticator): AccountStore {
  return auth.accounts;
}
