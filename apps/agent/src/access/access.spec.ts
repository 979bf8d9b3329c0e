import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { makeTestPki, type TestPki } from '../../test/support/pki.js';
import { AccessStore } from './access-store.js';
import type { AccountStore } from '../auth/account-store.js';
import { changePassword } from './password-change.js';

describe('access settings', () => {
  let dir: string;
  let pki: TestPki;
  let store: AccessStore;
  const actor = { name: 'root', scheme: 'token' as const };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'access-'));
    pki = await makeTestPki(dir);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));
  beforeEach(async () => {
    const root = await mkdtemp(join(dir, 'board-'));
    store = new AccessStore({
      clientCaFile: join(root, 'etc/ssl/certs/bmcd_client_ca.pem'),
      accessFile: join(root, 'etc/bmcd/access.json'),
    });
    await store.load();
  });

  it('reports no CA and the default header on a fresh board', () => {
    expect(store.state(actor)).toEqual({
      actor,
      local_account: 'root',
      client_ca: null,
      identity_header: { name: 'x-forwarded-email', source: 'default' },
      client_ca_pinned_in_config: false,
    });
  });

  it('stores a CA and header, which take effect at the next load (reload)', async () => {
    expect(await store.putClientCa({ pem: pki.caCert, identity_header: 'X-Auth-Request-Email' })).toEqual({
      reload_required: true,
      detail: 'Stored. It takes effect when the daemon reloads.',
    });
    expect(store.state(actor).client_ca).toBeNull();
    await store.load();
    const x509 = new X509Certificate(pki.caCert);
    expect(store.state(actor)).toMatchObject({
      client_ca: {
        subject: 'O=Fleet Lab, CN=Fleet Proxy CA',
        issuer: 'O=Fleet Lab, CN=Fleet Proxy CA',
        not_after: x509.validTo,
        fingerprint: x509.fingerprint256,
        count: 1,
      },
      identity_header: { name: 'x-auth-request-email', source: 'override' },
    });
    expect(store.state(actor).client_ca?.not_after).toMatch(/^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4} GMT$/);
  });

  it.each([
    ['not PEM', '-----BEGIN CERTIFICATE-----\nAAAA', 'not a PEM certificate bundle: a PEM block has no END line'],
    ['no certificates', 'hello', 'the bundle contains no certificates'],
    [
      'garbage DER',
      '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n',
      /^the TLS layer will not accept this bundle: /,
    ],
  ])('refuses %s with 400', async (_name, pem, message) => {
    const err = await store.putClientCa({ pem }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400 });
    if (typeof message === 'string') {
      expect((err as Error).message).toBe(message);
    } else {
      expect((err as Error).message).toMatch(message);
    }
  });

  it('writes the CA before refusing an empty identity header', async () => {
    await expect(store.putClientCa({ pem: pki.caCert, identity_header: '  ' })).rejects.toMatchObject({
      status: 400,
      message: '`identity_header` cannot be empty',
    });
    expect(await readFile(store.paths.clientCaFile, 'utf8')).toContain('BEGIN CERTIFICATE');
  });

  it('deletes the CA (absent counts as success) but not for an mTLS caller', async () => {
    await store.putClientCa({ pem: pki.caCert });
    await expect(store.deleteClientCa('mtls')).rejects.toMatchObject({
      status: 400,
      message: "you are authenticated by this CA; remove it from the board's own interface instead",
    });
    expect(await store.deleteClientCa('basic')).toEqual({
      reload_required: true,
      detail: 'Removed. It takes effect when the daemon reloads.',
    });
    await expect(stat(store.paths.clientCaFile)).rejects.toThrow();
    await expect(store.deleteClientCa('token')).resolves.toMatchObject({ reload_required: true });
  });

  it('refuses both operations when the CA is pinned in the config', async () => {
    const pinned = new AccessStore({
      ...store.paths,
      pinnedClientCa: join(dir, 'ca.pem'),
      configIdentityHeader: 'x-user',
    });
    await pinned.load();
    expect(pinned.state(actor)).toMatchObject({
      client_ca_pinned_in_config: true,
      identity_header: { name: 'x-user', source: 'config' },
    });
    expect(pinned.state(actor).client_ca?.count).toBe(1);
    await expect(pinned.putClientCa({ pem: pki.caCert })).rejects.toMatchObject({
      status: 400,
      message: 'the client CA is pinned in config.yaml; change it there, not here',
    });
    await expect(pinned.deleteClientCa('token')).rejects.toMatchObject({
      status: 400,
      message: 'the client CA is pinned in config.yaml; remove it there, not here',
    });
  });
});

describe('password change', () => {
  let password = 'turing';
  const accounts: AccountStore = {
    verify: async (user, pass) => user === 'root' && pass === password,
    setPassword: async (_user, pass) => {
      password = pass;
    },
  };
  const change = (username: string, current: string, next: string) =>
    changePassword(accounts, { username, current_password: current, new_password: next });

  it.each([
    ['empty username', '', 'turing', 'a-long-new-secret', 400, '`username` is required'],
    ['short password', 'root', 'turing', 'ünïcödé-pw', 400, 'the new password is too short: at least 12 characters'],
    ['same password', 'root', 'twelve-chars', 'twelve-chars', 400, 'the new password is the same as the current one'],
    ['wrong password', 'root', 'wrong', 'a-long-new-secret', 403, 'the current password is wrong'],
    ['unknown account', 'admin', 'turing', 'a-long-new-secret', 403, 'the current password is wrong'],
  ])('refuses %s', async (_name, user, current, next, status, message) => {
    await expect(change(user, current, next)).rejects.toMatchObject({ status, message });
    expect(password).toBe('turing');
  });

  it('counts characters, not bytes, and changes the password', async () => {
    await change('root', 'turing', 'ünïcödé-pw12');
    expect(password).toBe('ünïcödé-pw12');
  });
});
