import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import pg from 'pg';
import { ConfigService } from '../config/config.service.js';
import { guardedPgClient, GuardedPgClient } from '../db/pg-client.js';
import { ThrottledLog } from '../logging/throttled-log.js';

/** What the SSE stream carries. `board_id` lets dashboards filter; `data` is small (NOTIFY caps payloads at 8 kB). */
export interface FleetEvent {
  /** Unique, and the same in every process (the SSE `id:`, so a reconnecting client names what it saw last). */
  id: string;
  type: 'alert' | 'board_state' | 'job';
  /** e.g. `firing`, `resolved`, `acknowledged` for alerts; the new state for boards; `completed`/`failed` for jobs. */
  action: string;
  board_id?: string | null;
  severity?: string | null;
  at: string;
  data: Record<string, unknown>;
}

/**
 * Messages between processes that are not fleet events and never reach a stream: a token was revoked, a console
 * session signed out. Every API instance must hear them to close the SSE streams it holds for that credential.
 */
export type ControlMessage = { kind: 'token_revoked'; tokenId: string } | { kind: 'session_ended'; sessionId: string };

const CHANNEL = 'tpfleet_events';
const CONTROL_CHANNEL = 'tpfleet_control';
/** NOTIFY refuses payloads of 8000 bytes or more; larger events travel without their data. */
const MAX_PAYLOAD = 7900;
/** Alert and board events kept for replay to reconnecting clients: the newest this many, for at most this long. */
const REPLAY_MAX_EVENTS = 1000;
const REPLAY_MAX_AGE_MS = 10 * 60_000;
/** Reconnecting the listener: first after this long, doubling up to the maximum while the database stays away. */
const RELISTEN_FIRST_MS = 1000;
const RELISTEN_MAX_MS = 30_000;

/**
 * Fleet events for the SSE stream, across processes. Events are published with Postgres NOTIFY (the database is
 * the one service every deployment has; Redis is optional) and every process LISTENs, so an SSE client connected to
 * any API instance sees alerts raised by any worker. NOTIFY does not cross pglite-socket, so in embedded mode
 * events are delivered in-process only (the embedded deployment runs API and workers in one process anyway).
 */
@Injectable()
export class EventsBus implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(EventsBus.name);
  private readonly local = new EventEmitter();
  private readonly control = new EventEmitter();
  private listener: pg.Client | undefined;
  private notifier: pg.Pool | undefined;
  private closing = false;
  /** The connect-and-LISTEN in progress, so shutdown can wait for it and end what it opened. */
  private attempt: Promise<void> | undefined;
  private relistenMs = RELISTEN_FIRST_MS;
  private relistenTimer: NodeJS.Timeout | undefined;
  private readonly listenerLog = new ThrottledLog(this.logger, 'event listener', 'warn');
  /** Recent alert and board events, oldest first (every process LISTENs, so every process keeps the same ones). */
  private readonly recent: FleetEvent[] = [];

  constructor(private readonly config: ConfigService) {
    this.local.setMaxListeners(0);
    this.control.setMaxListeners(0);
  }

  get crossProcess(): boolean {
    return !this.config.database.embedded;
  }

  async onModuleInit(): Promise<void> {
    if (!this.crossProcess) {
      return;
    }
    this.notifier = new pg.Pool({ connectionString: this.config.databaseUrl, max: 2, Client: guardedPgClient });
    this.notifier.on('error', (err) => this.logger.warn(`event notifier: ${err.message}`));
    await this.listen();
  }

  private listen(): Promise<void> {
    const attempt = this.connectListener();
    this.attempt = attempt;
    return attempt.finally(() => {
      if (this.attempt === attempt) {
        this.attempt = undefined;
      }
    });
  }

  private async connectListener(): Promise<void> {
    const client = new GuardedPgClient({ connectionString: this.config.databaseUrl, connectionTimeoutMillis: 10_000 });
    client.on('notification', (msg) => {
      if (!msg.payload || (msg.channel !== CHANNEL && msg.channel !== CONTROL_CHANNEL)) {
        return;
      }
      try {
        const parsed: unknown = JSON.parse(msg.payload);
        if (msg.channel === CONTROL_CHANNEL) {
          this.control.emit('message', parsed as ControlMessage);
        } else {
          this.deliver(parsed as FleetEvent);
        }
      } catch {
        // a malformed payload is dropped; the stream goes on
      }
    });
    client.on('error', (err) => {
      if (this.listener !== client) {
        return; // still connecting: the attempt fails with this error
      }
      this.listener = undefined;
      client.end().catch(() => undefined);
      this.relisten(err);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      await client.query(`LISTEN ${CONTROL_CHANNEL}`);
    } catch (err) {
      client.end().catch(() => undefined);
      throw err;
    }
    if (this.closing) {
      await client.end().catch(() => undefined);
      return;
    }
    this.listener = client;
    this.relistenMs = RELISTEN_FIRST_MS;
    this.listenerLog.ok();
  }

  /**
   * Reconnects the lost listener, retrying with backoff for as long as the database is away (a failed reconnect used
   * to be the last one: the process stayed deaf to other processes' events until restarted). Logged once, then at
   * most once a minute.
   */
  private relisten(err: unknown): void {
    if (this.closing) {
      return;
    }
    this.listenerLog.fail(err);
    this.relistenTimer = setTimeout(() => {
      this.listen().catch((e: unknown) => {
        this.relistenMs = Math.min(this.relistenMs * 2, RELISTEN_MAX_MS);
        this.relisten(e);
      });
    }, this.relistenMs);
    this.relistenTimer.unref();
  }

  /** Publishes to every process (or only this one in embedded mode). Never throws: events are best effort. */
  async publish(event: Omit<FleetEvent, 'at' | 'id'> & { at?: string }): Promise<void> {
    const full: FleetEvent = {
      ...event,
      id: `${Date.now().toString(36)}-${randomBytes(6).toString('hex')}`,
      at: event.at ?? new Date().toISOString(),
    };
    if (!this.notifier) {
      this.deliver(full);
      return;
    }
    let payload = JSON.stringify(full);
    if (Buffer.byteLength(payload) > MAX_PAYLOAD) {
      payload = JSON.stringify({ ...full, data: { truncated: true } });
    }
    try {
      await this.notifier.query('SELECT pg_notify($1, $2)', [CHANNEL, payload]);
    } catch (err) {
      this.logger.warn(`event not published: ${err instanceof Error ? err.message : String(err)}`);
      this.deliver(full);
    }
  }

  /**
   * Tells every process (this one included) of a revoked credential. A message lost while a process's listener
   * reconnects is caught by the streams' periodic re-check (src/events/events.controller.ts). Never throws.
   */
  async publishControl(message: ControlMessage): Promise<void> {
    if (this.notifier) {
      try {
        await this.notifier.query('SELECT pg_notify($1, $2)', [CONTROL_CHANNEL, JSON.stringify(message)]);
        return;
      } catch (err) {
        this.logger.warn(`control message not published: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    this.control.emit('message', message);
  }

  onControl(handler: (message: ControlMessage) => void): () => void {
    this.control.on('message', handler);
    return () => this.control.off('message', handler);
  }

  /**
   * Delivers to this process's subscribers only (for sources every process already sees, such as queue events).
   * Not kept for replay: queue events are only gathered while a stream is open.
   */
  emitLocal(event: FleetEvent): void {
    this.local.emit('event', event);
  }

  /**
   * The events after `lastId`, oldest first; null when `lastId` is not among the kept ones (older than the replay
   * window, or never seen), so the client must reload the state instead.
   */
  since(lastId: string): FleetEvent[] | null {
    this.prune();
    const index = this.recent.findLastIndex((e) => e.id === lastId);
    return index < 0 ? null : this.recent.slice(index + 1);
  }

  private deliver(event: FleetEvent): void {
    if (typeof event.id === 'string') {
      this.recent.push(event);
      this.prune();
    }
    this.local.emit('event', event);
  }

  private prune(): void {
    const oldest = Date.now() - REPLAY_MAX_AGE_MS;
    while (this.recent.length > REPLAY_MAX_EVENTS || (this.recent.length && Date.parse(this.recent[0]!.at) < oldest)) {
      this.recent.shift();
    }
  }

  subscribe(handler: (event: FleetEvent) => void): () => void {
    this.local.on('event', handler);
    return () => this.local.off('event', handler);
  }

  /** After onModuleDestroy, so the jobs that finish during the shutdown still publish their events. */
  async onApplicationShutdown(): Promise<void> {
    this.closing = true;
    clearTimeout(this.relistenTimer);
    this.local.removeAllListeners();
    this.control.removeAllListeners();
    await this.attempt?.catch(() => undefined); // it ends its own client once it sees `closing`
    await this.listener?.end().catch(() => undefined);
    this.listener = undefined;
    await this.notifier?.end().catch(() => undefined);
  }
}
