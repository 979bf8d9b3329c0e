import { EventEmitter } from 'node:events';
import { Readable } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { BoardResponseInvalidError, BoardUnreachableError } from './errors.js';

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
    ...(options.ca !== undefined ? { ca: options.ca } : {}),
  };
  return new Agent({
    connections: options.connections ?? 2,
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 30_000,
    ...(options.maxResponseBytes !== undefined ? { maxResponseSize: options.maxResponseBytes } : {}),
    connect: options.pins ? pinningConnector(connect, options.pins) : connect,
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
  const length = headers['content-length'];
  const declared = Number(Array.isArray(length) ? length[0] : length);
  if (length !== undefined && Number.isFinite(declared) && declared > limitBytes) {
    body.destroy();
    throw new BodyTooLargeError(limitBytes, declared);
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
 * A request's deadline as undici's `signal` (it takes an EventEmitter as well as an AbortSignal). An AbortController
 * per request, an EventTarget, cost 3 % of the fleet worker's CPU at 10,000 boards (docs/benchmarks.md); this is one
 * plain object and one listener.
 */
class Deadline extends EventEmitter {
  aborted = false;

  expire(): void {
    this.aborted = true;
    this.emit('abort');
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
  // A timer we clear when the exchange ends. AbortSignal.timeout cannot be cleared: its timer fires for every request
  // (1,700 a second at 10,000 boards) limits.timeoutMs later and builds a DOMException nobody reads.
  const signal = new Deadline();
  const timer = setTimeout(() => signal.expire(), limits.timeoutMs);
  try {
    const res = await dispatcher.request({
      origin,
      path: request.path,
      method: request.method,
      headers: request.headers,
      body: typeof request.body === 'string' || request.body === undefined ? request.body : Readable.from(request.body),
      headersTimeout: limits.timeoutMs,
      bodyTimeout: limits.bodyTimeoutMs,
      signal,
    });
    const text = await readBodyCapped(res.body, res.headers, limits.maxBodyBytes ?? BOARD_BODY_LIMIT_BYTES);
    return { status: res.statusCode, headers: res.headers, text };
  } catch (err) {
    if (err instanceof BodyTooLargeError) {
      throw new BoardResponseInvalidError(operation, [], null, err.message);
    }
    if (signal.aborted) {
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
