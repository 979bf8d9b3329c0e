// Listen and close, shared by a board's server (src/server/server.ts), the rack's control API and the metrics server.
import type { Server } from 'node:http';

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
