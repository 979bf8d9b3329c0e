import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { createServer, type Server, type ServerOptions } from 'node:https';
import { TLSSocket } from 'node:tls';

import type { ServerCertificate } from './certificate.js';

/**
 * TLS settings of the API listener: HTTP/1.1 only over ALPN, TLS 1.2 or 1.3. With a client CA in effect
 * the server *requests* a client certificate but does not require one (a browser without one still reaches the
 * login); a certificate that is presented but does not verify ends the connection, as a failed handshake would.
 */
export function tlsOptions(certificate: ServerCertificate, clientCaPem: string | null): ServerOptions {
  return {
    cert: certificate.cert,
    key: certificate.key,
    ALPNProtocols: ['http/1.1'],
    minVersion: 'TLSv1.2',
    requestCert: clientCaPem !== null,
    rejectUnauthorized: false,
    ...(clientCaPem !== null ? { ca: clientCaPem } : {}),
    // Session resumption must work while certificates are requested (bmcd 2.36.2): an id context tied to the CA.
    sessionIdContext: createHash('sha256')
      .update(clientCaPem ?? 'no client CA')
      .digest('hex')
      .slice(0, 32),
  };
}

/** Per server: the CA in effect and the open connections whose client certificate it verified. */
const clientCaState = new WeakMap<Server, { pem: string | null; verified: Set<TLSSocket> }>();

/**
 * An HTTPS server that drops connections whose presented client certificate does not verify, and remembers the
 * ones whose certificate did (a CA change closes them).
 */
export function createTlsServer(
  options: ServerOptions,
  listener: (req: IncomingMessage, res: import('node:http').ServerResponse) => void,
): Server {
  const server = createServer(options, listener);
  const state = { pem: typeof options.ca === 'string' ? options.ca : null, verified: new Set<TLSSocket>() };
  clientCaState.set(server, state);
  server.on('secureConnection', (socket: TLSSocket) => {
    if (!presentedCertificate(socket)) {
      return;
    }
    if (!socket.authorized) {
      socket.destroy();
      return;
    }
    state.verified.add(socket);
    socket.once('close', () => state.verified.delete(socket));
  });
  return server;
}

/**
 * Swap the CA list (a daemon reload after PUT/DELETE /access/client-ca); new connections see it. When the CA really
 * changed, connections verified by the old one are closed (issue 14): keep-alive would otherwise let a proxy the
 * operator just stopped trusting go on vouching for identities. Connections without a certificate stay.
 */
export function updateClientCa(server: Server, certificate: ServerCertificate, clientCaPem: string | null): void {
  const options = tlsOptions(certificate, clientCaPem);
  server.setSecureContext(options);
  // requestCert is read from the server per connection; setSecureContext does not touch it.
  (server as Server & { requestCert: boolean }).requestCert = clientCaPem !== null;
  const state = clientCaState.get(server);
  if (state && state.pem !== clientCaPem) {
    state.pem = clientCaPem;
    for (const socket of state.verified) {
      socket.destroy();
    }
    state.verified.clear();
  }
}

function presentedCertificate(socket: TLSSocket): boolean {
  const peer = socket.getPeerCertificate();
  return peer !== null && typeof peer === 'object' && Object.keys(peer).length > 0;
}

/**
 * The operator a verified proxy vouches for: the connection presented a client certificate that
 * verified against the effective CA, and the request carries a non-blank identity header. Otherwise undefined (a
 * certificate without the header falls through to the other ways in; the header without a certificate is ignored).
 */
export function proxiedIdentity(req: IncomingMessage, headerName: string): string | undefined {
  const socket = req.socket;
  if (!(socket instanceof TLSSocket) || !socket.authorized || !presentedCertificate(socket)) {
    return undefined;
  }
  const raw = req.headers[headerName.toLowerCase()];
  const value = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  return value ? value : undefined;
}
