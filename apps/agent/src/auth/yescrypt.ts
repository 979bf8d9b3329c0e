import { createHash, createHmac, pbkdf2Sync, timingSafeEqual } from 'node:crypto';
import { endianness } from 'node:os';

/**
 * yescrypt (`$y$`) as libxcrypt computes it for crypt(3): Debian 12's default and the board's newer firmware hash
 * /etc/shadow with it. Written here from the algorithm's description (Solar Designer's yescrypt: scrypt's SMix with
 * the pwxform block mixer over a 12 KiB S-box, read-write V, a pre-hash for large N, and the `$y$` parameter
 * encoding) because no npm package implements it (see apps/agent/README.md) and a native addon cannot be built for
 * the controller. node:crypto supplies HMAC-SHA256, PBKDF2-SHA256 and SHA-256; the memory-hard core is below.
 *
 * Only what `$y$` hashes can name is accepted: the default flavor (read-write, 6 pwxform rounds, gather 4, simple 2,
 * 12 KiB S-box), classic scrypt (flavor 0) and its write-once variant (flavor 1); no ROM, no hash upgrades (`g`).
 * Everything runs on worker threads (sha-crypt-pool.ts): one default-cost check takes 16 MiB and CPU time the event
 * loop must not spend.
 */

const YESCRYPT_RW = 2;
/** ROUNDS_6 | GATHER_4 | SIMPLE_2 | SBOX_12K: the only pwxform settings libxcrypt (and this module) computes. */
const RW_FLAVOR = 0x004 | 0x010 | 0x020 | 0x080;
const RW_FLAVOR_MASK = 0x3fc;
const YESCRYPT_PREHASH = 0x10000000;

/** pwxform's S-box: 3 × 2^8 entries of 2 × 64 bits (12 KiB), addressed by `(x & S_MASK)` as a byte offset. */
const S_WORDS = (3 * 256 * 2 * 8) / 4;
const S_MASK = 255 * 2 * 8;
/** Words from one S-box third to the next (2^8 pairs of 64-bit values). */
const S_THIRD = 256 * 2 * 2;

/**
 * V (128·r·N bytes) at most: the controller has 128 MB, and libxcrypt's default cost (`j9T`) takes 16 MiB. A hash
 * naming more is refused rather than allowed to exhaust the board.
 */
export const YESCRYPT_MAX_MEMORY = 64 * 1024 * 1024;

/** Held in module scope: a global lookup per use is slow inside a vm context (jest) and in the hottest loop. */
const imul = Math.imul;

const ITOA64 = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export interface YescryptParams {
  flags: number;
  N: number;
  r: number;
  p: number;
  t: number;
}

export interface YescryptSetting {
  params: YescryptParams;
  /** `$y$<params>$<salt>`: the part of the hash crypt(3) copies into its output. */
  prefix: string;
  salt: Buffer;
}

/** The value of one itoa64 character, or 64 for anything else. */
function atoi64(ch: string | undefined): number {
  const i = ch === undefined ? -1 : ITOA64.indexOf(ch);
  return i < 0 ? 64 : i;
}

/**
 * yescrypt's variable-length number encoding: the first character's range picks how many characters follow (1 for
 * values below 48 + min, then groups that each take 6 more bits). Returns the value and the characters used.
 */
function decodeUint32(text: string, at: number, min: number): { value: number; next: number } | null {
  let c = atoi64(text[at]);
  if (c > 63) {
    return null;
  }
  let start = 0;
  let end = 47;
  let chars = 1;
  let bits = 0;
  let value = min;
  while (c > end) {
    value += (end + 1 - start) * 2 ** bits;
    start = end + 1;
    end = start + Math.floor((62 - end) / 2);
    chars += 1;
    bits += 6;
  }
  value += (c - start) * 2 ** bits;
  let next = at + 1;
  while (--chars > 0) {
    c = atoi64(text[next++]);
    if (c > 63) {
      return null;
    }
    bits -= 6;
    value += c * 2 ** bits;
  }
  return value > 0xffffffff ? null : { value, next };
}

/**
 * The salt's encoding: groups of up to four characters, 6 bits each little-endian, give up to three bytes
 * little-endian; a group shorter than two characters or with bits left over past its bytes is malformed.
 */
function decodeSalt(text: string): Buffer | null {
  const out: number[] = [];
  for (let i = 0; i < text.length;) {
    let value = 0;
    let bits = 0;
    while (i < text.length && bits < 24) {
      const c = atoi64(text[i]);
      if (c > 63) {
        return null;
      }
      value += c * 2 ** bits;
      bits += 6;
      i += 1;
    }
    if (bits < 12) {
      return null;
    }
    const bytes = Math.floor(bits / 8);
    for (let b = 0; b < bytes; b++) {
      out.push(value & 0xff);
      value = Math.floor(value / 256);
    }
    if (value !== 0) {
      return null;
    }
  }
  return out.length > 64 ? null : Buffer.from(out);
}

/** Bytes → itoa64, three bytes (little-endian) to four characters (6 bits each, least significant first). */
function encode64(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length;) {
    let value = 0;
    let bits = 0;
    while (bits < 24 && i < bytes.length) {
      value |= bytes[i++]! << bits;
      bits += 8;
    }
    for (let b = 0; b < bits; b += 6) {
      out += ITOA64[value & 0x3f];
      value >>>= 6;
    }
  }
  return out;
}

/** Parse a `$y$` setting or whole hash; null when it is malformed or names what this module does not compute. */
export function parseYescryptSetting(setting: string): YescryptSetting | null {
  if (!setting.startsWith('$y$')) {
    return null;
  }
  let at = 3;
  const flavor = decodeUint32(setting, at, 0);
  if (!flavor) {
    return null;
  }
  at = flavor.next;
  let flags: number;
  if (flavor.value < YESCRYPT_RW) {
    flags = flavor.value;
  } else if (flavor.value <= YESCRYPT_RW + (RW_FLAVOR_MASK >> 2)) {
    flags = YESCRYPT_RW + (flavor.value - YESCRYPT_RW) * 4;
  } else {
    return null;
  }
  if ((flags & YESCRYPT_RW) !== 0 && (flags & RW_FLAVOR_MASK) !== RW_FLAVOR) {
    return null;
  }
  const nLog2 = decodeUint32(setting, at, 1);
  if (!nLog2 || nLog2.value > 63) {
    return null;
  }
  at = nLog2.next;
  const r = decodeUint32(setting, at, 1);
  if (!r) {
    return null;
  }
  at = r.next;
  let p = 1;
  let t = 0;
  if (setting[at] !== '$') {
    const have = decodeUint32(setting, at, 1);
    if (!have) {
      return null;
    }
    at = have.next;
    if (have.value & 1) {
      const v = decodeUint32(setting, at, 2);
      if (!v) {
        return null;
      }
      [p, at] = [v.value, v.next];
    }
    if (have.value & 2) {
      const v = decodeUint32(setting, at, 1);
      if (!v) {
        return null;
      }
      [t, at] = [v.value, v.next];
    }
    // `g` (hash upgrades) and a ROM are not supported by libxcrypt's crypt(3) either.
    if (have.value & ~3) {
      return null;
    }
  }
  if (setting[at] !== '$') {
    return null;
  }
  at += 1;
  const last = setting.lastIndexOf('$');
  const saltText = last >= at ? setting.slice(at, last) : setting.slice(at);
  const salt = decodeSalt(saltText);
  if (!salt) {
    return null;
  }
  const params = { flags, N: 2 ** nLog2.value, r: r.value, p, t };
  return validParams(params) ? { params, prefix: setting.slice(0, at) + saltText, salt } : null;
}

/** The KDF's own sanity checks, plus the memory cap and the limits of 32-bit index arithmetic used below. */
function validParams({ flags, N, r, p, t }: YescryptParams): boolean {
  if (flags === 0 && t !== 0) {
    return false;
  }
  if (N <= 1 || N > 2 ** 30 || r < 1 || p < 1 || r * p >= 2 ** 30 || t > 2 ** 20) {
    return false;
  }
  if (128 * r * N > YESCRYPT_MAX_MEMORY || 128 * r * p > YESCRYPT_MAX_MEMORY) {
    return false;
  }
  return (flags & YESCRYPT_RW) === 0 || (N / p > 1 && p * S_WORDS * 4 <= YESCRYPT_MAX_MEMORY);
}

/** crypt(3) for a `$y$` setting or hash: the whole hash string, or null when the setting is not computable. */
export function yescryptCrypt(password: string, setting: string): string | null {
  const parsed = parseYescryptSetting(setting);
  if (!parsed) {
    return null;
  }
  const digest = yescryptKdf(Buffer.from(password, 'utf8'), parsed.salt, parsed.params);
  return `${parsed.prefix}$${encode64(digest)}`;
}

/** True when `crypt(password, hash) === hash` for a `$y$` hash; false for a mismatch or a hash it cannot compute. */
export function verifyYescrypt(password: string, hash: string): boolean {
  const computed = yescryptCrypt(password, hash);
  if (computed === null) {
    return false;
  }
  const a = Buffer.from(computed);
  const b = Buffer.from(hash);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The 32-byte yescrypt hash (what crypt(3) encodes after the salt). */
export function yescryptKdf(password: Buffer, salt: Buffer, params: YescryptParams): Buffer {
  if (endianness() !== 'LE') {
    // The blocks are Uint32Array views of PBKDF2's bytes, which the algorithm reads as little-endian words.
    throw new Error('yescrypt needs a little-endian platform');
  }
  const { flags, N, r, p } = params;
  // yescrypt_kdf's pre-hash: a large-memory RW hash first runs at 1/64 of N, and that result is the password.
  if ((flags & YESCRYPT_RW) !== 0 && N / p >= 0x100 && (N / p) * r >= 0x20000) {
    password = kdfBody(password, salt, { ...params, flags: flags | YESCRYPT_PREHASH, N: N / 64, t: 0 });
  }
  return kdfBody(password, salt, params);
}

interface Pwxform {
  S: Uint32Array;
  /** Word offsets of the three S-box thirds, rotated after each pwxform call. */
  s0: number;
  s1: number;
  s2: number;
  /** Next S2 entry (in 64-bit pairs) pwxform writes. */
  w: number;
}

function kdfBody(password: Buffer, salt: Buffer, { flags, N, r, p, t }: YescryptParams): Buffer {
  const s = 32 * r;
  const V = new Uint32Array(s * N);
  let key = password;
  if (flags !== 0) {
    key = hmac(Buffer.from((flags & YESCRYPT_PREHASH) !== 0 ? 'yescrypt-prehash' : 'yescrypt'), password);
  }
  const bBytes = pbkdf2Sync(key, salt, 1, 128 * r * p, 'sha256');
  const B = new Uint32Array(bBytes.buffer, bBytes.byteOffset, bBytes.length / 4);
  const XY = new Uint32Array(2 * s);
  if (flags !== 0) {
    // From here on the "password" for the final PBKDF2 is the first 32 bytes of B (updated by SMix in RW mode).
    key = Buffer.from(bBytes.subarray(0, 32));
  }
  if ((flags & YESCRYPT_RW) !== 0) {
    const S = new Uint32Array(S_WORDS * p);
    const ctx: Pwxform[] = [];
    for (let i = 0; i < p; i++) {
      ctx.push({ S: S.subarray(i * S_WORDS, (i + 1) * S_WORDS), s0: 0, s1: 0, s2: 0, w: 0 });
    }
    key = smix(B, bBytes, r, N, p, t, flags, V, XY, ctx, key);
  } else {
    for (let i = 0; i < p; i++) {
      smix(B.subarray(s * i, s * (i + 1)), bBytes.subarray(128 * r * i), r, N, 1, t, flags, V, XY, null, key);
    }
  }
  const dk = pbkdf2Sync(key, bBytes, 1, 32, 'sha256');
  if (flags !== 0 && (flags & YESCRYPT_PREHASH) === 0) {
    // SCRAM's ClientKey → StoredKey, as yescrypt ends.
    return createHash('sha256')
      .update(hmac(dk, Buffer.from('Client Key')))
      .digest();
  }
  return dk;
}

function hmac(key: Buffer, message: Buffer): Buffer {
  return createHmac('sha256', key).update(message).digest();
}

/** Nloop_all and Nloop_rw, then SMix1/SMix2 per lane; returns the (possibly updated) final-PBKDF2 key. */
function smix(
  B: Uint32Array,
  bBytes: Buffer,
  r: number,
  N: number,
  p: number,
  t: number,
  flags: number,
  V: Uint32Array,
  XY: Uint32Array,
  ctx: Pwxform[] | null,
  key: Buffer,
): Buffer {
  const s = 32 * r;
  let nChunk = Math.floor(N / p);
  let nLoopAll = nChunk;
  if ((flags & YESCRYPT_RW) !== 0) {
    if (t <= 1) {
      if (t) {
        nLoopAll *= 2;
      }
      nLoopAll = Math.floor((nLoopAll + 2) / 3);
    } else {
      nLoopAll *= t - 1;
    }
  } else if (t) {
    if (t === 1) {
      nLoopAll += Math.floor((nLoopAll + 1) / 2);
    }
    nLoopAll *= t;
  }
  let nLoopRw = (flags & YESCRYPT_RW) !== 0 ? Math.floor(nLoopAll / p) : 0;
  nChunk -= nChunk % 2;
  nLoopAll += nLoopAll % 2;
  nLoopRw += nLoopRw % 2;

  for (let i = 0, vChunk = 0; i < p; i++, vChunk += nChunk) {
    const np = i < p - 1 ? nChunk : N - vChunk;
    const Bp = B.subarray(i * s, (i + 1) * s);
    const Vp = V.subarray(vChunk * s);
    let lane: Pwxform | null = null;
    if (ctx) {
      lane = ctx[i]!;
      // The S-box is SMix1 (classic Salsa20/8 mixing, r = 1) of this lane's block over 96 entries.
      smix1(Bp, 1, S_WORDS / 32, 0, lane.S, XY, null);
      lane.s2 = 0;
      lane.s1 = S_THIRD;
      lane.s0 = 2 * S_THIRD;
      lane.w = 0;
      if (i === 0) {
        key = hmac(Buffer.from(bBytes.subarray(128 * r * i + (s - 16) * 4, 128 * r * i + s * 4)), key);
      }
    }
    smix1(Bp, r, np, flags, Vp, XY, lane);
    smix2(Bp, r, p2floor(np), nLoopRw, flags, Vp, XY, lane);
  }
  for (let i = 0; i < p; i++) {
    const Bp = B.subarray(i * s, (i + 1) * s);
    smix2(Bp, r, N, nLoopAll - nLoopRw, flags & ~YESCRYPT_RW, V, XY, ctx ? ctx[i]! : null);
  }
  return key;
}

/** The largest power of two not above x (x < 2^31). */
function p2floor(x: number): number {
  let y = x;
  while ((y & (y - 1)) !== 0) {
    y &= y - 1;
  }
  return y;
}

/**
 * Blocks are kept in Salsa20's SIMD order while mixing (word i of each 64-byte sub-block holds word i·5 mod 16);
 * pwxform and Integerify read that order, so it is part of the algorithm, not an optimisation.
 */
function loadShuffled(X: Uint32Array, B: Uint32Array, s: number): void {
  for (let k = 0; k < s; k += 16) {
    for (let i = 0; i < 16; i++) {
      X[k + i] = B[k + ((i * 5) % 16)]!;
    }
  }
}

function storeShuffled(B: Uint32Array, X: Uint32Array, s: number): void {
  for (let k = 0; k < s; k += 16) {
    for (let i = 0; i < 16; i++) {
      B[k + ((i * 5) % 16)] = X[k + i]!;
    }
  }
}

function blkxor(dst: Uint32Array, dstOff: number, src: Uint32Array, srcOff: number, count: number): void {
  for (let i = 0; i < count; i++) {
    dst[dstOff + i] ^= src[srcOff + i]!;
  }
}

function smix1(
  B: Uint32Array,
  r: number,
  N: number,
  flags: number,
  V: Uint32Array,
  XY: Uint32Array,
  ctx: Pwxform | null,
): void {
  const s = 32 * r;
  const X = XY.subarray(0, s);
  const Y = XY.subarray(s, 2 * s);
  loadShuffled(X, B, s);
  const last = (2 * r - 1) * 16;
  for (let i = 0; i < N; i++) {
    V.set(X, i * s);
    if ((flags & YESCRYPT_RW) !== 0 && i > 1) {
      // Wrap(Integerify(X), i): an earlier V entry, favouring recent ones. Only the low word matters (i < 2^30).
      const n = p2floor(i);
      const j = (X[last]! & (n - 1)) + (i - n);
      blkxor(X, 0, V, j * s, s);
    }
    if (ctx) {
      blockmixPwxform(X, ctx, r);
    } else {
      blockmixSalsa8(X, Y, r);
    }
  }
  storeShuffled(B, X, s);
}

function smix2(
  B: Uint32Array,
  r: number,
  N: number,
  nLoop: number,
  flags: number,
  V: Uint32Array,
  XY: Uint32Array,
  ctx: Pwxform | null,
): void {
  const s = 32 * r;
  const X = XY.subarray(0, s);
  const Y = XY.subarray(s, 2 * s);
  loadShuffled(X, B, s);
  const last = (2 * r - 1) * 16;
  for (let i = 0; i < nLoop; i++) {
    const j = (X[last]! & (N - 1)) >>> 0;
    blkxor(X, 0, V, j * s, s);
    if ((flags & YESCRYPT_RW) !== 0) {
      V.set(X, j * s);
    }
    if (ctx) {
      blockmixPwxform(X, ctx, r);
    } else {
      blockmixSalsa8(X, Y, r);
    }
  }
  storeShuffled(B, X, s);
}

function blockmixSalsa8(B: Uint32Array, Y: Uint32Array, r: number): void {
  const x = new Uint32Array(16);
  x.set(B.subarray((2 * r - 1) * 16, 2 * r * 16));
  for (let i = 0; i < 2 * r; i++) {
    blkxor(x, 0, B, i * 16, 16);
    salsa20(x, 0, 8);
    Y.set(x, i * 16);
  }
  for (let i = 0; i < r; i++) {
    B.set(Y.subarray(i * 2 * 16, i * 2 * 16 + 16), i * 16);
    B.set(Y.subarray((i * 2 + 1) * 16, (i * 2 + 1) * 16 + 16), (i + r) * 16);
  }
}

/**
 * BlockMix with pwxform: each 64-byte sub-block is XORed with the previous result and put through pwxform in
 * place, then the last sub-block goes through Salsa20/2.
 */
function blockmixPwxform(B: Uint32Array, ctx: Pwxform, r: number): void {
  const r1 = 2 * r;
  blkxor(B, 0, B, (r1 - 1) * 16, 16);
  pwxform(B, 0, ctx);
  for (let i = 1; i < r1; i++) {
    blkxor(B, i * 16, B, (i - 1) * 16, 16);
    pwxform(B, i * 16, ctx);
  }
  salsa20(B, (r1 - 1) * 16, 2);
}

/**
 * pwxform with 6 rounds, gather 4, simple 2: each 64-bit lane becomes `hi·lo + S0[p0] XOR S1[p1]`, and the middle
 * rounds write S2. The 32×32→64 multiply is split into 16-bit halves so every step stays exact in doubles.
 */
function pwxform(X: Uint32Array, off: number, ctx: Pwxform): void {
  const S = ctx.S;
  const s0 = ctx.s0;
  const s1 = ctx.s1;
  const s2 = ctx.s2;
  let w = ctx.w;
  for (let round = 0; round < 6; round++) {
    const writes = round !== 0 && round !== 5;
    for (let j = 0; j < 4; j++) {
      const base = off + j * 4;
      const p0 = s0 + ((X[base]! & S_MASK) >>> 2);
      const p1 = s1 + ((X[base + 1]! & S_MASK) >>> 2);
      for (let k = 0; k < 2; k++) {
        const idx = base + k * 2;
        const xl = X[idx]!;
        const xh = X[idx + 1]!;
        const a0 = xh & 0xffff;
        const a1 = xh >>> 16;
        const b0 = xl & 0xffff;
        const b1 = xl >>> 16;
        const low = a0 * b0;
        const mid = a1 * b0 + a0 * b1 + (low >>> 16);
        const hi = a1 * b1 + ((mid / 65536) | 0);
        const lo = imul(xh, xl) >>> 0;
        const sumLo = lo + S[p0 + k * 2]!;
        const carry = sumLo > 0xffffffff ? 1 : 0;
        const outLo = (sumLo ^ S[p1 + k * 2]!) >>> 0;
        const outHi = ((hi + S[p0 + k * 2 + 1]! + carry) ^ S[p1 + k * 2 + 1]!) >>> 0;
        X[idx] = outLo;
        X[idx + 1] = outHi;
        if (writes) {
          S[s2 + w * 2] = outLo;
          S[s2 + w * 2 + 1] = outHi;
          w++;
        }
      }
    }
  }
  ctx.s0 = s2;
  ctx.s1 = s0;
  ctx.s2 = s1;
  ctx.w = w & (256 * 2 - 1);
}

/** Salsa20 core (`rounds` = 8 or 2) on a 16-word block kept in SIMD order (see loadShuffled), added in place. */
function salsa20(B: Uint32Array, off: number, rounds: number): void {
  let x0 = B[off]!,
    x5 = B[off + 1]!,
    x10 = B[off + 2]!,
    x15 = B[off + 3]!,
    x4 = B[off + 4]!,
    x9 = B[off + 5]!,
    x14 = B[off + 6]!,
    x3 = B[off + 7]!,
    x8 = B[off + 8]!,
    x13 = B[off + 9]!,
    x2 = B[off + 10]!,
    x7 = B[off + 11]!,
    x12 = B[off + 12]!,
    x1 = B[off + 13]!,
    x6 = B[off + 14]!,
    x11 = B[off + 15]!;
  for (let i = 0; i < rounds; i += 2) {
    let u: number;
    u = (x0 + x12) | 0;
    x4 ^= (u << 7) | (u >>> 25);
    u = (x4 + x0) | 0;
    x8 ^= (u << 9) | (u >>> 23);
    u = (x8 + x4) | 0;
    x12 ^= (u << 13) | (u >>> 19);
    u = (x12 + x8) | 0;
    x0 ^= (u << 18) | (u >>> 14);
    u = (x5 + x1) | 0;
    x9 ^= (u << 7) | (u >>> 25);
    u = (x9 + x5) | 0;
    x13 ^= (u << 9) | (u >>> 23);
    u = (x13 + x9) | 0;
    x1 ^= (u << 13) | (u >>> 19);
    u = (x1 + x13) | 0;
    x5 ^= (u << 18) | (u >>> 14);
    u = (x10 + x6) | 0;
    x14 ^= (u << 7) | (u >>> 25);
    u = (x14 + x10) | 0;
    x2 ^= (u << 9) | (u >>> 23);
    u = (x2 + x14) | 0;
    x6 ^= (u << 13) | (u >>> 19);
    u = (x6 + x2) | 0;
    x10 ^= (u << 18) | (u >>> 14);
    u = (x15 + x11) | 0;
    x3 ^= (u << 7) | (u >>> 25);
    u = (x3 + x15) | 0;
    x7 ^= (u << 9) | (u >>> 23);
    u = (x7 + x3) | 0;
    x11 ^= (u << 13) | (u >>> 19);
    u = (x11 + x7) | 0;
    x15 ^= (u << 18) | (u >>> 14);
    u = (x0 + x3) | 0;
    x1 ^= (u << 7) | (u >>> 25);
    u = (x1 + x0) | 0;
    x2 ^= (u << 9) | (u >>> 23);
    u = (x2 + x1) | 0;
    x3 ^= (u << 13) | (u >>> 19);
    u = (x3 + x2) | 0;
    x0 ^= (u << 18) | (u >>> 14);
    u = (x5 + x4) | 0;
    x6 ^= (u << 7) | (u >>> 25);
    u = (x6 + x5) | 0;
    x7 ^= (u << 9) | (u >>> 23);
    u = (x7 + x6) | 0;
    x4 ^= (u << 13) | (u >>> 19);
    u = (x4 + x7) | 0;
    x5 ^= (u << 18) | (u >>> 14);
    u = (x10 + x9) | 0;
    x11 ^= (u << 7) | (u >>> 25);
    u = (x11 + x10) | 0;
    x8 ^= (u << 9) | (u >>> 23);
    u = (x8 + x11) | 0;
    x9 ^= (u << 13) | (u >>> 19);
    u = (x9 + x8) | 0;
    x10 ^= (u << 18) | (u >>> 14);
    u = (x15 + x14) | 0;
    x12 ^= (u << 7) | (u >>> 25);
    u = (x12 + x15) | 0;
    x13 ^= (u << 9) | (u >>> 23);
    u = (x13 + x12) | 0;
    x14 ^= (u << 13) | (u >>> 19);
    u = (x14 + x13) | 0;
    x15 ^= (u << 18) | (u >>> 14);
  }
  B[off] += x0;
  B[off + 1] += x5;
  B[off + 2] += x10;
  B[off + 3] += x15;
  B[off + 4] += x4;
  B[off + 5] += x9;
  B[off + 6] += x14;
  B[off + 7] += x3;
  B[off + 8] += x8;
  B[off + 9] += x13;
  B[off + 10] += x2;
  B[off + 11] += x7;
  B[off + 12] += x12;
  B[off + 13] += x1;
  B[off + 14] += x6;
  B[off + 15] += x11;
}
