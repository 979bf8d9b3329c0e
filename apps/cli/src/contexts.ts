// Named contexts (URL + token), kubectl-style, in the user's config dir: ~/.config/tpfleet/config.json on Linux
// ($XDG_CONFIG_HOME respected), or the file TPFLEET_CONFIG names. The file holds tokens: it is created 0600 in a
// 0700 directory, written whole to a temporary file and renamed (never half-written), and tightened if found looser.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import envPaths from 'env-paths';
import { CliError, UsageError } from './errors.js';

export interface StoredContext {
  url: string;
  token: string;
}

export interface ContextFile {
  current: string | null;
  contexts: Record<string, StoredContext>;
}

export function configPath(env: NodeJS.ProcessEnv): string {
  return env.TPFLEET_CONFIG || join(envPaths('tpfleet', { suffix: '' }).config, 'config.json');
}

export function readContexts(file: string): ContextFile {
  if (!existsSync(file)) {
    return { current: null, contexts: {} };
  }
  if ((statSync(file).mode & 0o077) !== 0) {
    chmodSync(file, 0o600);
  }
  let parsed: Partial<ContextFile>;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<ContextFile>;
  } catch (err) {
    throw new CliError(`${file} is not valid JSON (${(err as Error).message}); fix or delete it`);
  }
  return { current: parsed.current ?? null, contexts: parsed.contexts ?? {} };
}

export function writeContexts(file: string, data: ContextFile): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
}

/** A context name from a URL: host and port, e.g. `fleet.example.com` or `127.0.0.1-3000`. */
export function contextNameFor(url: string): string {
  const u = new URL(url);
  return u.port ? `${u.hostname}-${u.port}` : u.hostname;
}

export function normalizeUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new UsageError(`--url: "${raw}" is not a URL (e.g. https://fleet.example.com)`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new UsageError(`--url: only http and https are supported, got ${u.protocol}`);
  }
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
}

export interface ResolvedTarget {
  url: string;
  token: string;
  /** Where they came from, for `context current` and error messages. */
  source: string;
}

/**
 * The URL and token a command uses. TPFLEET_URL / TPFLEET_TOKEN override the context; a stored token is only ever
 * sent to the URL it was stored with (TPFLEET_URL naming another server needs TPFLEET_TOKEN too).
 */
export function resolveTarget(env: NodeJS.ProcessEnv, file: ContextFile, contextName?: string): ResolvedTarget {
  const name = contextName || env.TPFLEET_CONTEXT || file.current;
  if (contextName && !file.contexts[contextName]) {
    throw new UsageError(`no context named "${contextName}" (see \`tpfleet context list\`)`);
  }
  const ctx = name ? file.contexts[name] : undefined;
  const url = env.TPFLEET_URL ? normalizeUrl(env.TPFLEET_URL) : ctx?.url;
  if (!url) {
    throw new UsageError('no fleet manager configured: run `tpfleet login --url URL --token TOKEN` or set TPFLEET_URL');
  }
  const token = env.TPFLEET_TOKEN || (ctx && ctx.url === url ? ctx.token : undefined);
  if (!token) {
    throw new UsageError(`no token for ${url}: set TPFLEET_TOKEN or run \`tpfleet login --url ${url} --token-stdin\``);
  }
  const source = env.TPFLEET_URL ? 'TPFLEET_URL' : `context ${name}`;
  return { url, token, source };
}
