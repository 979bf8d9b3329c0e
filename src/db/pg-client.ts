// Every pg connection of the fleet manager is made with this Client class (pools take it as their `Client` option).
import pg from 'pg';

/**
 * A pg.Client that always has an 'error' listener. pg-pool removes its own listener from a client while the client
 * is checked out, and a client whose connection ends then emits 'error' to nobody, which Node turns into an uncaught
 * exception: a database restart (or `DROP DATABASE … WITH (FORCE)`) while any query ran crashed the whole process.
 * The error is not lost: the query in flight fails with it, the client is marked unusable (pools discard it when it
 * is released), and idle clients still report it through the pool's own 'error' event.
 */
export class GuardedPgClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.on('error', () => undefined);
  }
}

/** `Client` for pg.Pool options (the pool's typings only accept pg.Client itself). */
export const guardedPgClient = GuardedPgClient as unknown as typeof pg.Client;

/**
 * Whether an error means the database (or the queue backend) cannot be reached or dropped the connection, as opposed
 * to a refused statement: connection failures, terminated sessions, a server starting up or shutting down.
 */
export function isConnectionLoss(err: unknown): boolean {
  // Not `instanceof Error`: socket errors can come from another realm (Node's own Error under jest's VM modules).
  if (typeof err !== 'object' || err === null || typeof (err as { message?: unknown }).message !== 'string') {
    return false;
  }
  const { code, message } = err as { code?: unknown; message: string };
  if (typeof code === 'string') {
    // SQLSTATE class 08 (connection exception), 57P01–57P03 (admin/crash shutdown, cannot connect now), 53300 (too
    // many connections). A database refusing connections answers 55000, too general a code: matched by its message.
    if (/^08|^57P0[1-3]$|^53300$/.test(code) || SOCKET_CODES.has(code)) {
      return true;
    }
  }
  return CONNECTION_MESSAGES.some((m) => m.test(message));
}

const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
const CONNECTION_MESSAGES = [
  /Connection terminated/i,
  /not queryable/i,
  /timeout exceeded when trying to connect/i,
  /is not currently accepting connections/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
  /terminating connection/i,
  /Can't reach database server/i,
  /Connection is closed/i, // ioredis
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT/,
];
