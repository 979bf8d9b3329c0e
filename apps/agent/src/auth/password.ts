import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

// N=2^12, r=8: 4 MiB and ~8 ms per derivation here. The real board checks sha512-crypt (5000 rounds, cheaper still),
// so the simulator need not be stronger; at 2^14 (16 MiB, ~37 ms) a rack's first 50 logins queued for seconds and
// glibc kept each 16 MiB buffer in the process's RSS.
const PARAMS = { N: 4096, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const KEY_LENGTH = 32;

type ScryptParams = { N: number; r: number; p: number };

function derive(password: string, salt: Buffer, params: ScryptParams = PARAMS): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, KEY_LENGTH, { ...params, maxmem: PARAMS.maxmem }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

/** How a hash is kept on disk (the simulated board's stand-in for /etc/shadow). */
export interface StoredPasswordHash {
  algorithm: 'scrypt';
  N: number;
  r: number;
  p: number;
  /** base64 */
  salt: string;
  /** base64 */
  hash: string;
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
    private readonly params: ScryptParams = PARAMS,
  ) {}

  static async create(password: string): Promise<PasswordHash> {
    const salt = randomBytes(16);
    return new PasswordHash(salt, await derive(password, salt));
  }

  async verify(candidate: string): Promise<boolean> {
    return timingSafeEqual(await derive(candidate, this.salt, this.params), this.hash);
  }

  toStored(): StoredPasswordHash {
    const { N, r, p } = this.params;
    return { algorithm: 'scrypt', N, r, p, salt: this.salt.toString('base64'), hash: this.hash.toString('base64') };
  }

  /**
   * A hash read back from disk; null when it does not look like one of ours. The cost parameters are bounded so a
   * tampered file cannot make every login allocate gigabytes.
   */
  static fromStored(value: unknown): PasswordHash | null {
    if (typeof value !== 'object' || value === null) {
      return null;
    }
    const v = value as Partial<Record<keyof StoredPasswordHash, unknown>>;
    const int = (x: unknown, max: number) => typeof x === 'number' && Number.isInteger(x) && x >= 1 && x <= max;
    if (v.algorithm !== 'scrypt' || !int(v.N, PARAMS.N) || !int(v.r, PARAMS.r) || !int(v.p, 4)) {
      return null;
    }
    if (((v.N as number) & ((v.N as number) - 1)) !== 0 || (v.N as number) < 2) {
      return null;
    }
    if (typeof v.salt !== 'string' || typeof v.hash !== 'string') {
      return null;
    }
    const salt = Buffer.from(v.salt, 'base64');
    const hash = Buffer.from(v.hash, 'base64');
    if (salt.length < 8 || hash.length !== KEY_LENGTH) {
      return null;
    }
    return new PasswordHash(salt, hash, { N: v.N as number, r: v.r as number, p: v.p as number });
  }
}
