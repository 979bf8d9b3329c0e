import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { REALM } from './authenticator.js';
import { TokenStore } from './tokens.js';
import { AgentHarness, PASSWORD } from '../../test/support/harness.js';

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const BAN_TEXT = (duration: string) =>
  `Exceeded allowed authentication attempts. Access blocked for ${duration}. The credentials were not checked, so this says nothing about whether they are correct.`;

describe('authentication', () => {
  let h: AgentHarness;
  let now = 1_000_000;
  beforeEach(async () => {
    now = 1_000_000;
    h = await AgentHarness.start({ now: () => now, tokenExpirySeconds: 60 });
  });
  afterEach(() => h.close());

  it('logs in with JSON credentials and returns the token in the body and X-Auth-Token', async () => {
    const answer = await h.request('POST', '/api/bmc/authenticate', {
      anonymous: true,
      body: { username: 'root', password: PASSWORD },
    });
    expect(answer.status).toBe(200);
    const token = answer.headers.get('x-auth-token');
    expect(token).toMatch(/^[A-Za-z0-9]{64}$/);
    expect(answer.json).toEqual({ id: token, name: 'User Session', description: 'User Session', username: 'root' });
    const about = await h.request('GET', '/api/bmc/about', { headers: { Authorization: `Bearer ${token}` } });
    expect(about.status).toBe(200);
  });

  it('refuses wrong and malformed credentials with 403 plain text', async () => {
    const wrong = await h.request('POST', '/api/bmc/authenticate', {
      anonymous: true,
      body: { username: 'root', password: 'nope' },
    });
    expect([wrong.status, wrong.text]).toEqual([403, 'credentials incorrect']);
    const user = await h.request('POST', '/api/bmc/authenticate', {
      anonymous: true,
      body: { username: 'admin', password: PASSWORD },
    });
    expect([user.status, user.text]).toEqual([403, 'credentials incorrect']);
    const malformed = await h.request('POST', '/api/bmc/authenticate', {
      anonymous: true,
      body: '{nope',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(malformed.status).toBe(403);
    expect(malformed.text).toMatch(/^error trying to parse credentials: /);
  });

  it('accepts HTTP Basic on every request', async () => {
    const ok = await h.request('GET', '/api/bmc/power', {
      anonymous: true,
      headers: { Authorization: basic('root', PASSWORD) },
    });
    expect(ok.status).toBe(200);
  });

  it('answers 401 with the daemon challenges', async () => {
    const none = await h.request('GET', '/api/bmc/power', { anonymous: true });
    expect([none.status, none.text, none.headers.get('www-authenticate')]).toEqual([
      401,
      'no authorization header provided',
      `Basic realm="${REALM}"`,
    ]);
    const badBasic = await h.request('GET', '/api/bmc/power', {
      anonymous: true,
      headers: { Authorization: basic('root', 'x') },
    });
    expect([badBasic.status, badBasic.text, badBasic.headers.get('www-authenticate')]).toEqual([
      401,
      'credentials incorrect',
      `Basic realm="${REALM}"`,
    ]);
    const unknown = await h.request('GET', '/api/bmc/power', {
      anonymous: true,
      headers: { Authorization: 'Bearer abc' },
    });
    expect(unknown.status).toBe(401);
    expect(unknown.text).toBe('token abc is not registered');
    expect(unknown.headers.get('www-authenticate')).toBe(
      `Bearer realm="${REALM}" error="invalid_token" error_description="token abc is not registered"`,
    );
    const digest = await h.request('GET', '/api/bmc/power', {
      anonymous: true,
      headers: { Authorization: 'Digest x=1' },
    });
    expect([digest.status, digest.text, digest.headers.get('www-authenticate')]).toEqual([
      401,
      'Digest authentication not supported',
      `realm="${REALM}"`,
    ]);
  });

  it('expires bearer tokens after the idle time, sliding with each use', async () => {
    const token = await h.login();
    const get = () => h.request('GET', '/api/bmc/power', { headers: { Authorization: `Bearer ${token}` } });
    now += 50_000;
    expect((await get()).status).toBe(200);
    now += 50_000; // 100 s after login, 50 s after last use: still valid because expiry slides
    expect((await get()).status).toBe(200);
    now += 61_000;
    const expired = await get();
    expect(expired.status).toBe(401);
    expect(expired.text).toBe('token expired 1s ago');
  });

  it('ends a session at its absolute lifetime, however busy it is', async () => {
    await h.close();
    h = await AgentHarness.start({ now: () => now, tokenExpirySeconds: 60, tokenLifetimeSeconds: 120 });
    const token = await h.login();
    const get = () => h.request('GET', '/api/bmc/power', { headers: { Authorization: `Bearer ${token}` } });
    for (let i = 0; i < 2; i++) {
      now += 50_000;
      expect((await get()).status).toBe(200);
    }
    now += 50_000; // used 50 s ago, so the sliding expiry is not reached; but logged in 150 s ago
    const ended = await get();
    expect([ended.status, ended.text]).toEqual([401, 'token expired 30s ago']);
  });

  it('keeps a session for 24 h at most by default, even one used every hour', () => {
    let clock = 0;
    const tokens = new TokenStore(3 * 3600 * 1000, () => clock);
    const token = tokens.issue('root');
    for (clock = 3600_000; clock <= 24 * 3600_000; clock += 3600_000) {
      expect(tokens.check(token)).toEqual({ ok: true, username: 'root' });
    }
    clock = 24 * 3600_000 + 1000;
    expect(tokens.check(token)).toEqual({ ok: false, reason: 'expired', agoMs: 1000 });
  });

  it('revokes every session of the account when its password changes; the holders are told why and not banned', async () => {
    const first = await h.login();
    const second = await h.login();
    const change = await h.request('POST', '/api/bmc/access/password', {
      headers: { Authorization: `Bearer ${first}` },
      body: { username: 'root', current_password: PASSWORD, new_password: 'correct-horse-battery' },
    });
    expect(change.status).toBe(204);
    for (const token of [first, second, first, second, first, second]) {
      const refused = await h.request('GET', '/api/bmc/power', { headers: { Authorization: `Bearer ${token}` } });
      expect([refused.status, refused.text]).toEqual([
        401,
        'token revoked: the password of root changed; log in again',
      ]);
    }
    h.password = 'correct-horse-battery';
    await h.login();
    expect((await h.request('GET', '/api/bmc/power')).status).toBe(200);
  });

  it('bans a peer after 5 failures for 60 s with 429 + Retry-After on every path, doubling on repeat', async () => {
    for (let i = 0; i < 4; i++) {
      expect(
        (
          await h.request('GET', '/api/bmc/power', {
            anonymous: true,
            headers: { Authorization: basic('root', 'bad') },
          })
        ).status,
      ).toBe(401);
    }
    const fifth = await h.request('POST', '/api/bmc/authenticate', {
      anonymous: true,
      body: { username: 'root', password: 'bad' },
    });
    expect(fifth.status).toBe(403);
    for (const [method, path] of [
      ['GET', '/api/bmc/power'],
      ['POST', '/api/bmc/authenticate'],
      ['GET', '/api/bmc?opt=get&type=about'],
    ]) {
      const banned = await h.request(method!, path!, {
        anonymous: true,
        body: method === 'POST' ? { username: 'root', password: PASSWORD } : undefined,
      });
      expect([banned.status, banned.headers.get('retry-after'), banned.text]).toEqual([429, '60', BAN_TEXT('1m')]);
      expect(banned.headers.get('www-authenticate')).toBeNull();
    }
    // requests during the ban do not extend it
    now += 59_500;
    const late = await h.request('GET', '/api/bmc/power', { anonymous: true });
    expect([late.status, late.headers.get('retry-after')]).toEqual([429, '1']);
    now += 600;
    // one more failure after the lapse: banned again for twice as long
    expect(
      (await h.request('GET', '/api/bmc/power', { anonymous: true, headers: { Authorization: 'Bearer wrong' } }))
        .status,
    ).toBe(401);
    const second = await h.request('GET', '/api/bmc/power', { anonymous: true });
    expect([second.status, second.headers.get('retry-after')]).toEqual([429, '120']);
    now += 121_000;
    // a success clears the record: four failures later there is still no ban
    expect(
      (
        await h.request('GET', '/api/bmc/power', {
          anonymous: true,
          headers: { Authorization: basic('root', PASSWORD) },
        })
      ).status,
    ).toBe(200);
    for (let i = 0; i < 4; i++) {
      await h.request('GET', '/api/bmc/power', { anonymous: true, headers: { Authorization: basic('root', 'bad') } });
    }
    expect(
      (
        await h.request('GET', '/api/bmc/power', {
          anonymous: true,
          headers: { Authorization: basic('root', PASSWORD) },
        })
      ).status,
    ).toBe(200);
  });

  it('audits logins and failed credential checks, never the password or token, and the ban a failure starts', async () => {
    const secret = 'hunter2-wrong-secret';
    const tokenGuess = 'A'.repeat(64);
    await h.request('POST', '/api/bmc/authenticate', { anonymous: true, body: { username: 'root', password: secret } });
    await h.request('GET', '/api/bmc/power', { anonymous: true, headers: { Authorization: basic('admin', secret) } });
    await h.request('GET', '/api/bmc/power', { anonymous: true, headers: { Authorization: `Bearer ${tokenGuess}` } });
    await h.request('GET', '/api/bmc?opt=get&type=about', {
      anonymous: true,
      headers: { Authorization: basic('root', 'x'.repeat(300)) },
    });
    await h.request('POST', '/api/bmc/authenticate', {
      anonymous: true,
      body: { username: 'root\nforged', password: secret },
    });
    await h.request('POST', '/api/bmc/authenticate', { anonymous: true, body: { username: 'root', password: secret } });
    const lines = h.services.audit.lines.map((line) => line.replace(/^\S+ audit: /, ''));
    expect(lines).toEqual([
      'login by root (password) from 127.0.0.1: 403 credentials incorrect',
      'login by admin (basic) from 127.0.0.1: 401 credentials incorrect',
      'login by unattributed from 127.0.0.1: 401 bearer token not registered',
      'login by root (basic) from 127.0.0.1: 401 the password is longer than 256 bytes, more than any account here can have; it was not checked',
      'login by root forged (password) from 127.0.0.1: 403 credentials incorrect; banned for 1m',
    ]);
    now += 61_000;
    await h.login();
    expect(h.services.audit.lines.at(-1)).toMatch(/ audit: login by root \(password\) from 127\.0\.0\.1: ok$/);
    // Lines are appended without holding up the answer: wait for the last one.
    let file = '';
    for (let i = 0; i < 100 && !file.includes(': ok\n'); i++) {
      file = await readFile(join(h.dir, 'audit.log'), 'utf8').catch(() => '');
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(file.trim().split('\n')).toHaveLength(6);
    for (const text of [file, ...h.services.audit.lines]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(tokenGuess);
      expect(text).not.toContain(PASSWORD);
    }
  });

  it('does not exempt loopback unless trustLoopback is set', async () => {
    expect((await h.request('GET', '/api/bmc/power', { anonymous: true })).status).toBe(401);
    const trusting = await AgentHarness.start({ trustLoopback: true });
    try {
      expect((await trusting.request('GET', '/api/bmc/power', { anonymous: true })).status).toBe(200);
      expect((await trusting.login()).length).toBe(64);
    } finally {
      await trusting.close();
    }
  });

  it('protects the OpenAPI document but not /metrics or static files', async () => {
    expect((await h.request('GET', '/api/bmc/openapi.json', { anonymous: true })).status).toBe(401);
    await h.login();
    const doc = await h.request('GET', '/api/bmc/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.json).toEqual(expect.any(Object));
  });

  it('forgets sessions when the controller reboots', async () => {
    await h.login();
    expect((await h.request('POST', '/api/bmc/reboot')).status).toBe(204);
    await expect(h.request('GET', '/api/bmc/power')).rejects.toThrow(); // the board is away: connection dropped
    while (h.backend.isBooting()) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect((await h.request('GET', '/api/bmc/power')).status).toBe(401);
  });
});
