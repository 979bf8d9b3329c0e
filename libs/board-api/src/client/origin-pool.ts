import { Client, Dispatcher, errors } from 'undici';

/** How many busy clients `freeClient` asks whether their answer just completed, before it opens a connection. */
const JUST_ANSWERED_ASKED = 4;

type Waiting = { opts: Dispatcher.DispatchOptions; handler: Dispatcher.DispatchHandler };

/** The options undici's Agent hands its factory: a Client's, and how many connections one origin may have. */
export type OriginPoolOptions = Client.Options & { connections?: number | null };

/**
 * Up to `connections` keep-alive connections to one origin, as undici's Pool keeps them, for the board dispatcher's
 * Agent (transport.ts). Not undici's Pool, for two costs that grow with every board polled over a kept connection
 * (the Agent keeps an origin's pool for as long as it holds a connection there, and each board is an origin):
 *
 * - A Pool allocates a 2,048-slot queue for requests waiting on a connection when it is built (`FixedQueue`, about
 *   16 KiB of heap, in undici 7 and 8). Requests that find every connection busy wait here in a plain array, which a
 *   board's few requests at once keep short.
 * - A Pool counts a connection busy until a turn of the event loop after its answer, so the request a poll sends next
 *   (`/thermal` after `/health`) opens a second connection, and both are kept: two TLS connections per board on
 *   either side. Here it goes on the connection that just answered (`freeClient`).
 *
 * The Agent's needs are what this class keeps of the Pool: `dispatch` says whether more may be sent without waiting,
 * `drain` says when again, and the clients' `connect`, `disconnect` and `connectionError` are passed on, by which the
 * Agent drops an origin whose connections all closed. docs/benchmarks.md (Keep-alive) has the figures.
 */
export class OriginPool extends Dispatcher {
  private readonly clients: Client[] = [];
  /** Clients whose last dispatch answered false: they take nothing more until their `drain`. */
  private readonly busy = new Set<Client>();
  /** Clients free to take a request, the one freed last at the end. */
  private readonly idle: Client[] = [];
  private readonly waiting: Waiting[] = [];
  private readonly maxConnections: number;
  private readonly clientOptions: Client.Options;
  private needDrain = false;
  private closing: Promise<void> | undefined;
  private whenNoneWaiting: (() => void) | undefined;
  private isDestroyed = false;

  constructor(
    private readonly origin: string | URL,
    { connections, ...clientOptions }: OriginPoolOptions = {},
  ) {
    super();
    this.maxConnections = connections ?? Infinity;
    this.clientOptions = clientOptions;
  }

  get closed(): boolean {
    return this.closing !== undefined;
  }

  get destroyed(): boolean {
    return this.isDestroyed;
  }

  override dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    if (this.isDestroyed || this.closing !== undefined) {
      fail(handler, this.isDestroyed ? new errors.ClientDestroyedError() : new errors.ClientClosedError());
      return false;
    }
    const client = this.freeClient();
    if (client === undefined) {
      this.waiting.push({ opts, handler });
      this.needDrain = true;
    } else if (client.dispatch(opts, handler)) {
      this.busy.delete(client); // it takes more (pipelining): free again
      this.idle.push(client);
    } else {
      this.busy.add(client);
      this.needDrain = this.idle.length === 0 && this.clients.length >= this.maxConnections;
    }
    return !this.needDrain;
  }

  override close(): Promise<void>;
  override close(callback: () => void): void;
  override close(callback?: () => void): Promise<void> | void {
    this.closing ??= (async () => {
      if (this.waiting.length > 0) {
        await new Promise<void>((resolve) => (this.whenNoneWaiting = resolve));
      }
      await Promise.all(this.clients.map((c) => (c.destroyed ? undefined : c.close())));
      this.isDestroyed = true;
    })();
    if (callback === undefined) {
      return this.closing;
    }
    void this.closing.then(() => callback());
  }

  override destroy(err?: Error | null): Promise<void>;
  override destroy(callback: () => void): void;
  override destroy(err: Error | null, callback: () => void): void;
  override destroy(errOrCallback?: Error | null | (() => void), callback?: () => void): Promise<void> | void {
    const done = typeof errOrCallback === 'function' ? errOrCallback : callback;
    const err = (typeof errOrCallback === 'function' ? null : errOrCallback) ?? new errors.ClientDestroyedError();
    this.isDestroyed = true;
    this.closing ??= Promise.resolve();
    for (const { handler } of this.waiting.splice(0)) {
      fail(handler, err);
    }
    this.whenNoneWaiting?.();
    const destroyed = Promise.all(this.clients.map((c) => c.destroy(err))).then(() => undefined);
    if (done === undefined) {
      return destroyed;
    }
    void destroyed.then(() => done());
  }

  /**
   * A client that can take a request now: the idle one used last (so a board's spare connection idles out), one whose
   * answer just completed, or a new one while there are fewer than `connections`.
   */
  private freeClient(): Client | undefined {
    const idle = this.idle.pop();
    if (idle !== undefined) {
      return idle;
    }
    if (this.clients.length >= this.maxConnections) {
      return undefined; // every connection is busy; one that just completed takes the waiting requests at its drain
    }
    // A client whose answer just completed still counts as busy until its `drain`, a turn of the event loop later
    // (undici waits that long before it sends a queued request on the connection). A request sent to it now goes on
    // that connection at once, so a board's poll, one request after another, keeps one connection. Only the clients
    // busy longest are asked (a board has one or two; a rack behind one origin has a hundred busy at once, and each
    // `stats` is an object): those are the ones whose answers are most likely done.
    let asked = 0;
    for (const client of this.busy) {
      const { running, pending } = client.stats;
      if (running === 0 && pending === 0 && !client.destroyed && !client.closed) {
        return client;
      }
      if (++asked === JUST_ANSWERED_ASKED) {
        break;
      }
    }
    const client = new Client(this.origin, this.clientOptions);
    client
      .on('drain', (origin) => this.onDrain(client, origin))
      .on('connect', (origin, targets) => this.emit('connect', origin, [this, ...targets]))
      .on('disconnect', (origin, targets, err) => this.emit('disconnect', origin, [this, ...targets], err))
      .on('connectionError', (origin, targets, err) => this.emit('connectionError', origin, [this, ...targets], err));
    this.clients.push(client);
    return client;
  }

  /** A client takes requests again: the waiting ones first, in order, then whoever is told of the drain. */
  private onDrain(client: Client, origin: URL): void {
    if (!this.busy.delete(client)) {
      return; // idle already
    }
    while (this.waiting.length > 0 && !this.busy.has(client)) {
      const { opts, handler } = this.waiting.shift()!;
      if (!client.dispatch(opts, handler)) {
        this.busy.add(client);
      }
    }
    if (!this.busy.has(client)) {
      this.idle.push(client);
    }
    if (this.waiting.length === 0) {
      this.whenNoneWaiting?.();
      this.whenNoneWaiting = undefined;
    }
    if (this.needDrain && this.waiting.length === 0 && !this.busy.has(client)) {
      this.needDrain = false;
      // With the dispatchers it went through, as undici's own emit it (the Agent spreads them; the typings omit them).
      (this.emit as (event: 'drain', ...args: unknown[]) => boolean)('drain', origin, [this, client]);
    }
  }
}

/** Ends a request that never reached a client, through whichever of undici's two handler shapes it has. */
function fail(handler: Dispatcher.DispatchHandler, err: Error): void {
  if (typeof handler.onError === 'function') {
    handler.onError(err);
  } else {
    handler.onResponseError?.(undefined as unknown as Dispatcher.DispatchController, err);
  }
}
