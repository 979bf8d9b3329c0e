// The fleet's board dispatcher as createBoardDispatcher built it before 2026-12-03, for the keep-alive bench's
// baseline: the same Agent, per-origin pool and certificate pin check, but no TLS context of its own, so `tls.connect`
// builds one for every connection (libs/board-api/src/client/transport.ts has why it now shares one).
import { Agent, buildConnector } from 'undici';
// Not part of the package's interface; the built file, as the fleet's dispatcher uses it.
import { OriginPool } from '../../libs/board-api/dist/client/origin-pool.js';

/** `pins`: as the fleet's (`expected(origin)`, `seen(origin, fingerprint)`); a changed certificate is refused. */
export function dispatcherWithContextPerConnection({ pins, connections }) {
  const connect = buildConnector({ timeout: 5000, rejectUnauthorized: false, maxCachedSessions: 0 });
  const pinning = (opts, callback) =>
    connect(opts, async (err, socket) => {
      if (err !== null) {
        callback(err, null);
        return;
      }
      const origin = new URL(`https://${opts.hostname}:${opts.port || '443'}`).origin;
      const presented = socket.getPeerCertificate().fingerprint256;
      const pinned = pins.expected(origin);
      if (pinned === undefined) {
        await pins.seen(origin, presented);
      } else if (pinned !== presented) {
        socket.destroy();
        callback(new Error(`certificate changed on ${origin}`), null);
        return;
      }
      callback(null, socket);
    });
  return new Agent({
    connections,
    keepAliveTimeout: 30_000,
    connect: pinning,
    factory: (origin, opts) => new OriginPool(origin, opts),
  });
}
