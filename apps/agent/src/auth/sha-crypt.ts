import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * SHA-crypt (`$5$` sha256-crypt, `$6$` sha512-crypt) as glibc and libxcrypt implement it, following Ulrich Drepper's
 * "Unix crypt using SHA-256 and SHA-512" (2008). The board's /etc/shadow holds these; node:crypto offers the hash
 * functions but no crypt(3), and the agent may not pull in a native module (128 MB controller, no compiler).
 *
 * yescrypt (`$y$`) is not classic scrypt (node:crypto's scrypt lacks its pwxform mixing and `$y$` encoding): it
 * lives in yescrypt.ts.
 */

const ITOA64 = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const ROUNDS_DEFAULT = 5000;
const ROUNDS_MIN = 1000;
const ROUNDS_MAX = 999_999_999;
const SALT_MAX = 16;

type Variant = { id: '5' | '6'; algorithm: 'sha256' | 'sha512'; size: number; order: readonly (readonly number[])[] };

/**
 * The byte triples each output group encodes, in the spec's permuted order (the last, shorter group is handled by
 * `encode`). Drepper's tables follow one rule: over the first `3 * groups` bytes, group k starts at byte
 * `k * step` (mod `3 * groups`) and takes every `groups`-th byte from there, so both variants derive from it.
 */
function permutedOrder(groups: number, step: number): number[][] {
  const n = groups * 3;
  return Array.from({ length: groups }, (_, k) => {
    const first = (k * step) % n;
    return [first, (first + groups) % n, (first + 2 * groups) % n];
  });
}

const SHA256: Variant = { id: '5', algorithm: 'sha256', size: 32, order: permutedOrder(10, 21) };
const SHA512: Variant = { id: '6', algorithm: 'sha512', size: 64, order: permutedOrder(21, 22) };

/** Which crypt scheme a shadow hash field uses; `unsupported` covers yescrypt, MD5-crypt, DES and anything else. */
export function cryptScheme(hash: string): 'sha256-crypt' | 'sha512-crypt' | 'yescrypt' | 'unsupported' {
  if (hash.startsWith('$5$')) {
    return 'sha256-crypt';
  }
  if (hash.startsWith('$6$')) {
    return 'sha512-crypt';
  }
  if (hash.startsWith('$y$')) {
    return 'yescrypt';
  }
  return 'unsupported';
}

/** True when `crypt(password, hash) === hash` for a `$5$`/`$6$` hash; false for any other scheme or a malformed hash. */
export function verifyShaCrypt(password: string, hash: string): boolean {
  const computed = shaCrypt(password, hash);
  if (computed === null) {
    return false;
  }
  const a = Buffer.from(computed);
  const b = Buffer.from(hash);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * crypt(3) for a `$5$`/`$6$` setting (`$6$salt`, `$6$rounds=N$salt`, or a whole hash, whose salt is reused). Returns
 * null when the setting is not SHA-crypt.
 */
export function shaCrypt(password: string, setting: string): string | null {
  const variant = setting.startsWith('$5$') ? SHA256 : setting.startsWith('$6$') ? SHA512 : null;
  if (!variant) {
    return null;
  }
  let rest = setting.slice(3);
  let rounds = ROUNDS_DEFAULT;
  let customRounds = false;
  const roundsMatch = /^rounds=(\d+)\$/.exec(rest);
  if (roundsMatch) {
    rounds = Math.min(ROUNDS_MAX, Math.max(ROUNDS_MIN, Number(roundsMatch[1])));
    customRounds = true;
    rest = rest.slice(roundsMatch[0].length);
  }
  const end = rest.indexOf('$');
  const salt = Buffer.from((end < 0 ? rest : rest.slice(0, end)).slice(0, SALT_MAX), 'utf8');
  const digest = shaCryptDigest(variant, Buffer.from(password, 'utf8'), salt, rounds);
  return `$${variant.id}$${customRounds ? `rounds=${rounds}$` : ''}${salt.toString('utf8')}$${encode(variant, digest)}`;
}

function shaCryptDigest(variant: Variant, key: Buffer, salt: Buffer, rounds: number): Buffer {
  const hash = () => createHash(variant.algorithm);
  const size = variant.size;
  // Steps 4–8: digest B = H(key salt key).
  const b = hash().update(key).update(salt).update(key).digest();
  // Steps 1–3, 9–12: digest A.
  const a = hash().update(key).update(salt);
  let i = key.length;
  for (; i > size; i -= size) {
    a.update(b);
  }
  a.update(b.subarray(0, i));
  for (let n = key.length; n > 0; n >>= 1) {
    a.update(n & 1 ? b : key);
  }
  const digestA = a.digest();
  // Steps 13–16: P, the key-derived byte string as long as the key.
  const dp = hash();
  for (let n = 0; n < key.length; n++) {
    dp.update(key);
  }
  const p = repeatTo(dp.digest(), key.length);
  // Steps 17–20: S, the salt-derived byte string as long as the salt.
  const ds = hash();
  for (let n = 0; n < 16 + digestA[0]!; n++) {
    ds.update(salt);
  }
  const s = repeatTo(ds.digest(), salt.length);
  // Step 21: the rounds.
  let c = digestA;
  for (let r = 0; r < rounds; r++) {
    const ctx = hash();
    ctx.update(r & 1 ? p : c);
    if (r % 3 !== 0) {
      ctx.update(s);
    }
    if (r % 7 !== 0) {
      ctx.update(p);
    }
    ctx.update(r & 1 ? c : p);
    c = ctx.digest();
  }
  return c;
}

function repeatTo(block: Buffer, length: number): Buffer {
  const out = Buffer.alloc(length);
  for (let offset = 0; offset < length; offset += block.length) {
    block.copy(out, offset, 0, Math.min(block.length, length - offset));
  }
  return out;
}

function encode(variant: Variant, digest: Buffer): string {
  let out = '';
  for (const [b2, b1, b0] of variant.order) {
    out += b64From24Bit(digest[b2!]!, digest[b1!]!, digest[b0!]!, 4);
  }
  out += variant.size === 32 ? b64From24Bit(0, digest[31]!, digest[30]!, 3) : b64From24Bit(0, 0, digest[63]!, 2);
  return out;
}

function b64From24Bit(b2: number, b1: number, b0: number, chars: number): string {
  let w = (b2 << 16) | (b1 << 8) | b0;
  let out = '';
  for (let n = 0; n < chars; n++) {
    out += ITOA64[w & 0x3f];
    w >>= 6;
  }
  return out;
}
