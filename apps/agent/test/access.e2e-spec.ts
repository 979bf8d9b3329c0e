import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Agent, request } from 'undici';

import { accountsOf, Authenticator } from '../src/auth/authenticator.js';
import { createSimulatedBackend } from '../src/backend-factory.js';
import { createAgentServer, type AgentServer } from '../src/server/server.js';
import {
  createSimulatedServices,
  type ServiceOptions,
  type SimulatedServices,
} from '../src/services/board-services.js';
import { AgentHarness } from './support/harness.js';
import { loadServerCertificate, type ServerCertificate } from '../src/tls/certificate.js';
import { makeTestPki, type TestPki } from './support/pki.js';

let pkiDir: string;
let pki: TestPki;
beforeAll(async () => {
  pkiDir = await mkdtemp(join(tmpdir(), 'access-pki-'));
  pki = await makeTestPki(pkiDir);
});
afterAll(() => rm(pkiDir, { recursive: true, force: true }));

describe('password change over HTTP', () => {
  let h: AgentHarness;
  beforeEach(async () => {
    h = await AgentHarness.start();
    await h.login();
  });
  afterEach(() => h.close());

  it('changes the password; the old bearer token is revoked, Basic and login use the new one', async () => {
    const before = h.token!;
    const answer = await h.request('POST', '/api/bmc/access/password', {
      body: { username: 'root', current_password: 'turing', new_password: 'correct-horse-battery' },
    });
    expect({ status: answer.status, text: answer.text }).toEqual({ status: 204, text: '' });
    // Sessions end with the password that opened them (issue 14; the daemon keeps them).
    const revoked = await h.request('GET', '/api/bmc/about', { headers: { Authorization: `Bearer ${before}` } });
    expect([revoked.status, revoked.text]).toEqual([401, 'token revoked: the password of root changed; log in again']);
    const basic = (password: string) => ({
      Authorization: `Basic ${Buffer.from(`root:${password}`).toString('base64')}`,
    });
    expect((await h.request('GET', '/api/bmc/about', { headers: basic('turing') })).status).toBe(401);
    expect((await h.request('GET', '/api/bmc/about', { headers: basic('correct-horse-battery') })).status).toBe(200);
    h.password = 'correct-horse-battery';
    await h.login();
    const audit = await readFile(join(h.dir, 'audit.log'), 'utf8');
    expect(audit).toMatch(/postAccessPassword by root \(token\) from 127\.0\.0\.1: ok/);
    expect(audit).not.toContain('correct-horse-battery');
    expect(audit).not.toContain('turing');
  });

  it('names the caller’s X-Request-Id in the audit line, and drops one that could forge a line', async () => {
    await h.request('POST', '/api/bmc/hostname', {
      body: { name: 'tp-audit' },
      headers: { 'X-Request-Id': 'fleet-job:42' },
    });
    await h.request('POST', '/api/bmc/hostname', {
      body: { name: 'tp-audit2' },
      headers: { 'X-Request-Id': 'x: ok; forged by admin' },
    });
    // Audit lines are appended without holding up the answer: wait for both.
    let audit: string[] = [];
    for (let i = 0; i < 50 && audit.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 20));
      audit = (await readFile(join(h.dir, 'audit.log'), 'utf8')).split('\n').filter((l) => l.includes('hostname by'));
    }
    expect(audit.at(-2)).toMatch(/ by root \(token\) from 127\.0\.0\.1 \[request fleet-job:42\]: ok$/);
    expect(audit.at(-1)).toMatch(/ by root \(token\) from 127\.0\.0\.1: ok$/);
  });

  it('reports the caller and the access settings, and needs a reload for a new CA', async () => {
    expect((await h.request('GET', '/api/bmc/access')).json).toEqual({
      actor: { name: 'root', scheme: 'token' },
      local_account: 'root',
      client_ca: null,
      identity_header: { name: 'x-forwarded-email', source: 'default' },
      client_ca_pinned_in_config: false,
    });
    const put = await h.request('PUT', '/api/bmc/access/client-ca', {
      body: { pem: pki.caCert, identity_header: 'X-Auth-Request-Email' },
    });
    expect({ status: put.status, json: put.json }).toEqual({
      status: 202,
      json: { reload_required: true, detail: 'Stored. It takes effect when the daemon reloads.' },
    });
    expect(((await h.request('GET', '/api/bmc/access')).json as { client_ca: unknown }).client_ca).toBeNull();
    expect((await h.request('POST', '/api/bmc/reload')).status).toBe(204);
    await h.settle();
    expect((await h.request('GET', '/api/bmc/access')).json).toMatchObject({
      client_ca: { subject: 'O=Fleet Lab, CN=Fleet Proxy CA', count: 1 },
      identity_header: { name: 'x-auth-request-email', source: 'override' },
    });
    const del = await h.request('DELETE', '/api/bmc/access/client-ca');
    expect({ status: del.status, json: del.json }).toEqual({
      status: 202,
      json: { reload_required: true, detail: 'Removed. It takes effect when the daemon reloads.' },
    });
    const audit = await readFile(join(h.dir, 'audit.log'), 'utf8');
    expect(audit).toContain('putAccessClientCa by root (token) from 127.0.0.1: ok');
    expect(audit).not.toContain('BEGIN CERTIFICATE');
  });

  it('refuses CA changes when the CA is pinned in the configuration', async () => {
    const pinnedFile = join(pkiDir, 'ca.pem');
    const pinned = await AgentHarness.start({ services: { pinnedClientCa: pinnedFile } });
    try {
      await pinned.login();
      expect(
        ((await pinned.request('GET', '/api/bmc/access')).json as { client_ca_pinned_in_config: boolean })
          .client_ca_pinned_in_config,
      ).toBe(true);
      const put = await pinned.request('PUT', '/api/bmc/access/client-ca', { body: { pem: pki.caCert } });
      expect({ status: put.status, detail: (put.json as { detail: string }).detail }).toEqual({
        status: 400,
        detail: 'the client CA is pinned in config.yaml; change it there, not here',
      });
      const del = await pinned.request('DELETE', '/api/bmc/access/client-ca');
      expect({ status: del.status, detail: (del.json as { detail: string }).detail }).toEqual({
        status: 400,
        detail: 'the client CA is pinned in config.yaml; remove it there, not here',
      });
    } finally {
      await pinned.close();
    }
  });
});

describe('HTTPS with a client CA: a verified proxy names the operator (scheme mtls)', () => {
  let dir: string;
  let services: SimulatedServices;
  let agent: AgentServer;
  let certificate: ServerCertificate;
  let base: string;
  let backend: ReturnType<typeof createSimulatedBackend>;

  async function start(options: ServiceOptions = {}) {
    backend = createSimulatedBackend(dir, { timeScale: 0.01 });
    await backend.start();
    let s: SimulatedServices | undefined;
    const auth = await Authenticator.create({
      password: 'turing',
      proxyIdentityHeader: () => (s?.access.inEffect.clientCaPem ? s.access.inEffect.identityHeader.name : undefined),
    });
    s = services = await createSimulatedServices(backend, dir, accountsOf(auth), {
      auditFile: join(dir, 'audit.log'),
      primeCatalogue: false,
      ...options,
    });
    certificate = await loadServerCertificate({ stateDir: dir, commonName: 'turingpi' });
    agent = createAgentServer({
      backend,
      auth,
      services,
      validateResponses: true,
      tls: { certificate, access: services.access },
    });
    base = `https://127.0.0.1:${await agent.listen(0, '127.0.0.1')}`;
  }

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mtls-'));
  });
  afterEach(async () => {
    await agent.close();
    await services.stop();
    await backend.stop();
    await rm(dir, { recursive: true, force: true });
  });

  async function call(
    method: string,
    path: string,
    client: { cert?: string; key?: string } = {},
    headers: Record<string, string> = {},
  ) {
    const dispatcher = new Agent({ connect: { ca: certificate.cert, servername: 'localhost', ...client } });
    try {
      const res = await request(`${base}${path}`, { method: method as 'GET', dispatcher, headers });
      const text = await res.body.text();
      const isJson = String(res.headers['content-type'] ?? '').includes('json');
      return {
        status: res.statusCode,
        json: isJson && text ? (JSON.parse(text) as Record<string, unknown>) : undefined,
        text,
      };
    } finally {
      await dispatcher.close();
    }
  }

  it('admits a proxied operator, refuses the header without a certificate, and keeps an mTLS caller from deleting the CA', async () => {
    await start();
    const basic = {
      Authorization: `Basic ${Buffer.from('root:turing').toString('base64')}`,
      'Content-Type': 'application/json',
    };
    // Install the CA over HTTPS with a password, then reload so it takes effect.
    const dispatcher = new Agent({ connect: { ca: certificate.cert, servername: 'localhost' } });
    const put = await request(`${base}/api/bmc/access/client-ca`, {
      method: 'PUT',
      dispatcher,
      headers: basic,
      body: JSON.stringify({ pem: pki.caCert }),
    });
    expect(put.statusCode).toBe(202);
    await put.body.dump();
    const reload = await request(`${base}/api/bmc/reload`, { method: 'POST', dispatcher, headers: basic });
    expect(reload.statusCode).toBe(204);
    await reload.body.dump();
    await dispatcher.close();
    while (backend.isBooting()) {
      await new Promise((r) => setTimeout(r, 10));
    }
    await services.lastBoot();

    const client = { cert: pki.clientCert, key: pki.clientKey };
    const proxied = await call('GET', '/api/bmc/access', client, { 'X-Forwarded-Email': 'ops@example.org' });
    expect(proxied.status).toBe(200);
    expect(proxied.json).toMatchObject({ actor: { name: 'ops@example.org', scheme: 'mtls' }, client_ca: { count: 1 } });

    expect((await call('GET', '/api/bmc/access', {}, { 'X-Forwarded-Email': 'ops@example.org' })).status).toBe(401);
    expect((await call('GET', '/api/bmc/access', client)).status).toBe(401); // certificate without the header
    await expect(
      call(
        'GET',
        '/api/bmc/access',
        { cert: pki.strangerCert, key: pki.strangerKey },
        { 'X-Forwarded-Email': 'x@example.org' },
      ),
    ).rejects.toThrow();

    const del = await call('DELETE', '/api/bmc/access/client-ca', client, { 'X-Forwarded-Email': 'ops@example.org' });
    expect({ status: del.status, detail: del.json?.['detail'] }).toEqual({
      status: 400,
      detail: "you are authenticated by this CA; remove it from the board's own interface instead",
    });
    const audit = await readFile(join(dir, 'audit.log'), 'utf8');
    expect(audit).toContain(
      "deleteAccessClientCa by ops@example.org (mtls) from 127.0.0.1: 400 you are authenticated by this CA; remove it from the board's own interface instead",
    );
  });
});
