import { mkdtemp, rm, stat } from 'node:fs/promises';
import type { Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { TLSSocket } from 'node:tls';

import { Agent, request } from 'undici';

import { loadServerCertificate, type ServerCertificate } from './certificate.js';
import { createTlsServer, proxiedIdentity, tlsOptions, updateClientCa } from './https.js';
import { makeTestPki, type TestPki } from '../../test/support/pki.js';

describe('HTTPS listener and mTLS proxy identity', () => {
  let dir: string;
  let pki: TestPki;
  let certificate: ServerCertificate;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tls-'));
    pki = await makeTestPki(dir);
    certificate = await loadServerCertificate({ stateDir: dir, commonName: 'turingpi' });
    server = createTlsServer(tlsOptions(certificate, pki.caCert), (req, res) => {
      res.end(JSON.stringify({ identity: proxiedIdentity(req, 'x-forwarded-email') ?? null }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const address = server.address();
    base = `https://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await rm(dir, { recursive: true, force: true });
  });

  async function ask(client: { cert?: string; key?: string }, headers: Record<string, string> = {}) {
    const agent = new Agent({
      connect: { ca: certificate.cert, servername: 'localhost', rejectUnauthorized: true, ...client },
    });
    try {
      const res = await request(`${base}/`, { dispatcher: agent, headers });
      return (await res.body.json()) as { identity: string | null };
    } finally {
      await agent.close();
    }
  }

  it('generates a self-signed EC pair once, in the state directory, and reuses it', async () => {
    expect(certificate.generated).toBe(true);
    expect((await stat(join(dir, 'tls/key.pem'))).mode & 0o777).toBe(0o600);
    const again = await loadServerCertificate({ stateDir: dir, commonName: 'turingpi' });
    expect(again.generated).toBe(false);
    expect(again.cert).toBe(certificate.cert);
  });

  it('names the operator of a verified client certificate that carries the identity header', async () => {
    expect(await ask({ cert: pki.clientCert, key: pki.clientKey }, { 'X-Forwarded-Email': 'ops@example.org' })).toEqual(
      {
        identity: 'ops@example.org',
      },
    );
  });

  it('ignores a certificate without the header, and the header without a certificate', async () => {
    expect(await ask({ cert: pki.clientCert, key: pki.clientKey })).toEqual({ identity: null });
    expect(await ask({}, { 'X-Forwarded-Email': 'mallory@example.org' })).toEqual({ identity: null });
  });

  it('drops a connection whose certificate does not verify', async () => {
    await expect(
      ask({ cert: pki.strangerCert, key: pki.strangerKey }, { 'X-Forwarded-Email': 'x@example.org' }),
    ).rejects.toThrow();
  });

  it('closes connections a replaced CA verified; connections without a certificate stay open', async () => {
    // Connections opened without a client certificate (the browser's).
    let plainHandshakes = 0;
    const count = (socket: TLSSocket) => {
      if (Object.keys(socket.getPeerCertificate()).length === 0) {
        plainHandshakes += 1;
      }
    };
    server.on('secureConnection', count);
    const proxy = new Agent({
      connect: { ca: certificate.cert, servername: 'localhost', cert: pki.clientCert, key: pki.clientKey },
    });
    const browser = new Agent({ connect: { ca: certificate.cert, servername: 'localhost' } });
    const ask = async (dispatcher: Agent) => {
      const res = await request(`${base}/`, { dispatcher, headers: { 'X-Forwarded-Email': 'ops@example.org' } });
      return (await res.body.json()) as { identity: string | null };
    };
    try {
      expect(await ask(proxy)).toEqual({ identity: 'ops@example.org' });
      expect(await ask(browser)).toEqual({ identity: null });
      // Reloaded with another CA (PUT /access/client-ca): the proxy's kept-alive connection must not vouch on.
      updateClientCa(server, certificate, pki.strangerCert);
      await expect(ask(proxy)).rejects.toThrow();
      expect(await ask(browser)).toEqual({ identity: null });
      expect(plainHandshakes).toBe(1); // the browser kept its connection
    } finally {
      server.off('secureConnection', count);
      updateClientCa(server, certificate, pki.caCert);
      await Promise.all([proxy.close(), browser.close()]);
    }
  });

  it('stops requesting certificates when the CA is removed (reload)', async () => {
    updateClientCa(server, certificate, null);
    expect(await ask({ cert: pki.clientCert, key: pki.clientKey }, { 'X-Forwarded-Email': 'ops@example.org' })).toEqual(
      { identity: null },
    );
    updateClientCa(server, certificate, pki.caCert);
    expect(await ask({ cert: pki.clientCert, key: pki.clientKey }, { 'X-Forwarded-Email': 'ops@example.org' })).toEqual(
      {
        identity: 'ops@example.org',
      },
    );
  });
});
