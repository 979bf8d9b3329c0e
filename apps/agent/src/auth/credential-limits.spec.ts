import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';

import { LinuxAgentHarness } from '../../test/support/harness.js';
import { REALM } from './authenticator.js';

/**
 * Issue 14 (high): SHA-crypt costs the square of the password length, and it ran on the event loop, so one
 * unauthenticated login with a 128 KiB password froze the Linux agent for tens of seconds. Over-long credentials are
 * now refused before any hashing, the login body is capped, and the checks run on a worker thread.
 */
describe('over-long credentials on the Linux backend', () => {
  let h: LinuxAgentHarness;
  beforeEach(async () => {
    h = await LinuxAgentHarness.start('v2.5');
    await h.login();
  });
  afterEach(() => h.close());

  const basic = (user: string, password: string) => ({
    Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
  });

  it('refuses a 128 KiB login at once (413, nothing hashed) while another request is answered', async () => {
    const hashed = h.accounts.hasher.computed;
    const [refusal, other] = await Promise.all([
      h.request('POST', '/api/bmc/authenticate', {
        anonymous: true,
        body: { username: 'root', password: 'x'.repeat(128 * 1024) },
      }),
      h.request('GET', '/api/bmc/about'),
    ]);
    expect(other.status).toBe(200);
    expect(refusal.status).toBe(413);
    expect(refusal.headers.get('content-type')).toBe('application/problem+json');
    expect(refusal.json).toMatchObject({
      status: 413,
      detail: 'a login body is at most 4096 bytes; nothing was checked',
    });
    expect(h.accounts.hasher.computed).toBe(hashed);
  });

  it('refuses a password over 256 bytes without hashing it: login 400, Basic 401 in either spelling', async () => {
    const hashed = h.accounts.hasher.computed;
    const long = 'é'.repeat(129); // 258 bytes in UTF-8, 129 characters
    const detail = 'the password is longer than 256 bytes, more than any account here can have; it was not checked';

    const login = await h.request('POST', '/api/bmc/authenticate', {
      anonymous: true,
      body: { username: 'root', password: long },
    });
    expect([login.status, login.headers.get('content-type')]).toEqual([400, 'application/problem+json']);
    expect(login.json).toMatchObject({ status: 400, detail });

    const path = await h.request('GET', '/api/bmc/about', { anonymous: true, headers: basic('root', long) });
    expect([path.status, path.headers.get('content-type')]).toEqual([401, 'application/problem+json']);
    expect(path.json).toMatchObject({ status: 401, detail });
    expect(path.headers.get('www-authenticate')).toBe(`Basic realm="${REALM}"`);

    const legacy = await h.request('GET', '/api/bmc?opt=get&type=about', {
      anonymous: true,
      headers: basic('root', 'y'.repeat(8 * 1024)),
    });
    expect(legacy.status).toBe(401);
    expect(legacy.json).toEqual({ response: [{ result: detail }] });

    const change = await h.request('POST', '/api/bmc/access/password', {
      body: { username: 'root', current_password: 'z'.repeat(100 * 1024), new_password: 'correct-horse-battery' },
    });
    expect(change.status).toBe(400);
    expect(change.json).toMatchObject({ detail: 'the current password is longer than 256 bytes, so it is wrong' });
    const tooLongNew = await h.request('POST', '/api/bmc/access/password', {
      body: { username: 'root', current_password: 'turing', new_password: 'n'.repeat(257) },
    });
    expect(tooLongNew.status).toBe(400);
    expect(tooLongNew.json).toMatchObject({ detail: 'the new password is too long: at most 256 bytes' });

    expect(h.accounts.hasher.computed).toBe(hashed);
    // A 256-byte password is still checked (and may be right).
    expect(
      (await h.request('GET', '/api/bmc/about', { anonymous: true, headers: basic('root', 'w'.repeat(256)) })).status,
    ).toBe(401);
    expect(h.accounts.hasher.computed).toBe(hashed + 1);
  });

  it('checks a password off the event loop: a slow crypt check does not hold up other requests', async () => {
    // 5 million rounds (glibc allows up to 999,999,999): seconds of hashing for one Basic check.
    // The digest part need not match anything: the check runs all rounds whatever it compares against.
    await appendFile(join(h.dir, 'etc/shadow'), `slow:$6$rounds=5000000$slowsalt$${'x'.repeat(86)}:20300::::::\n`);
    await h.accounts.reload();
    const hashed = h.accounts.hasher.computed;
    const stop = new AbortController();
    let settled = false;
    const slow = fetch(`${h.base}/api/bmc/about`, { headers: basic('slow', 'guess'), signal: stop.signal }).then(
      () => (settled = true),
      () => (settled = true),
    );
    while (h.accounts.hasher.computed === hashed) {
      await new Promise((r) => setTimeout(r, 5));
    }
    // The check is on its thread now; the board keeps answering.
    const other = await h.request('GET', '/api/bmc/power');
    expect(other.status).toBe(200);
    expect(settled).toBe(false);
    stop.abort();
    await slow;
  });
});
