import type { PGlite } from '@electric-sql/pglite';

/**
 * The query queue of pglite-socket, made safe for several clients that use the extended query protocol.
 *
 * PGlite has ONE session, shared by every socket connection. pglite-socket queues each protocol message on its own
 * and only keeps a connection's messages together inside a transaction. But an extended-protocol exchange (Parse,
 * Bind, Describe, Execute, … up to Sync) also lives in the session — the unnamed statement and portal — so when
 * Prisma's pool, BullMQ's pool and a LISTEN connection talk at once, one client's Bind lands on another's Parse
 * ("bind message supplies 4 parameters, but prepared statement "" requires 7"). This queue gives the session to one
 * connection from its first extended message until its Sync (or simple Query) has run, and for as long as it has a
 * transaction open; everyone else waits their turn.
 *
 * It replaces pglite-socket's internal QueryQueueManager (same three methods), installed by startEmbeddedPostgres.
 */
interface Pending {
  handlerId: number;
  message: Uint8Array;
  onData: (data: Uint8Array) => void;
  resolve: (bytes: number) => void;
  reject: (err: unknown) => void;
}

/** Messages after which a client's exchange is complete: Sync, simple Query, Terminate. */
const ENDS_EXCHANGE = new Set(['S', 'Q', 'X'].map((c) => c.charCodeAt(0)));
const PROTOCOL_V3 = 196608;

function isStartupMessage(message: Uint8Array): boolean {
  // A startup message has no type byte: length (int32) then the protocol version.
  return message.length >= 8 && new DataView(message.buffer, message.byteOffset).getInt32(4) === PROTOCOL_V3;
}

export class PGliteSessionQueue {
  private readonly queue: Pending[] = [];
  private processing = false;
  /** The connection that holds the session (mid-exchange or inside a transaction), or null. */
  private owner: number | null = null;
  private exchangeOpen = false;

  constructor(private readonly db: PGlite) {}

  enqueue(handlerId: number, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<number> {
    return new Promise((resolve, reject) => {
      this.queue.push({ handlerId, message, onData, resolve, reject });
      void this.processQueue();
    });
  }

  private next(): Pending | undefined {
    if (this.owner === null) {
      return this.queue.shift();
    }
    const index = this.queue.findIndex((p) => p.handlerId === this.owner);
    return index === -1 ? undefined : this.queue.splice(index, 1)[0];
  }

  private async processQueue(): Promise<void> {
    if (this.processing) {
      return;
    }
    this.processing = true;
    try {
      for (let item = this.next(); item; item = this.next()) {
        let bytes = 0;
        try {
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(item!.message, {
              onRawData: (data: Uint8Array) => {
                bytes += data.length;
                item!.onData(data);
              },
            }),
          );
        } catch (err) {
          this.release(item.handlerId);
          item.reject(err);
          continue;
        }
        this.track(item);
        item.resolve(bytes);
      }
    } finally {
      this.processing = false;
    }
  }

  private track(item: Pending): void {
    if (!isStartupMessage(item.message)) {
      this.exchangeOpen = !ENDS_EXCHANGE.has(item.message[0]!);
    }
    this.owner = this.exchangeOpen || this.db.isInTransaction() ? item.handlerId : null;
  }

  private release(handlerId: number): void {
    if (this.owner === handlerId) {
      this.owner = null;
      this.exchangeOpen = false;
    }
  }

  getQueueLength(): number {
    return this.queue.length;
  }

  /** A connection went away: drop what it still had queued. */
  clearQueueForHandler(handlerId: number): void {
    for (let i = this.queue.length - 1; i >= 0; i--) {
      if (this.queue[i]!.handlerId === handlerId) {
        this.queue.splice(i, 1)[0]!.reject(new Error('Handler disconnected'));
      }
    }
  }

  /** A connection went away while holding the session: roll its transaction back and let the others in. */
  async clearTransactionIfNeeded(handlerId: number): Promise<void> {
    if (this.owner !== handlerId) {
      return;
    }
    if (this.db.isInTransaction()) {
      await this.db.exec('ROLLBACK');
    }
    this.release(handlerId);
    await this.processQueue();
  }
}
