import { mkdir, readFile, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

import type { AccountStore } from './account-store.js';
import { writeFileAtomic } from '../backend/atomic-file.js';
import { oversizedCredential } from './credential-limits.js';
import { PasswordHash } from './password.js';

export const LOCAL_ACCOUNT = 'root';

/** Where a simulated board keeps root's hash, relative to its state directory. */
export const ACCOUNTS_FILE = 'accounts.json';

export interface LocalAccountsOptions {
  /** Root's password (or a shared precomputed hash) when nothing has been persisted yet. */
  password: string | PasswordHash;
  /**
   * Keep root's scrypt hash here (the simulated board's /etc/shadow): a password changed through the API then
   * survives an agent restart. Without it the account lives in memory only.
   */
  file?: string;
  log?: (message: string) => void;
}

/**
 * The simulated board's one account, `root`, held as a salted scrypt hash. A persisted hash wins over the start-up
 * password, as /etc/shadow wins over the factory password on a real board.
 */
export class LocalAccounts implements AccountStore {
  private readonly listeners: ((username: string) => void)[] = [];

  private constructor(
    private hash: PasswordHash,
    private readonly file: string | undefined,
  ) {}

  static async open(options: LocalAccountsOptions): Promise<LocalAccounts> {
    if (options.file !== undefined) {
      const stored = await readStored(
        options.file,
        options.log ?? ((m) => process.stderr.write(`board-agent: ${m}\n`)),
      );
      if (stored) {
        return new LocalAccounts(stored, options.file);
      }
    }
    const hash = typeof options.password === 'string' ? await PasswordHash.create(options.password) : options.password;
    return new LocalAccounts(hash, options.file);
  }

  async verify(username: string, password: string): Promise<boolean> {
    // No account can hold an over-long password (POST /access/password refuses one): nothing to derive.
    if (oversizedCredential(username, password) !== undefined) {
      return false;
    }
    // Always derive, so an unknown user costs as much as a wrong password (no account enumeration by timing).
    const ok = await this.hash.verify(password);
    return ok && username === LOCAL_ACCOUNT;
  }

  onPasswordChange(listener: (username: string) => void): void {
    this.listeners.push(listener);
  }

  private changed(): void {
    for (const listener of this.listeners) {
      listener(LOCAL_ACCOUNT);
    }
  }

  /** POST /access/password: persisted first (atomically), then in effect, so an answered 204 survives a restart. */
  async setPassword(username: string, password: string): Promise<void> {
    if (username !== LOCAL_ACCOUNT) {
      throw new Error(`no account ${username}`);
    }
    const hash = await PasswordHash.create(password);
    if (this.file !== undefined) {
      await mkdir(dirname(this.file), { recursive: true });
      await writeFileAtomic(this.file, `${JSON.stringify(hash.toStored(), null, 2)}\n`, 0o600);
    }
    this.hash = hash;
    this.changed();
  }

  /**
   * Put a password in effect from outside the API (the rack's fault injection and its restore). The persisted hash is
   * dropped, so a restart comes back with the start-up password rather than a stale API change.
   */
  async replace(password: string | PasswordHash): Promise<void> {
    const hash = typeof password === 'string' ? await PasswordHash.create(password) : password;
    if (this.file !== undefined) {
      await rm(this.file, { force: true });
    }
    // The rack restores its shared hash when faults are cleared: the same hash is no change (sessions stay).
    if (hash !== this.hash) {
      this.hash = hash;
      this.changed();
    }
  }
}

async function readStored(file: string, log: (message: string) => void): Promise<PasswordHash | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      log(`cannot read ${file}: ${(err as Error).message}; using the start-up password`);
    }
    return null;
  }
  let hash: PasswordHash | null;
  try {
    hash = PasswordHash.fromStored(JSON.parse(text));
  } catch {
    hash = null;
  }
  if (!hash) {
    log(`${file} does not hold a usable password hash; using the start-up password`);
  }
  return hash;
}
