import { readFileSync } from 'node:fs';

import { ShaCryptPool } from './sha-crypt-pool.js';
import { parseYescryptSetting, verifyYescrypt, yescryptCrypt } from './yescrypt.js';

/** Made by libxcrypt's crypt(3) through Perl: test/fixtures/yescrypt/make-hashes.pl (the command is in the file). */
const FIXTURES = JSON.parse(
  readFileSync(new URL('../../test/fixtures/yescrypt/hashes.json', import.meta.url), 'utf8'),
) as { password: string; hash: string }[];

describe('yescrypt ($y$) against libxcrypt', () => {
  it.each(FIXTURES.map((f) => [f.hash, f.password] as const))('crypt reproduces %s', (hash, password) => {
    expect(yescryptCrypt(password, hash)).toBe(hash);
    expect(verifyYescrypt(password, hash)).toBe(true);
  });

  it('refuses a wrong password, and a hash whose digest was altered', () => {
    const { password, hash } = FIXTURES[0]!;
    expect(verifyYescrypt(`${password}!`, hash)).toBe(false);
    expect(verifyYescrypt(password.slice(0, -1), hash)).toBe(false);
    expect(verifyYescrypt('', hash)).toBe(false);
    const last = hash.at(-2) === 'A' ? 'B' : 'A';
    expect(verifyYescrypt(password, `${hash.slice(0, -2)}${last}${hash.at(-1)}`)).toBe(false);
  });

  it('reads the $y$ parameter encoding as libxcrypt does', () => {
    // libxcrypt's default cost: flavor j (read-write pwxform), N = 2^12, r = 32.
    expect(parseYescryptSetting('$y$j9T$F5Jx5fExrKuPp53xLKQ..1$')?.params).toEqual({
      flags: 0xb6,
      N: 4096,
      r: 32,
      p: 1,
      t: 0,
    });
    expect(parseYescryptSetting('$y$j7T.5$xxxxxxxx$')?.params).toMatchObject({ N: 1024, r: 32, p: 9 });
    expect(parseYescryptSetting('$y$j7T/5$xxxxxxxx$')?.params).toMatchObject({ N: 1024, r: 32, p: 1, t: 8 });
    expect(parseYescryptSetting('$y$.A2$LdJMENpBABJJ3hIHj/$')?.params).toMatchObject({ flags: 0, N: 2 ** 13, r: 5 });
  });

  it('refuses settings it cannot compute instead of guessing', () => {
    expect(parseYescryptSetting('$y$jFT$salt$')).toBeNull(); // N = 2^18, r = 32: 1 GiB
    expect(parseYescryptSetting('$y$k9T$salt$')).toBeNull(); // a pwxform flavor libxcrypt does not compute
    expect(parseYescryptSetting('$y$j9T5.$salt$')).toBeNull(); // a ROM
    expect(parseYescryptSetting('$y$j9T$abcdefghijklmnopqrstuv$')).toBeNull(); // salt with bits past its bytes
    expect(parseYescryptSetting('$y$j9T$sa!t$')).toBeNull();
    expect(parseYescryptSetting('$6$j9T$salt$')).toBeNull();
    expect(verifyYescrypt('x', '$y$jFT$salt$abc')).toBe(false);
  });

  it('runs on the worker pool, off the event loop, like the SHA-crypt checks', async () => {
    const pool = new ShaCryptPool();
    try {
      const { password, hash } = FIXTURES[0]!;
      let ticks = 0;
      const timer = setInterval(() => (ticks += 1), 5);
      const [ok, wrong] = await Promise.all([pool.verify(password, hash), pool.verify(`${password}x`, hash)]);
      clearInterval(timer);
      expect([ok, wrong]).toEqual([true, false]);
      // The loop kept turning while two default-cost checks ran on the thread.
      expect(ticks).toBeGreaterThan(0);
    } finally {
      await pool.close();
    }
  });
});
