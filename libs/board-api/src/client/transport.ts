import { Readable } from 'node:stream';
import { createSecureContext, type TLSSocket } from 'node:tls';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { BoardResponseInvalidError, BoardUnreachableError } from './errors.js';
import { OriginPool, type OriginPoolOptions } from './origin-pool.js';

/**
 * Trust on first use for boards' self-signed certificates: the SHA-256 fingerprint a board presented
 * first is pinned, and a later connection to that origin presenting another certificate is refused before anything
 * (a password, a token) is sent. `expected` answers the pin of an origin (`https://host:port`); `seen` hears of a
 * certificate on an origin without a pin, to pin it.
 */
export interface CertificatePins {
  expected(origin: string): string | undefined;
  /**
   * A promise holds the new connection until it settles: nothing is sent on it before the pin is stored, and a
   * rejection (the pin could not be stored) refuses the connection.
   */
  seen(origin: string, fingerprint256: string): void | Promise<void>;
}

/** Error code of a connection refused because the board's certificate is not the pinned one. */
export const CERT_PIN_MISMATCH = 'CERT_PIN_MISMATCH';
/** Error code of a first connection refused because the certificate seen could not be pinned. */
export const CERT_PIN_UNSAVED = 'CERT_PIN_UNSAVED';

export interface DispatcherOptions {
  /** TCP + TLS handshake limit. Default 5000 ms. */
  connectTimeoutMs?: number;
  /** Keep idle sockets this long. Default 30 000 ms (boards drop idle keep-alive sockets themselves). */
  keepAliveTimeoutMs?: number;
  /**
   * Verify the board's certificate. Boards serve a self-signed certificate, so a fleet manager that has
   * no CA for them opts out with `false`. Default true.
   */
  rejectUnauthorized?: boolean;
  /** PEM CA bundle to verify boards against (e.g. the boards' own certificates). */
  ca?: string | string[];
  /** Sockets per board. Default 2: boards run two workers and a fleet manager need not queue behind itself. */
  connections?: number;
  /** Pin each board's certificate on first use (with `rejectUnauthorized: false` for self-signed boards). */
  pins?: CertificatePins;
  /**
   * Largest answer body read; a board sending more is cut off (BoardUnreachableError, code
   * UND_ERR_RES_EXCEEDED_MAX_SIZE, reason `invalid_response`) instead of being buffered. Default: no limit.
   */
  maxResponseBytes?: number;
}

/** One keep-alive undici Agent for one board client. ALPN stays http/1.1: the boards offer nothing else. */
export function createBoardDispatcher(options: DispatcherOptions = {}): Agent {
  const connect = {
    timeout: options.connectTimeoutMs ?? 5_000,
    rejectUnauthorized: options.rejectUnauthorized ?? true,
    // One TLS context for all the dispatcher's connections. Given none, `tls.connect` builds one per connection (an
    // OpenSSL SSL_CTX, held for as long as the connection is open): at a kept connection per board, about 20 KiB of
    // the fleet's memory a board (docs/benchmarks.md, Keep-alive). It holds the CA list (`ca`, else Node's roots) a
    // per-connection one would have; verification and the pin check stay per connection.
    secureContext: createSecureContext(options.ca !== undefined ? { ca: options.ca } : {}),
  };
  return new Agent({
    connections: options.connections ?? 2,
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 30_000,
    ...(options.maxResponseBytes !== undefined ? { maxResponseSize: options.maxResponseBytes } : {}),
    // One connector for every origin (a Client given the options would build one each).
    connect: options.pins ? pinningConnector(connect, options.pins) : buildConnector(connect),
    // A pool per origin without undici Pool's 16 KiB queue: the fleet keeps an origin per board (origin-pool.ts).
    factory: (origin, opts) => new OriginPool(origin, opts as OriginPoolOptions),
  });
}

function pinningConnector(options: buildConnector.BuildOptions, pins: CertificatePins): buildConnector.connector {
  // Full handshakes only: a resumed TLS session need not carry the peer's certificate, and the pin is checked on it.
  const base = buildConnector({ ...options, maxCachedSessions: 0 });
  return (opts, callback) => {
    base(opts, (err, socket) => {
      if (err !== null || opts.protocol !== 'https:') {
        callback(err as Error, socket as null);
        return;
      }
      // As URL's origin spells it (the default port left out), which is how callers name their boards' origins.
      const origin = new URL(`https://${opts.hostname}:${opts.port || '443'}`).origin;
      const presented = (socket as TLSSocket).getPeerCertificate().fingerprint256;
      const pinned = pins.expected(origin);
      if (pinned === undefined) {
        const stored = presented ? pins.seen(origin, presented) : undefined;
        if (stored === undefined) {
          callback(null, socket!);
          return;
        }
        stored.then(
          () => callback(null, socket!),
          (cause: unknown) => {
            socket!.destroy();
            callback(
              Object.assign(
                new Error(
                  `the board's TLS certificate (sha256 ${presented}) could not be pinned, so nothing is sent to it: ` +
                    (cause instanceof Error ? cause.message : String(cause)),
                ),
                { code: CERT_PIN_UNSAVED },
              ),
              null,
            );
          },
        );
      } else if (presented === pinned) {
        callback(null, socket!);
      } else {
        socket!.destroy();
        callback(
          Object.assign(
            new Error(
              `the board's TLS certificate changed: pinned sha256 ${pinned}, presented ${presented ?? 'none'}. ` +
                'If the board was replaced or re-keyed, trust its new certificate (POST /api/v1/boards/{id}/tls/trust).',
            ),
            { code: CERT_PIN_MISMATCH },
          ),
          null,
        );
      }
    });
  };
}

export interface WireRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path with query, starting with `/`. */
  path: string;
  headers: Record<string, string>;
  /** A string, or a stream (an upload): a stream is sent once, never replayed. */
  body?: string | AsyncIterable<Uint8Array>;
}

export interface WireResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export interface SendLimits {
  /** The whole exchange (connect, headers, body). */
  timeoutMs: number;
  /** Idle time between body chunks. */
  bodyTimeoutMs: number;
  /** Largest answer read; beyond it the exchange is cut off. Default BOARD_BODY_LIMIT_BYTES. */
  maxBodyBytes?: number;
}

/**
 * The largest answer read from a board: the biggest real one (the OpenAPI document, a config export) is well below
 * 1 MiB. Without a cap a board (or whoever answers at its address) could make the manager buffer anything: a 400 MB
 * answer took it from 75 to 498 MB.
 */
export const BOARD_BODY_LIMIT_BYTES = 4 * 1024 * 1024;

/** An answer larger than the reader's limit: by its Content-Length, or counted while it streamed in. */
export class BodyTooLargeError extends Error {
  readonly code = 'BODY_TOO_LARGE';
  constructor(
    readonly limitBytes: number,
    readonly declaredBytes: number | null,
  ) {
    super(
      declaredBytes !== null
        ? `the answer declares ${declaredBytes} bytes, more than the ${limitBytes} read; not read`
        : `the answer ran past the ${limitBytes} bytes read; cut off there`,
    );
  }
}

/** The refusal of an answer whose Content-Length is past the limit (before a byte of it is read), or undefined. */
function declaredTooLarge(
  headers: Record<string, string | string[] | undefined>,
  limitBytes: number,
): BodyTooLargeError | undefined {
  const length = headers['content-length'];
  const declared = Number(Array.isArray(length) ? length[0] : length);
  return length !== undefined && Number.isFinite(declared) && declared > limitBytes
    ? new BodyTooLargeError(limitBytes, declared)
    : undefined;
}

/**
 * Reads a response body as text, at most `limitBytes`: a larger Content-Length is refused before a byte is read,
 * and a body without one (or lying about it) is cut off once the running count passes the limit. Either way the
 * body is destroyed, which closes the connection instead of draining it.
 */
export async function readBodyCapped(
  body: Dispatcher.ResponseData['body'],
  headers: Record<string, string | string[] | undefined>,
  limitBytes: number,
): Promise<string> {
  const tooLarge = declaredTooLarge(headers, limitBytes);
  if (tooLarge) {
    body.destroy();
    throw tooLarge;
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > limitBytes) {
      body.destroy();
      throw new BodyTooLargeError(limitBytes, null);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Reads one answer for `send` through undici's handler interface: the chunks go straight into an array. The promise
 * API (`dispatcher.request`) builds a Readable stream, its async iterator and an AsyncResource for every answer,
 * which a board's few hundred bytes of JSON do not need; at 10,000 boards that is over a thousand answers a second
 * (docs/benchmarks.md). Cut short by us (the deadline, the size cap), the exchange is aborted, which closes the
 * connection instead of draining it, and the caller hears at once.
 */
class AnswerReader implements Dispatcher.DispatchHandler {
  /** Set when the deadline passed: the failure is a timeout, whatever undici reports. */
  expired = false;
  private controller: Dispatcher.DispatchController | undefined;
  private cutShort: Error | undefined;
  private settled = false;
  private status = 0;
  private headers: Record<string, string | string[] | undefined> = {};
  private chunks: Buffer[] = [];
  private bytes = 0;

  constructor(
    private readonly limitBytes: number,
    private readonly resolve: (res: WireResponse) => void,
    private readonly reject: (err: unknown) => void,
  ) {}

  /** The deadline passed: abort the exchange (once it has started, if it has not yet) and fail now. */
  expire(): void {
    this.expired = true;
    this.cut(new Error('the deadline passed'));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.cutShort !== undefined) {
      controller.abort(this.cutShort);
    }
    // Started again (undici retries a request whose pipelined predecessor failed): nothing read so far counts.
    this.chunks = [];
    this.bytes = 0;
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    if (statusCode < 200) {
      return; // an informational answer (100 Continue); the real one follows
    }
    this.status = statusCode;
    this.headers = headers;
    const tooLarge = declaredTooLarge(headers, this.limitBytes);
    if (tooLarge) {
      this.cut(tooLarge);
    }
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.bytes += chunk.length;
    if (this.bytes > this.limitBytes) {
      this.cut(new BodyTooLargeError(this.limitBytes, null));
      return;
    }
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    const { chunks } = this;
    const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
    this.settle(() => this.resolve({ status: this.status, headers: this.headers, text }));
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.settle(() => this.reject(this.cutShort ?? err));
  }

  private cut(reason: Error): void {
    this.cutShort ??= reason;
    this.controller?.abort(reason);
    this.settle(() => this.reject(reason));
  }

  private settle(fn: () => void): void {
    if (!this.settled) {
      this.settled = true;
      fn();
    }
  }
}

/** Sends one request and reads the whole body; network failures become BoardUnreachableError. */
export async function send(
  dispatcher: Dispatcher,
  origin: string,
  request: WireRequest,
  limits: SendLimits,
  operation: string,
): Promise<WireResponse> {
  const body =
    typeof request.body === 'string' || request.body === undefined ? request.body : Readable.from(request.body);
  let reader: AnswerReader | undefined;
  // A timer we clear when the exchange ends. AbortSignal.timeout cannot be cleared: its timer fires for every request
  // (1,700 a second at 10,000 boards) limits.timeoutMs later and builds a DOMException nobody reads.
  let timer: NodeJS.Timeout | undefined;
  try {
    return await new Promise<WireResponse>((resolve, reject) => {
      reader = new AnswerReader(limits.maxBodyBytes ?? BOARD_BODY_LIMIT_BYTES, resolve, reject);
      timer = setTimeout(() => reader!.expire(), limits.timeoutMs);
      dispatcher.dispatch(
        {
          origin,
          path: request.path,
          method: request.method,
          headers: request.headers,
          body,
          headersTimeout: limits.timeoutMs,
          bodyTimeout: limits.bodyTimeoutMs,
        },
        reader,
      );
    });
  } catch (err) {
    if (body instanceof Readable) {
      body.destroy();
    }
    if (err instanceof BodyTooLargeError) {
      throw new BoardResponseInvalidError(operation, [], null, err.message);
    }
    if (reader?.expired) {
      throw new BoardUnreachableError(operation, 'ETIMEDOUT', `no answer within ${limits.timeoutMs} ms`, err);
    }
    throw new BoardUnreachableError(operation, networkCode(err), errorMessage(err), err);
  } finally {
    clearTimeout(timer);
  }
}

interface ErrorLike {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  cause?: unknown;
  errors?: unknown;
}

/** Duck-typed: errors from Node internals may come from another realm (jest's VM), so `instanceof Error` fails. */
function asErrorLike(v: unknown): ErrorLike | undefined {
  return typeof v === 'object' && v !== null ? (v as ErrorLike) : undefined;
}

function networkCode(err: unknown): string {
  // undici wraps the socket error; the useful code (ECONNREFUSED, ENOTFOUND, CERT_…) may sit on a cause, or on the
  // first error of an AggregateError (one per address tried).
  let current = asErrorLike(err);
  for (let depth = 0; depth < 5 && current; depth++) {
    if (typeof current.code === 'string' && current.code !== 'UND_ERR_SOCKET') {
      return current.code;
    }
    current =
      asErrorLike(current.cause) ?? (Array.isArray(current.errors) ? asErrorLike(current.errors[0]) : undefined);
  }
  const top = asErrorLike(err);
  if (typeof top?.code === 'string') {
    return top.code;
  }
  return typeof top?.name === 'string' ? top.name : 'UNKNOWN';
}

function errorMessage(err: unknown): string {
  const e = asErrorLike(err);
  if (!e) {
    return String(err);
  }
  const cause = asErrorLike(e.cause);
  const own = typeof e.message === 'string' && e.message ? e.message : String(e.name ?? 'error');
  return cause && typeof cause.message === 'string' && cause.message ? `${own}: ${cause.message}` : own;
}

export function header(res: WireResponse, name: string): string | undefined {
  const v = res.headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}
