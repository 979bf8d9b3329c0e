// Listen and close, shared by a board's server (src/server/server.ts), the rack's control API and the metrics server.
import type { Server } from 'node:http';

/**
 * How long an idle keep-alive connection stays open, in ms: beyond the poll interval of a fleet manager (15 s by
 * default, up to a minute), so each poll reuses the connection of the one before. Node's default, 5 s, closed it
 * between every two polls, and a poll over HTTPS then paid a full TLS handshake (the fleet pins each board's
 * certificate, so no session is resumed): about 2 ms of the manager's CPU per poll, against 0.2 ms over a kept
 * connection (docs/benchmarks.md, "Keep-alive"). Clients read it from the `Keep-Alive: timeout=75` header each
 * answer carries. An idle TLS connection holds 34–48 KiB of the board's memory. The rack's server keeps idle
 * connections as long, as the boards it simulates would (src/rack/rack.ts).
 */
export const KEEP_ALIVE_TIMEOUT_MS = 75_000;

export function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) {
      return resolve();
    }
    server.close(() => resolve());
    server.closeIdleConnections();
    // In-flight requests get a moment to finish; then they are cut so shutdown cannot hang.
    setTimeout(() => server.closeAllConnections(), 2000).unref();
  });
}
