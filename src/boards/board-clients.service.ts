import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import {
  BoardClient,
  createBoardDispatcher,
  detectDialect,
  type BoardCredentials,
  type DetectedBoard,
  type Dialect,
} from '@tpfleet/board-api/client';
import type { Agent } from 'undici';
import { RequestContext } from '../common/request-context.js';
import { ConfigService } from '../config/config.service.js';
import type { Board } from '../generated/prisma/client.js';
import { BoardsRepository } from './boards.repository.js';
import { SecretBoxService } from './secret-box.service.js';

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
>;

interface Cached {
  key: string;
  credentialVersion: number;
  client: BoardClient;
}

/**
 * The one way the fleet manager reaches a board: a BoardClient per board over ONE shared undici Agent (a
 * keep-alive pool per board origin), cached so the session token from the first login is reused until the board
 * says it expired. The client logs in at most once per call and never loops (boards ban after 5 failures); a
 * board whose login was refused is not polled again until its credentials change (credentialVersion).
 */
@Injectable()
export class BoardClientsService implements OnModuleDestroy {
  private readonly logger = new Logger(BoardClientsService.name);
  private readonly dispatcher: Agent;
  private readonly clients = new Map<string, Cached>();
  /** `<boardId>:<credentialVersion>` whose login the board refused: never sent again from this process. */
  private readonly refused = new Set<string>();
  private readonly timeoutMs: number;
  /** Pinned certificate per https origin, as the boards' rows say (synced at every client use) or first seen. */
  private readonly pins = new Map<string, string>();
  /** Pins being written (trust on first use), by origin; `settlePins` waits for them. */
  private readonly pinWrites = new Map<string, Promise<unknown>>();

  constructor(
    config: ConfigService,
    private readonly secrets: SecretBoxService,
    private readonly boards: BoardsRepository,
  ) {
    this.timeoutMs = config.polling.timeoutMs;
    this.dispatcher = createBoardDispatcher({
      // Boards serve self-signed certificates (facts §6.5): no CA to check them against, so each board's certificate
      // is pinned on first use instead, and a changed one is refused before any credential is sent.
      rejectUnauthorized: false,
      pins: {
        expected: (origin) => this.pins.get(origin),
        seen: (origin, fingerprint) => this.pinFirstSeen(origin, fingerprint),
      },
      connectTimeoutMs: Math.min(this.timeoutMs, 5000),
      // Per origin. A real board gets at most a few requests at once; a simulated rack puts every board behind one
      // origin, so the pool must be as wide as both polling lanes together (a slow lane waiting on update checks
      // must not hold the connections the fast lane needs).
      connections: Math.max(4, config.polling.concurrency + config.polling.slowConcurrency),
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

  client(target: ClientTarget): BoardClient {
    this.syncPin(target);
    const key = `${target.baseUrl}|${target.dialect ?? 'agent'}|${target.daemonVersion ?? ''}|${target.credentialVersion}`;
    const cached = this.clients.get(target.id);
    if (cached?.key === key) {
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
    this.clients.set(target.id, { key, credentialVersion: target.credentialVersion, client });
    return client;
  }

  /** Which daemon the board runs; reuses (and afterwards caches) the board's session token. */
  async detect(target: ClientTarget): Promise<DetectedBoard> {
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
  private syncPin(target: Pick<ClientTarget, 'baseUrl' | 'tlsFingerprint'>): void {
    if (!target.baseUrl.startsWith('https:')) {
      return;
    }
    const origin = originOf(target.baseUrl);
    if (target.tlsFingerprint) {
      this.pins.set(origin, target.tlsFingerprint);
    } else if (!this.pinWrites.has(origin)) {
      this.pins.delete(origin); // cleared by an admin (or never pinned): trust on next first use
    }
  }

  private pinFirstSeen(origin: string, fingerprint: string): void {
    this.pins.set(origin, fingerprint);
    const write = this.boards
      .pinCertificate(origin, fingerprint)
      .catch((err: unknown) =>
        this.logger.warn(`pinning the certificate of ${origin}: ${err instanceof Error ? err.message : String(err)}`),
      )
      .finally(() => this.pinWrites.delete(origin));
    this.pinWrites.set(origin, write);
  }

  /** The board refused these credentials: no further login with them (boards ban after 5 failures). */
  markRefused(target: Pick<ClientTarget, 'id' | 'credentialVersion'>): void {
    this.refused.add(`${target.id}:${target.credentialVersion}`);
  }

  isRefused(target: Pick<ClientTarget, 'id' | 'credentialVersion'>): boolean {
    return this.refused.has(`${target.id}:${target.credentialVersion}`);
  }

  async onModuleDestroy(): Promise<void> {
    this.clients.clear();
    // close() lets requests in flight finish; a dispatcher already closed or destroyed needs nothing more (seen when
    // a bench closed the app while polls were still failing against a stopping database).
    if (!this.dispatcher.closed && !this.dispatcher.destroyed) {
      await this.dispatcher.close();
    }
  }
}
