import type { z } from 'zod';

/** Short machine reason for any failure of a board call (logs, metrics labels, job results). */
export type BoardErrorReason =
  | 'unreachable'
  | 'timeout'
  | 'certificate'
  | 'auth'
  | 'banned'
  | 'http_4xx'
  | 'http_5xx'
  | 'invalid_response'
  | 'unsupported';

/** Base of every error the client throws. */
export abstract class BoardClientError extends Error {
  abstract readonly reason: BoardErrorReason;
  /** Operation id, or `authenticate` / `detect`. */
  readonly operation: string;
  constructor(operation: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.operation = operation;
    this.name = new.target.name;
  }
}

/** The board refused: a non-2xx status with the problem detail or the legacy message. */
export class BoardHttpError extends BoardClientError {
  readonly reason: BoardErrorReason;
  constructor(
    operation: string,
    readonly status: number,
    /** problem+json `detail`, legacy `result`, or the plain-text body. */
    readonly detail: string,
    readonly title?: string,
  ) {
    super(operation, `${operation}: ${status}${detail ? ` ${detail}` : title ? ` ${title}` : ''}`);
    this.reason = status >= 500 ? 'http_5xx' : 'http_4xx';
  }
}

/** A transfer (node image, firmware upload) the board accepted ended in its `Error` state. */
export class BoardTransferError extends BoardClientError {
  readonly reason: BoardErrorReason = 'http_5xx';
  constructor(
    operation: string,
    /** The board's own message (`sha256 checksum failed…`, `crc error…`, `transfer cancelled`). */
    readonly detail: string,
  ) {
    super(operation, `${operation}: the board's transfer failed: ${detail}`);
  }
}

/** The credentials are not accepted: 401/403 from login, or a 401 that a fresh login did not cure. */
export class BoardAuthError extends BoardClientError {
  readonly reason = 'auth' as const;
  constructor(
    operation: string,
    readonly status: number,
    readonly detail: string,
  ) {
    super(operation, `${operation}: credentials not accepted (${status}${detail ? ` ${detail}` : ''})`);
  }
}

/** The board banned this address after repeated authentication failures (429 + Retry-After). */
export class BoardBannedError extends BoardClientError {
  readonly reason = 'banned' as const;
  constructor(
    operation: string,
    /** Seconds until the ban lapses (Retry-After, at least 1), or null when the header was missing. */
    readonly retryAfterSeconds: number | null,
    readonly detail: string,
  ) {
    super(
      operation,
      `${operation}: address banned by the board${retryAfterSeconds !== null ? ` for ${retryAfterSeconds} s` : ''}`,
    );
  }
}

/** No answer: refused or reset connection, DNS failure, TLS failure or a timeout. */
export class BoardUnreachableError extends BoardClientError {
  readonly reason: BoardErrorReason;
  constructor(
    operation: string,
    /** The cause's code, e.g. `ECONNREFUSED`, `ENOTFOUND`, `UND_ERR_CONNECT_TIMEOUT`, `ETIMEDOUT`. */
    readonly code: string,
    message: string,
    cause?: unknown,
  ) {
    super(operation, `${operation}: board unreachable (${code}): ${message}`, { cause });
    this.reason = TIMEOUT_CODES.has(code)
      ? 'timeout'
      : code === 'CERT_PIN_MISMATCH'
        ? 'certificate'
        : code === TOO_LARGE_CODE
          ? 'invalid_response' // it answered, with more than any record of the contract
          : 'unreachable';
  }
}

/** undici's code for an answer over the dispatcher's maxResponseSize. */
const TOO_LARGE_CODE = 'UND_ERR_RES_EXCEEDED_MAX_SIZE';

const TIMEOUT_CODES = new Set([
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'TimeoutError',
]);

/** The answer does not match the contract; the message lists the zod issues. */
export class BoardResponseInvalidError extends BoardClientError {
  readonly reason = 'invalid_response' as const;
  constructor(
    operation: string,
    readonly issues: readonly z.core.$ZodIssue[],
    /** What was received (parsed JSON or text), for diagnosis. */
    readonly body: unknown,
    summary?: string,
  ) {
    super(
      operation,
      `${operation}: response does not match the contract: ${
        summary ?? issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`).join('; ')
      }`,
    );
  }
}

/** The board (by dialect and version) does not offer the operation; raised before anything is sent. */
export class BoardCapabilityError extends BoardClientError {
  readonly reason = 'unsupported' as const;
  constructor(
    operation: string,
    readonly dialect: string,
    readonly daemonVersion: string | undefined,
    detail?: string,
  ) {
    super(
      operation,
      detail ?? `${operation} is not offered by the ${dialect} daemon${daemonVersion ? ` ${daemonVersion}` : ''}`,
    );
  }
}

const NETWORK_TIMEOUT_NAMES = new Set(['TimeoutError', 'AbortError']);

/** Maps any error (ours, undici's or Node's) to a short machine reason. */
export function errorReason(err: unknown): BoardErrorReason {
  if (err instanceof BoardClientError) {
    return err.reason;
  }
  // Duck-typed: errors from Node internals may come from another realm, where `instanceof Error` fails.
  if (typeof err === 'object' && err !== null) {
    const { code, name } = err as { code?: unknown; name?: unknown };
    if (typeof code === 'string' && TIMEOUT_CODES.has(code)) {
      return 'timeout';
    }
    if (typeof name === 'string' && NETWORK_TIMEOUT_NAMES.has(name)) {
      return 'timeout';
    }
    if (name === 'ZodError') {
      return 'invalid_response';
    }
  }
  // Anything else that escaped a call means we got no usable answer from the board.
  return 'unreachable';
}
