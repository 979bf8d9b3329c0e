import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

import type { AccessStore } from '../access/access-store.js';
import type { ServerCertificate } from '../tls/certificate.js';
import { createTlsServer, tlsOptions, updateClientCa } from '../tls/https.js';

import type { Authenticator } from '../auth/authenticator.js';
import type { BoardBackend } from '../backend/backend.js';
import { AgentApp, defaultLog, type AgentOptions } from './agent.js';
import { DEFAULT_CONNECTION_LIMITS, limitConnections, type ConnectionLimits } from '../http/connection-limits.js';
import { closeServer, listen } from '../http/listen.js';
import { sendProblem } from '../http/reply.js';

export interface AgentServerOptions extends AgentOptions {
  backend: BoardBackend;
  auth: Authenticator;
  /**
   * Serve HTTPS with this certificate. With `access`, the client CA in effect is requested from clients (not
   * required) and swapped whenever the access settings are reloaded.
   */
  tls?: { certificate: ServerCertificate; access?: AccessStore };
  /** Connections held open, per client address and in all (default DEFAULT_CONNECTION_LIMITS). */
  connectionLimits?: ConnectionLimits;
}

/**
 * How long an idle keep-alive connection stays open, in ms: beyond the poll interval of a fleet manager (15 s by
 * default, up to a minute), so each poll reuses the connection of the one before. Node's default, 5 s, closed it
 * between every two polls, and a poll over HTTPS then paid a full TLS handshake (the fleet pins each board's
 * certificate, so no session is resumed): about 4 ms of the manager's CPU per poll, against 0.2 ms over a kept
 * connection (docs/benchmarks.md, "Keep-alive"). Clients read it from the `Keep-Alive: timeout=75` header each
 * answer carries. An idle TLS connection holds 34–48 KiB of the board's memory.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 75_000;

export interface AgentServer {
  server: Server;
  app: AgentApp;
  /** Listen; resolves with the bound port (pass 0 for any free port). */
  listen(port: number, host?: string): Promise<number>;
  /** Stop accepting, finish or drop idle connections, then close. The backend is the caller's to stop. */
  close(): Promise<void>;
}

/** A node:http server for one board. */
export function createAgentServer(options: AgentServerOptions): AgentServer {
  const app = new AgentApp(options);
  const listener = (req: IncomingMessage, res: ServerResponse) => void route(app, req, res);
  let server: Server;
  if (options.tls) {
    const { certificate, access } = options.tls;
    server = createTlsServer(tlsOptions(certificate, access?.inEffect.clientCaPem ?? null), listener);
    access?.onChange((effect) =>
      updateClientCa(server as import('node:https').Server, certificate, effect.clientCaPem),
    );
  } else {
    server = createServer(listener);
  }
  // Slow clients must not pin the 128 MB controller's sockets forever.
  server.headersTimeout = 20_000;
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  // No whole-request limit: a node image upload takes minutes. Ordinary bodies get their 60 s in readBody, uploads
  // an idle limit (src/transfers/upload-source.ts).
  server.requestTimeout = 0;
  limitConnections(server, options.connectionLimits ?? DEFAULT_CONNECTION_LIMITS, options.log ?? defaultLog);
  return {
    server,
    app,
    listen: (port, host = '127.0.0.1') => listen(server, port, host),
    close: () => closeServer(server),
  };
}

async function route(app: AgentApp, req: IncomingMessage, res: ServerResponse): Promise<void> {
  let url: URL;
  try {
    url = new URL(req.url ?? '/', 'http://agent.invalid');
  } catch {
    sendProblem(res, 400, 'the request target is not a valid URL');
    return;
  }
  await app.handle(req, res, url.pathname, url.searchParams);
}
