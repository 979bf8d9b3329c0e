import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { BoardError } from '../backend/backend.js';
import { CommandRunError } from '../backend/linux/runner.js';
import { FixtureRunner } from '../../test/support/linux-board.js';
import { AgentHarness, LinuxAgentHarness } from '../../test/support/harness.js';
import { ShadowAccounts } from './shadow-accounts.js';
import { cryptScheme, shaCrypt, verifyShaCrypt } from './sha-crypt.js';

// Reference hashes made by OpenSSL 3 (`openssl passwd -5/-6`) and glibc/libxcrypt crypt(3) through Perl.
const VECTORS: Array<[string, string]> = [
  ['Hello world!', '$5$saltstring$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5'],
  [
    'Hello world!',
    '$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1',
  ],
  // rounds=, and a salt longer than 16 characters is cut to 16.
  ['Hello world!', '$5$rounds=10000$saltstringsaltst$3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA'],
  [
    'Hello world!',
    '$6$rounds=10000$saltstringsaltst$OW1/O6BYHV6BcXZu8QVeXbDWra3Oeqh0sbHbbMCVNSnCM/UrjmM0Dp8vOuZeHBy/YTBmSK6H9qs/y3RnOaw5v.',
  ],
  // A key longer than the digest, with non-ASCII characters (UTF-8 bytes).
  [
    `${'a'.repeat(150)}pässwörd`,
    '$6$rounds=1000$x$3fWhyxc3fZh3u9aylcRW5WioTDgkgzgeUdUhLOeoJLv6dUZq1X6yGY/WBG38WWuUHkVxIybES1HQP2Q5Y7NJm.',
  ],
  ['a'.repeat(70), '$5$rounds=1000$abc$cu2cN.O12DgeCKpsV1EcDrtDiogHTLWF7d46scQgkv4'],
  ['', '$6$emptysalt$TrI.h19YNad.S.Xw2WEgON9ojBrkXYcCfZrEcOEa9k/Bp5Sw4dxhsyY0KdBJ5Vt2UbEFOMolXqrfnZHc1QRM..'],
];

describe('sha-crypt ($5$, $6$) in node:crypto', () => {
  it.each(VECTORS)('crypt(%j) reproduces the reference hash', (password, hash) => {
    expect(shaCrypt(password, hash)).toBe(hash);
    expect(verifyShaCrypt(password, hash)).toBe(true);
    expect(verifyShaCrypt(`${password}x`, hash)).toBe(false);
  });

  it('refuses what it cannot compute instead of guessing', () => {
    const yescrypt = '$y$j9T$F5Jx5fExrKuPp53xLKQ..1$SCPZldBY8dVrMbBfxkA6Bb2zuSVURTKyRRGBqrS.qp0';
    expect(cryptScheme(yescrypt)).toBe('yescrypt');
    // yescrypt.ts computes these; SHA-crypt does not claim them.
    expect(verifyShaCrypt('operator-pass', yescrypt)).toBe(false);
    expect(verifyShaCrypt('x', '$1$abc$def')).toBe(false);
    expect(verifyShaCrypt('x', 'abJnggxhB/yWI')).toBe(false);
  });
});

describe('accounts from /etc/shadow (Linux)', () => {
  let dir: string;
  let shadow: string;
  let logs: string[];
  let runner: FixtureRunner;
  let accounts: ShadowAccounts | undefined;
  const root = shaCrypt('turing', '$6$rootsalt') as string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'shadow-'));
    shadow = join(dir, 'shadow');
    logs = [];
    runner = new FixtureRunner();
    await writeFile(
      shadow,
      `root:${root}:20300:0:99999:7:::\ndaemon:*:20300:0:99999:7:::\nlocked:!${root}:20300::::::\nnopass::20300::::::\n` +
        'operator:$y$j9T$F5Jx5fExrKuPp53xLKQ..1$SCPZldBY8dVrMbBfxkA6Bb2zuSVURTKyRRGBqrS.qp0:20300::::::\n' +
        // N = 2^18, r = 32: 1 GiB, more than the controller has.
        'costly:$y$jFT$F5Jx5fExrKuPp53xLKQ..1$SCPZldBY8dVrMbBfxkA6Bb2zuSVURTKyRRGBqrS.qp0:20300::::::\n' +
        `admin:${shaCrypt('admin-password', '$5$adminsalt')}:20300::::::\n`,
    );
  });
  afterEach(async () => {
    accounts?.close();
    accounts = undefined;
    await rm(dir, { recursive: true, force: true });
  });
  const open = async (watch = false) =>
    (accounts = await ShadowAccounts.open({
      shadowFile: shadow,
      runner,
      watch,
      debounceMs: 20,
      log: (l, m) => logs.push(`${l}: ${m}`),
    }));

  it('admits every account with a $6$, $5$ or $y$ hash, skips `*`, `!` and empty hashes, refuses a yescrypt cost it cannot afford', async () => {
    const a = await open();
    expect(a.users().sort()).toEqual(['admin', 'operator', 'root']);
    expect(await a.verify('root', 'turing')).toBe(true);
    expect(await a.verify('admin', 'admin-password')).toBe(true);
    expect(await a.verify('root', 'wrong')).toBe(false);
    expect(await a.verify('locked', 'turing')).toBe(false);
    expect(await a.verify('nopass', '')).toBe(false);
    expect(await a.verify('nobody-at-all', 'turing')).toBe(false);
    // A yescrypt hash made by libxcrypt (Debian 12's default method), and a wrong password for it.
    expect(await a.verify('operator', 'operator-pass')).toBe(true);
    expect(await a.verify('operator', 'operator-pass ')).toBe(false);
    expect(await a.verify('costly', 'operator-pass')).toBe(false);
    expect(logs).toEqual([
      expect.stringMatching(
        /^warn: account costly is not loaded: its yescrypt \(\$y\$\) hash has parameters the agent cannot compute \(more than 64 MiB/,
      ),
    ]);
  });

  it('re-reads the file when it changes (a passwd on the console takes effect without a restart)', async () => {
    const a = await open(true);
    // As chpasswd does: a new file renamed over the old one.
    await writeFile(`${shadow}+`, `root:${shaCrypt('console-changed', '$6$other')}:20301::::::\n`);
    const { rename } = await import('node:fs/promises');
    await rename(`${shadow}+`, shadow);
    const deadline = Date.now() + 5000;
    while (!(await a.verify('root', 'console-changed')) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await a.verify('root', 'console-changed')).toBe(true);
    expect(await a.verify('root', 'turing')).toBe(false);
  });

  it('reports accounts whose password changed or that went away, so their sessions end', async () => {
    const a = await open();
    const changed: string[] = [];
    a.onPasswordChange((user) => changed.push(user));
    await a.reload();
    expect(changed).toEqual([]); // the same file: nothing changed
    const text = await readFile(shadow, 'utf8');
    await writeFile(
      shadow,
      text.replace(/^root:[^:]+:/m, `root:${shaCrypt('console-changed', '$6$other')}:`).replace(/^admin:.*\n/m, ''),
    );
    await a.reload();
    expect(changed.sort()).toEqual(['admin', 'root']);
  });

  it('changes a password with chpasswd, the secret on stdin and never in the arguments', async () => {
    const a = await open();
    runner.answer('chpasswd -c SHA512', { code: 0 });
    // The fake chpasswd does not touch the file; the agent notices the change did not land.
    await expect(a.setPassword('root', 'a-new-long-password')).rejects.toThrow(
      'Failed to change the password: the password change did not complete: /etc/shadow does not hold the new password',
    );
    expect(runner.calls).toEqual([
      { cmd: 'chpasswd', args: ['-c', 'SHA512'], input: 'root:a-new-long-password\n', timeoutMs: 15_000 },
    ]);
    expect(JSON.stringify(runner.calls.map((c) => c.args))).not.toContain('a-new-long-password');
  });

  it.each([
    [
      { code: 1, stderr: "chpasswd: user 'root' does not exist\n" },
      "Failed to change the password: the system refused the change: chpasswd: user 'root' does not exist",
    ],
    [
      new CommandRunError('chpasswd', 'spawn', 'chpasswd: spawn chpasswd ENOENT'),
      'Failed to change the password: could not run chpasswd: chpasswd: spawn chpasswd ENOENT',
    ],
    [
      new CommandRunError('chpasswd', 'timeout', 'chpasswd timed out after 15000 ms'),
      'Failed to change the password: the password change did not complete: chpasswd timed out after 15000 ms',
    ],
  ])('refuses with 500 when chpasswd fails (%#)', async (answer, message) => {
    const a = await open();
    runner.answer('chpasswd -c SHA512', answer);
    const error = await a.setPassword('root', 'a-new-long-password').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BoardError);
    expect(error).toMatchObject({ status: 500, message });
  });

  it('refuses a password with a newline before running anything (it would be a second chpasswd line)', async () => {
    const a = await open();
    await expect(a.setPassword('root', 'abc\ndaemon:owned-now')).rejects.toMatchObject({ status: 400 });
    expect(runner.calls).toEqual([]);
  });

  it('a file that cannot be read leaves no account and says why', async () => {
    await rm(shadow);
    const a = await open();
    expect(await a.verify('root', 'turing')).toBe(false);
    expect(logs[0]).toMatch(/^error: cannot read .*shadow: .*no account can log in/);
  });
});

describe('POST /access/password on the Linux backend (fixture tree)', () => {
  let h: LinuxAgentHarness;
  afterEach(() => h.close());

  it('runs chpasswd through the backend runner; the login and Basic then take the new password at once', async () => {
    h = await LinuxAgentHarness.start('v2.5');
    await h.login();
    const change = await h.request('POST', '/api/bmc/access/password', {
      body: { username: 'root', current_password: 'turing', new_password: 'correct-horse-battery' },
    });
    expect(change.status).toBe(204);
    expect(h.fixture.runner.calls.filter((c) => c.cmd === 'chpasswd')).toEqual([
      { cmd: 'chpasswd', args: ['-c', 'SHA512'], input: 'root:correct-horse-battery\n', timeoutMs: 15_000 },
    ]);
    expect(await readFile(join(h.dir, 'etc/shadow'), 'utf8')).toMatch(/^root:\$6\$fixturechpasswd\$/m);
    const basic = (p: string) => ({ Authorization: `Basic ${Buffer.from(`root:${p}`).toString('base64')}` });
    expect((await h.request('GET', '/api/bmc/about', { anonymous: true, headers: basic('turing') })).status).toBe(401);
    expect(
      (await h.request('GET', '/api/bmc/about', { anonymous: true, headers: basic('correct-horse-battery') })).status,
    ).toBe(200);
    // The account's sessions end with the old password (a departure from the daemon, which keeps them; issue 14).
    expect((await h.request('GET', '/api/bmc/about')).status).toBe(401);
  });

  it('answers 403 for an account missing from /etc/shadow and for a locked one, without running chpasswd', async () => {
    h = await LinuxAgentHarness.start('v2.5');
    await h.login();
    for (const username of ['ghost', 'locked', 'operator']) {
      const answer = await h.request('POST', '/api/bmc/access/password', {
        body: { username, current_password: 'turing', new_password: 'correct-horse-battery' },
      });
      expect({ status: answer.status, text: answer.text }).toEqual({
        status: 403,
        text: expect.stringContaining('the current password is wrong'),
      });
    }
    expect(h.fixture.runner.calls.filter((c) => c.cmd === 'chpasswd')).toEqual([]);
  });

  it('logs in with the v2.4 tree root hash ($5$ sha256-crypt)', async () => {
    h = await LinuxAgentHarness.start('v2.4');
    await expect(h.login()).resolves.toMatch(/^[A-Za-z0-9]{64}$/);
  });
});

describe('simulated board: a changed password survives an agent restart', () => {
  let dir: string;
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('keeps the scrypt hash in the state directory; after the restart the old password is refused, the new one accepted', async () => {
    dir = await mkdtemp(join(tmpdir(), 'sim-accounts-'));
    const first = await AgentHarness.start({ stateDir: dir });
    await first.login();
    const change = await first.request('POST', '/api/bmc/access/password', {
      body: { username: 'root', current_password: 'turing', new_password: 'correct-horse-battery' },
    });
    expect(change.status).toBe(204);
    await first.close();
    const stored = JSON.parse(await readFile(join(dir, 'accounts.json'), 'utf8')) as Record<string, unknown>;
    expect(stored).toMatchObject({ algorithm: 'scrypt', salt: expect.any(String), hash: expect.any(String) });
    expect(JSON.stringify(stored)).not.toContain('correct-horse-battery');

    // A new agent over the same state directory, started with the default password as the CLI would be.
    const second = await AgentHarness.start({ stateDir: dir });
    try {
      await expect(second.login()).rejects.toThrow('login failed: 403 credentials incorrect');
      second.password = 'correct-horse-battery';
      await expect(second.login()).resolves.toMatch(/^[A-Za-z0-9]{64}$/);
    } finally {
      await second.close();
    }
  });
});
