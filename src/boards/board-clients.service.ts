import { setTimeout as sleep } from 'node:timers/promises';
import { type BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import {
  BOARD_BODY_LIMIT_BYTES,
  BoardClient,
  createBoardDispatcher,
  detectDialect,
  type BoardCredentials,
  type DetectedBoard,
  type Dialect,
} from '@tpfleet/board-api/client';
import type { Agent } from 'undici';
import { ConflictError, UnavailableError } from '../common/errors.js';
import { RequestContext } from '../common/request-context.js';
import { ConfigService } from '../config/config.service.js';
import { type Board, BoardsRepository } from './boards.repository.js';
import { SecretBoxService } from '../common/secret-box.service.js';

/** Largest answer body read from a board; more is a failed request (reason `too_large`). One limit, the client's. */
export const MAX_BOARD_RESPONSE_BYTES = BOARD_BODY_LIMIT_BYTES;

/** `https://host[:port]` as the connector names it: URL's origin (the default port left out). */
function originOf(url: string): string {
  return new URL(url).origin;
}

export type ClientTarget = Pick<
  Board,
  | 'id'
  | 'baseUrl'
  | 'dialect'
  | 'daemonVersion'
  | 'credentialKind'
  | 'credentialSealed'
  | 'credentialVersion'
  | 'tlsFingerprint'
  | 'name'
  | 'state'
  | 'bannedUntil'
>;

/**
 * No call to this board now: it refused these credentials (a login would count towards a ban) or banned this
 * address (another request extends the ban). 409 until an admin updates the credentials; 503 until the ban ends.
 */
export function boardCallWithheld(
  board: Pick<ClientTarget, 'id' | 'name' | 'state' | 'bannedUntil'>,
  refusedHere: boolean,
): BoardCallWithheld {
  const banned = board.state === 'banned' && !refusedHere;
  const retryAfter =
    banned && board.bannedUntil ? Math.max(1, Math.ceil((board.bannedUntil.getTime() - Date.now()) / 1000)) : null;
  return new (banned ? UnavailableError : ConflictError)(
    banned
      ? `board ${board.name} banned the fleet manager's address${retryAfter !== null ? ` for ${retryAfter} s more` : ''}; nothing is sent to it until the ban ends`
      : `board ${board.name} refused its stored credentials; nothing is sent to it (each login counts towards a ban) until an admin updates them (PATCH /api/v1/boards/${board.id} with credentials)`,
    {
      board_id: board.id,
      board_state: board.state,
      ...(retryAfter !== null ? { retry_after_seconds: retryAfter } : {}),
    },
  );
}

export type BoardCallWithheld = ConflictError | UnavailableError;

interface Cached {
  baseUrl: string;
  credentialVersion: number;
  client: BoardClient;
}

/**
 * The one way the fleet manager reaches a board: a BoardClient per board over ONE shared undici Agent (a
 * keep-alive pool per board origin), cached so the session token from the first login is reused until the board
 * says it expired. The client logs in at most once per call and never loops (boards ban after 5 failures); a
 * board whose login was refused is not polled again until its credentials change (credentialVersion).
 */
/** On shutdown, board calls still in flight get this long before they are aborted. */
const SHUTDOWN_CALL_GRACE_MS = 2000;

@Injectable()
export class BoardClientsService implements BeforeApplicationShutdown {
  private readonly logger = new Logger(BoardClientsService.name);
  private readonly dispatcher: Agent;
  private readonly clients = new Map<string, Cached>();
  /**
   * `<boardId>:<credentialVersion>` whose login the board refused, with what it said: never sent again from this
   * process.
   */
  private readonly refused = new Map<string, string>();
  private readonly timeoutMs: number;
  /** Pinned certificate per https origin, as the boards' rows say (synced at every client use) or first seen. */
  private readonly pins = new Map<string, string>();
  /** Pins being written (trust on first use), by origin; `settlePins` waits for them. */
  private readonly pinWrites = new Map<string, Promise<unknown>>();
  /** The boards this process reached behind each https origin (several on a rack), and each board's origin. */
  private readonly boardsByOrigin = new Map<string, Set<string>>();
  private readonly originByBoard = new Map<string, string>();

  constructor(
    config: ConfigService,
    private readonly secrets: SecretBoxService,
    private readonly boards: BoardsRepository,
  ) {
    this.timeoutMs = config.polling.timeoutMs;
    this.dispatcher = createBoardDispatcher({
      // Boards serve self-signed certificates: no CA to check them against, so each board's certificate
      // is pinned on first use instead, and a changed one is refused before any credential is sent.
      rejectUnauthorized: false,
      pins: {
        expected: (origin) => this.pins.get(origin),
        seen: (origin, fingerprint) => this.pinFirstSeen(origin, fingerprint),
      },
      connectTimeoutMs: Math.min(this.timeoutMs, 5000),
      // Per origin. A real board gets at most a few requests at once; a simulated rack puts every board behind one
      // origin, so the pool must be as wide as both polling lanes together (a slow lane waiting on update checks
      // or boards of the lagging lane that answer in seconds must not hold the connections the fast lane needs).
      connections: Math.max(
        4,
        config.polling.concurrency + config.polling.slowConcurrency + config.polling.laggingConcurrency,
      ),
      // A board's answers are small JSON records (the largest, a configuration export, is a few KiB): a board that
      // sends megabytes is refused before it is buffered, instead of costing the worker memory per poll.
      maxResponseBytes: MAX_BOARD_RESPONSE_BYTES,
    });
  }

  /** Opens a board's stored credentials (the plaintext lives only in the cached client). */
  credentialsOf(target: ClientTarget): BoardCredentials | undefined {
    if (!target.credentialSealed) {
      return undefined;
    }
    const parsed = JSON.parse(this.secrets.open(target.credentialSealed, target.id)) as BoardCredentials;
    return parsed;
  }

  sealCredentials(boardId: string, credentials: BoardCredentials): { sealed: string; keyId: string } {
    const sealed = this.secrets.seal(JSON.stringify(credentials), boardId);
    return { sealed, keyId: this.secrets.keyIdOf(sealed) };
  }

  /**
   * Why no call (and so no login) may go to this board now, or null. The one check for every caller (polling, the
   * fleet firmware catalogue, the live config diff, actions, jobs), made before a client is handed out.
   */
  withheld(
    target: Pick<ClientTarget, 'id' | 'name' | 'state' | 'bannedUntil' | 'credentialVersion'>,
  ): BoardCallWithheld | null {
    if (this.isRefused(target)) {
      return boardCallWithheld(target, true);
    }
    if (target.state === 'credentials_invalid') {
      return boardCallWithheld(target, false);
    }
    // A ban whose end has passed lets the next poll find out whether it is over.
    if (target.state === 'banned' && target.bannedUntil !== null && target.bannedUntil.getTime() > Date.now()) {
      return boardCallWithheld(target, false);
    }
    return null;
  }

  /** The board's client; throws the `boardCallWithheld` refusal for a board that must not be called now (`withheld`). */
  client(target: ClientTarget): BoardClient {
    const withheld = this.withheld(target);
    if (withheld) {
      throw withheld;
    }
    this.syncPin(target);
    const cached = this.clients.get(target.id);
    // Field by field, so no key string is built on every call (every poll asks for its board's client).
    if (
      cached !== undefined &&
      cached.baseUrl === target.baseUrl &&
      cached.credentialVersion === target.credentialVersion &&
      cached.client.dialect === (target.dialect ?? 'agent') &&
      cached.client.daemonVersion === (target.daemonVersion ?? undefined)
    ) {
      return cached.client;
    }
    // A new dialect or version needs a new client; the session token survives unless the credentials changed.
    const token = cached && cached.credentialVersion === target.credentialVersion ? cached.client.token : undefined;
    const client = new BoardClient({
      baseUrl: target.baseUrl,
      credentials: this.credentialsOf(target),
      dialect: (target.dialect ?? 'agent') as Dialect,
      daemonVersion: target.daemonVersion ?? undefined,
      token,
      timeoutMs: this.timeoutMs,
      dispatcher: this.dispatcher,
      requestId: RequestContext.requestId,
    });
    this.clients.set(target.id, { baseUrl: target.baseUrl, credentialVersion: target.credentialVersion, client });
    return client;
  }

  /** Which daemon the board runs; reuses (and afterwards caches) the board's session token. */
  async detect(target: ClientTarget): Promise<DetectedBoard> {
    const withheld = this.withheld(target);
    if (withheld) {
      throw withheld;
    }
    this.syncPin(target);
    const cached = this.clients.get(target.id);
    const token = cached?.credentialVersion === target.credentialVersion ? cached.client.token : undefined;
    const detected = await detectDialect(target.baseUrl, this.credentialsOf(target), {
      dispatcher: this.dispatcher,
      timeoutMs: this.timeoutMs,
      token,
      requestId: RequestContext.requestId,
    });
    const client = this.client({ ...target, dialect: detected.dialect, daemonVersion: detected.version });
    if (detected.token !== undefined) {
      client.token = detected.token;
    }
    return detected;
  }

  /** A probe of an address that is not registered (scan): no cache, the given credentials. */
  probe(baseUrl: string, credentials: BoardCredentials | undefined, timeoutMs: number): Promise<DetectedBoard> {
    return detectDialect(baseUrl, credentials, {
      dispatcher: this.dispatcher,
      timeoutMs,
      requestId: RequestContext.requestId,
    });
  }

  forget(boardId: string): void {
    this.clients.delete(boardId);
    this.untrack(boardId);
  }

  private untrack(boardId: string): void {
    const origin = this.originByBoard.get(boardId);
    if (origin !== undefined) {
      this.originByBoard.delete(boardId);
      this.boardsByOrigin.get(origin)?.delete(boardId);
    }
  }

  /** Forgets the pin of a board's origin in this process (the row's pin was cleared: trust what it presents next). */
  unpin(baseUrl: string): void {
    this.pins.delete(originOf(baseUrl));
  }

  /** Waits for the pins first seen so far to be stored. */
  async settlePins(): Promise<void> {
    await Promise.all([...this.pinWrites.values()]);
  }

  /** The row is the truth: its pin (set by any process, or cleared by an admin) replaces what this process holds. */
  private syncPin(target: Pick<ClientTarget, 'id' | 'baseUrl' | 'tlsFingerprint'>): void {
    if (!target.baseUrl.startsWith('https:')) {
      return;
    }
    const origin = originOf(target.baseUrl);
    if (this.originByBoard.get(target.id) !== origin) {
      this.untrack(target.id);
      this.originByBoard.set(target.id, origin);
      let ids = this.boardsByOrigin.get(origin);
      if (!ids) {
        ids = new Set();
        this.boardsByOrigin.set(origin, ids);
      }
      ids.add(target.id);
    }
    if (target.tlsFingerprint) {
      this.pins.set(origin, target.tlsFingerprint);
    } else if (!this.pinWrites.has(origin)) {
      this.pins.delete(origin); // cleared by an admin (or never pinned): trust on next first use
    }
  }

  /**
   * Trust on first use, by board id: the certificate is stored on the rows of the boards this process reaches behind
   * the origin, and the connection waits for it. A save that pinned no board (another certificate already pinned
   * there, the rows gone, the database down) refuses the connection: a board must never be reached with its
   * credentials while its row holds no pin (an address spelled differently once left boards unpinned for good).
   * An origin with no board behind it (a scan's probe) is pinned in this process only.
   */
  private pinFirstSeen(origin: string, fingerprint: string): Promise<void> | undefined {
    this.pins.set(origin, fingerprint);
    const ids = [...(this.boardsByOrigin.get(origin) ?? [])];
    if (!ids.length) {
      return undefined;
    }
    const write = this.boards.pinCertificate(ids, fingerprint).then(
      (pinned) => {
        if (!pinned.length) {
          throw new Error(
            `no board behind ${origin} took the pin (another certificate is pinned there, or none is left)`,
          );
        }
      },
      (err: unknown) => {
        throw new Error(`storing the pin failed: ${err instanceof Error ? err.message : String(err)}`);
      },
    );
    const settled = write
      .catch((err: unknown) => {
        if (this.pins.get(origin) === fingerprint) {
          this.pins.delete(origin); // the row is the truth: the next connection pins anew, or meets the row's pin
        }
        this.logger.warn(`pinning the certificate of ${origin}: ${err instanceof Error ? err.message : String(err)}`);
      })
      .finally(() => {
        if (this.pinWrites.get(origin) === settled) {
          this.pinWrites.delete(origin);
        }
      });
    this.pinWrites.set(origin, settled);
    return write;
  }

  /** The board refused these credentials: no further login with them (boards ban after 5 failures). */
  markRefused(target: Pick<ClientTarget, 'id' | 'credentialVersion'>, message: string): void {
    this.refused.set(`${target.id}:${target.credentialVersion}`, message);
  }

  isRefused(target: Pick<ClientTarget, 'id' | 'credentialVersion'>): boolean {
    return this.refusal(target) !== undefined;
  }

  /** What the board said when it refused these credentials (undefined: it has not, as far as this process knows). */
  refusal(target: Pick<ClientTarget, 'id' | 'credentialVersion'>): string | undefined {
    if (this.refused.size === 0) {
      return undefined; // the usual case, asked several times per poll: no key to build
    }
    return this.refused.get(`${target.id}:${target.credentialVersion}`);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.clients.clear();
    // close() lets requests in flight finish; a dispatcher already closed or destroyed needs nothing more (seen when
    // a bench closed the app while polls were still failing against a stopping database).
    // A board call may hold on for minutes (POST /firmware/install): after SHUTDOWN_CALL_GRACE_MS the calls still in
    // flight are aborted, their jobs having been handed back to the queue already (src/jobs/jobs.worker.ts).
    if (!this.dispatcher.closed && !this.dispatcher.destroyed) {
      const closed = this.dispatcher.close().then(() => 'closed' as const);
      const timer = sleep(SHUTDOWN_CALL_GRACE_MS, 'timeout' as const, { ref: false });
      if ((await Promise.race([closed, timer])) === 'timeout' && !this.dispatcher.destroyed) {
        await this.dispatcher.destroy();
      }
    }
  }
}
