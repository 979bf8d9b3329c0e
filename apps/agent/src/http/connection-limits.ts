// How many connections a board's server holds open: a bound per client address and one in all, so a host on the
// board's network cannot fill the 128 MB controller with idle connections (each TLS one holds 34–48 KiB, and the
// server keeps an idle one 75 s: KEEP_ALIVE_TIMEOUT_MS in src/http/listen.ts).
import type { Server } from 'node:net';

export interface ConnectionLimits {
  /**
   * Open connections from one address. A browser opens up to 6 to a host, `tpi` one, a fleet manager's process one
   * per board it polls and a few more while it acts on the board; behind one address (NAT) there may be several.
   */
  perAddress: number;
  /** Open connections in all (Node's own `maxConnections`). */
  total: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = { perAddress: 32, total: 512 };

/** A refusal logged at most this often (a flood must not flood the log too), with the count since the last one. */
const REFUSAL_LOG_INTERVAL_MS = 60_000;

/**
 * Closes a connection beyond either limit as soon as it is accepted, before a TLS handshake or a byte is read: there
 * is nothing to answer on it yet (an HTTP refusal would need the handshake the limit saves). Connections already open
 * are not touched, so a fleet manager's kept connection goes on polling through a flood from other hosts.
 */
export function limitConnections(
  server: Server,
  limits: ConnectionLimits,
  log: (event: Record<string, unknown>) => void,
): void {
  server.maxConnections = limits.total;
  const open = new Map<string, number>();
  let refused = 0;
  let loggedAt = -Infinity;
  server.on('drop', (data?: { remoteAddress?: string }) => refusal(data?.remoteAddress, 'total'));
  server.prependListener('connection', (socket) => {
    const address = socket.remoteAddress ?? '';
    const count = open.get(address) ?? 0;
    if (count >= limits.perAddress) {
      socket.destroy();
      refusal(address, 'address');
      return;
    }
    open.set(address, count + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left === 0) {
        open.delete(address);
      } else {
        open.set(address, left);
      }
    });
  });

  function refusal(address: string | undefined, limit: 'address' | 'total'): void {
    refused++;
    const now = performance.now();
    if (now - loggedAt < REFUSAL_LOG_INTERVAL_MS) {
      return;
    }
    log({
      level: 'warn',
      msg:
        limit === 'address'
          ? `connection from ${address} closed: ${limits.perAddress} already open from that address`
          : `connection from ${address ?? 'an unknown address'} closed: ${limits.total} connections already open`,
      refused_since_last_line: refused,
    });
    refused = 0;
    loggedAt = now;
  }
}
