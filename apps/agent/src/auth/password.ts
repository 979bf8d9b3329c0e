import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

// N=2^14, r=8 needs 16 MiB for one derivation: affordable on the 128 MB controller, slow enough to resist guessing.
const PARAMS = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, KEY_LENGTH, PARAMS, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/**
 * An account password held only as a salted scrypt hash; the clear text is never kept. Derivation runs on the libuv
 * pool, so a Basic check does not stall other requests. One instance may be shared by many simulated boards that
 * use the same password (the rack hashes its default once).
 */
export class PasswordHash {
  private constructor(
    private readonly salt: Buffer,
    private readonly hash: Buffer,
  ) {}

  static async create(password: string): Promise<PasswordHash> {
    const salt = randomBytes(16);
    return new PasswordHash(salt, await derive(password, salt));
  }

  async verify(candidate: string): Promise<boolean> {
    return timingSafeEqual(await derive(candidate, this.salt), this.hash);
  }
}
