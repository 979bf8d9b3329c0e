import { type FSWatcher, watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';

import type { AccountStore } from './account-store.js';
import { BoardError } from '../backend/backend.js';
import { CommandRunError, type CommandRunner, lastLine } from '../backend/linux/runner.js';
import { oversizedCredential } from './credential-limits.js';
import { cryptScheme } from './sha-crypt.js';
import { ShaCryptPool } from './sha-crypt-pool.js';
import { parseYescryptSetting, YESCRYPT_MAX_MEMORY } from './yescrypt.js';

const CHPASSWD_TIMEOUT_MS = 15_000;
/** chpasswd writes a temp file and renames it; several events arrive for one change. */
const DEFAULT_DEBOUNCE_MS = 150;
/**
 * Checked for an unknown user when no account is loaded (5000 rounds, as a default `$6$`). With accounts, an unknown
 * user is checked against the first account's hash instead, so it costs what a wrong password costs (a yescrypt
 * check takes far longer than a `$6$` one: a fixed dummy would tell which names exist).
 */
const DUMMY_HASH = '$6$agentdummysalt$' + 'x'.repeat(86);

export interface ShadowAccountsOptions {
  /** Host path of the board's /etc/shadow (`<root>/etc/shadow`). */
  shadowFile: string;
  /** The Linux backend's command runner: chpasswd runs through it (argument vector, stdin, hard timeout). */
  runner: CommandRunner;
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** Watch the file's directory and re-read on change (default true; tests may call `reload()` instead). */
  watch?: boolean;
  debounceMs?: number;
  /** Where the crypt checks run; default a pool of its own (one worker thread), closed with the accounts. */
  hasher?: ShaCryptPool;
}

/**
 * The controller's accounts, as bmcd has them: users and crypt hashes from /etc/shadow,
 * re-read when the file changes, every account allowed (there are no roles). Entries whose hash starts with `*` or
 * `!` (no password, locked) or is empty are not loaded. `$6$`, `$5$` (sha-crypt.ts) and `$y$` (yescrypt.ts) are
 * verified on worker threads; older schemes, and yescrypt costs the controller cannot afford, are refused with a
 * logged warning. A password change runs
 * `chpasswd` with `user:password` on its stdin, never in its arguments.
 */
export class ShadowAccounts implements AccountStore {
  private entries = new Map<string, string>();
  private loaded = false;
  private readonly listeners: ((username: string) => void)[] = [];
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private loading: Promise<void> = Promise.resolve();
  /** The crypt checks run on worker threads: on the event loop one check stalled every other request. */
  readonly hasher: ShaCryptPool;

  private constructor(private readonly options: ShadowAccountsOptions) {
    this.hasher = options.hasher ?? new ShaCryptPool();
  }

  static async open(options: ShadowAccountsOptions): Promise<ShadowAccounts> {
    const accounts = new ShadowAccounts(options);
    await accounts.reload();
    if (options.watch ?? true) {
      accounts.startWatching();
    }
    return accounts;
  }

  onPasswordChange(listener: (username: string) => void): void {
    this.listeners.push(listener);
  }

  /** The users that can log in (tests, diagnostics). */
  users(): string[] {
    return [...this.entries.keys()];
  }

  async verify(username: string, password: string): Promise<boolean> {
    // Over-long credentials cannot match any account (no such password can be set), so nothing is hashed.
    if (oversizedCredential(username, password) !== undefined) {
      return false;
    }
    await this.loading;
    const hash = this.entries.get(username);
    const ok = await this.hasher.verify(password, hash ?? this.entries.values().next().value ?? DUMMY_HASH);
    return ok && hash !== undefined;
  }

  async setPassword(username: string, password: string): Promise<void> {
    if (/[:\n\r]/.test(username) || /[\n\r]/.test(password)) {
      // chpasswd reads `user:password` lines; a newline would start a second change.
      throw new BoardError(400, 'the user name or password contains a character chpasswd cannot take');
    }
    let result;
    try {
      // `-c SHA512`, not the system's default (yescrypt on Debian 12): the agent verifies both, but yescrypt in
      // JavaScript costs the controller far more CPU per login (apps/agent/README.md).
      result = await this.options.runner.run('chpasswd', ['-c', 'SHA512'], {
        timeoutMs: CHPASSWD_TIMEOUT_MS,
        input: `${username}:${password}\n`,
      });
    } catch (err) {
      if (err instanceof CommandRunError && err.reason === 'spawn') {
        throw new BoardError(500, `Failed to change the password: could not run chpasswd: ${err.message}`);
      }
      throw new BoardError(
        500,
        `Failed to change the password: the password change did not complete: ${(err as Error).message}`,
      );
    }
    if (result.code !== 0) {
      throw new BoardError(500, `Failed to change the password: the system refused the change: ${lastLine(result)}`);
    }
    // Do not wait for the watcher: the next login must see the new hash.
    await this.reload();
    if (!(await this.verify(username, password))) {
      throw new BoardError(
        500,
        'Failed to change the password: the password change did not complete: /etc/shadow does not hold the new password',
      );
    }
  }

  /** Re-read the shadow file. A file that cannot be read leaves no account (nobody can log in) and logs why. */
  reload(): Promise<void> {
    this.loading = this.loading.then(() => this.load());
    return this.loading;
  }

  close(): void {
    clearTimeout(this.timer);
    this.watcher?.close();
    this.watcher = undefined;
    if (this.options.hasher === undefined) {
      void this.hasher.close();
    }
  }

  private async load(): Promise<void> {
    let text: string;
    try {
      text = await readFile(this.options.shadowFile, 'utf8');
    } catch (err) {
      this.replaceEntries(new Map());
      this.log(
        'error',
        `cannot read ${this.options.shadowFile}: ${(err as Error).message}; no account can log in (the agent must run as root)`,
      );
      return;
    }
    this.replaceEntries(parseShadow(text, (message) => this.log('warn', message)));
  }

  /** Accounts whose hash changed or that went away are reported, so their sessions end (not on the first load). */
  private replaceEntries(entries: Map<string, string>): void {
    const before = this.entries;
    this.entries = entries;
    if (!this.loaded) {
      this.loaded = true;
      return;
    }
    for (const [name, hash] of before) {
      if (entries.get(name) !== hash) {
        for (const listener of this.listeners) {
          listener(name);
        }
      }
    }
  }

  private startWatching(): void {
    const name = basename(this.options.shadowFile);
    try {
      this.watcher = watch(dirname(this.options.shadowFile), { persistent: false }, (_event, file) => {
        if (file !== null && file !== name) {
          return;
        }
        clearTimeout(this.timer);
        this.timer = setTimeout(() => void this.reload(), this.options.debounceMs ?? DEFAULT_DEBOUNCE_MS);
        this.timer.unref();
      });
      this.watcher.on('error', (err) =>
        this.log('warn', `stopped watching ${this.options.shadowFile}: ${err.message}`),
      );
    } catch (err) {
      this.log('warn', `cannot watch ${this.options.shadowFile} (changes need a restart): ${(err as Error).message}`);
    }
  }

  private log(level: 'info' | 'warn' | 'error', message: string): void {
    (this.options.log ?? ((l, m) => process.stderr.write(`[accounts] ${l}: ${m}\n`)))(level, message);
  }
}

/** `name:hash:...` lines → name → hash, keeping only hashes the agent can verify. */
export function parseShadow(text: string, warn: (message: string) => void): Map<string, string> {
  const entries = new Map<string, string>();
  for (const line of text.split('\n')) {
    const fields = line.split(':');
    if (fields.length < 2 || fields[0] === '') {
      continue;
    }
    const [name, hash] = [fields[0]!, fields[1]!];
    if (hash === '' || hash.startsWith('*') || hash.startsWith('!')) {
      continue;
    }
    const scheme = cryptScheme(hash);
    if (scheme === 'yescrypt' && parseYescryptSetting(hash) === null) {
      warn(
        `account ${name} is not loaded: its yescrypt ($y$) hash has parameters the agent cannot compute (more than ` +
          `${YESCRYPT_MAX_MEMORY / 1024 / 1024} MiB, a ROM, or a malformed setting); set the password with ` +
          '`chpasswd -c SHA512` (or through the API) to use it',
      );
      continue;
    }
    if (scheme === 'unsupported') {
      warn(
        `account ${name} is not loaded: its MD5/DES or unknown hash cannot be verified by the agent; set the ` +
          'password with `chpasswd -c SHA512` (or through the API) to use it',
      );
      continue;
    }
    entries.set(name, hash);
  }
  return entries;
}
