import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

import type { AccessStore } from '../access/access-store.js';
import type { ServerCertificate } from '../tls/certificate.js';
import { createTlsServer, tlsOptions, updateClientCa } from '../tls/https.js';

import type { Authenticator } from '../auth/authenticator.js';
import type { BoardBackend } from '../backend/backend.js';
import { AgentApp, defaultLog, type AgentOptions } from './agent.js';
import { DEFAULT_CONNECTION_LIMITS, limitConnections, type ConnectionLimits } from '../http/connection-limits.js';
import { closeServer, KEEP_ALIVE_TIMEOUT_MS, listen } from '../http/listen.js';
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

export { KEEP_ALIVE_TIMEOUT_MS } from '../http/listen.js';

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
