import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

import { parseDialectCounts } from './rack/dialect-counts.js';
import type { DialectName } from './server/dialect.js';

/** Thrown for a bad command line: the CLI prints the message and exits 2. */
export class UsageError extends Error {}

export const USAGE = `usage:
  board-agent [--hardware linux] [--root /] --port N [--state-dir DIR (default <root>/var/lib/bmcd)]
  board-agent --simulate (= --hardware simulated) --port N --state-dir DIR [--password P]
    both:     [--host 127.0.0.1] [--trust-loopback] [--metrics-port M] [--www DIR] [--token-expiry-seconds S]
              [--validate-responses] [--tls] [--tls-cert FILE --tls-key FILE] [--tls-client-ca FILE]
              [--identity-header NAME] [--github-api-url URL] [--update-repo OWNER/REPO] [--audit-log FILE]
              [--max-connections N (default 512)] [--max-connections-per-address N (default 32)]
    Without --hardware the agent drives the hardware only when <root>/proc/device-tree/model names a Turing Pi.
  board-agent rack --boards N --port P --state-dir DIR [--host 127.0.0.1] [--password P] [--trust-loopback]
              [--dialects fork:3,upstream:2] [--token-expiry-seconds S] [--validate-responses]
              [--github-api-url URL] [--update-repo OWNER/REPO] [--boot-delay-ms MS] [--install-delay-ms MS]
              [--control-host ADDRESS (default: loopback only; 0.0.0.0 for any)] [--tls]`;

interface CommonArgs {
  port: number;
  host: string;
  trustLoopback: boolean;
  tokenExpirySeconds: number;
  validateResponses: boolean;
  /** GitHub API base for github firmware sources and the update check (a mirror for tests and air-gapped sites). */
  githubApiUrl?: string;
  updateRepo?: string;
}

export interface AgentArgs extends CommonArgs {
  /** Which board to serve; undefined = decided from the device tree (`resolveAgentArgs`). */
  hardware?: 'linux' | 'simulated';
  /** Linux: every board path resolves under this directory (`/` on the controller, a fixture tree elsewhere). */
  root?: string;
  /** Simulated: the board's state (required). Linux: the agent's own files (default `<root>/var/lib/bmcd`). */
  stateDir?: string;
  /** Simulated root's password (default `turing`). The Linux backend checks `<root>/etc/shadow` instead. */
  password?: string;
  metricsPort?: number;
  www?: string;
  /** Serve HTTPS; without --tls-cert/--tls-key a self-signed pair is generated in the state directory. */
  tls: boolean;
  tlsCert?: string;
  tlsKey?: string;
  /** Pins the client CA (config.yaml's tls.client_ca): the access operations may then not change it. */
  tlsClientCa?: string;
  identityHeader?: string;
  auditLog?: string;
  /** Open connections in all, and from one client address (src/http/connection-limits.ts; defaults there). */
  maxConnections?: number;
  maxConnectionsPerAddress?: number;
}

export interface RackArgs extends CommonArgs {
  stateDir: string;
  password: string;
  boards: number;
  /** Controller reboot time of every simulated board (default 20 s, as the simulated board). */
  bootDelayMs?: number;
  /** Extra time a firmware install takes before the board handles it (models download and flash time). */
  installDelayMs: number;
  dialects: { name: DialectName; count: number }[];
  /** The local address the control API (`/rack`, no credential) answers on; default loopback only. */
  controlHost?: string;
  /** Serve HTTPS with a self-signed pair generated in the state directory (`<dir>/tls/`), as a board's agent does. */
  tls: boolean;
}

/*
 * Flags are checked by hand (no zod: it would cost the 128 MB controller ~14 MB for a few string checks). Each flag
 * name maps to its check; a check gets the raw value and the flag as typed, and throws a UsageError naming it.
 */
type Raw = Record<string, string | boolean>;
type Check = (value: string, flag: string) => unknown;

const text: Check = (value, flag) => {
  if (value === '') {
    throw new UsageError(`${flag}: must not be empty`);
  }
  return value;
};
const wholeNumber =
  (min: number, max: number, expected = `a whole number from ${min} to ${max}`): Check =>
  (value, flag) => {
    const n = /^\d+$/.test(value.trim()) ? Number(value) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw new UsageError(`${flag}: expected ${expected}`);
    }
    return n;
  };
const port = wholeNumber(0, 65535, 'a port number 0..65535');

const COMMON_CHECKS: Record<string, Check> = {
  port,
  host: text,
  tokenExpirySeconds: wholeNumber(1, 30 * 86400),
  githubApiUrl: (value, flag) => {
    const url = URL.canParse(value) ? new URL(value) : null;
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw new UsageError(`${flag}: expected an http or https URL`);
    }
    return value;
  },
  updateRepo: (value, flag) => {
    if (!/^[^/\s]+\/[^/\s]+$/.test(value)) {
      throw new UsageError(`${flag}: expected owner/repo`);
    }
    return value;
  },
};

const AGENT_CHECKS: Record<string, Check> = {
  ...COMMON_CHECKS,
  hardware: (value, flag) => {
    if (value !== 'linux' && value !== 'simulated') {
      throw new UsageError(`${flag}: expected linux or simulated`);
    }
    return value;
  },
  root: text,
  stateDir: text,
  password: text,
  metricsPort: port,
  www: text,
  tlsCert: text,
  tlsKey: text,
  tlsClientCa: text,
  identityHeader: text,
  auditLog: text,
  maxConnections: wholeNumber(1, 100_000),
  maxConnectionsPerAddress: wholeNumber(1, 100_000),
};
const AGENT_SWITCHES = ['trustLoopback', 'validateResponses', 'simulate', 'tls'];

const RACK_CHECKS: Record<string, Check> = {
  ...COMMON_CHECKS,
  stateDir: text,
  password: text,
  boards: wholeNumber(1, 100_000),
  bootDelayMs: wholeNumber(0, 600_000),
  installDelayMs: wholeNumber(0, 600_000),
  controlHost: text,
  dialects: (value, flag) => {
    try {
      return parseDialectCounts(value);
    } catch (err) {
      throw new UsageError(`${flag}: ${(err as Error).message}`, { cause: err });
    }
  },
};
const RACK_SWITCHES = ['trustLoopback', 'validateResponses', 'tls'];

/** `stateDir` → `--state-dir`. */
const flagOf = (key: string) => `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/** Refuse unknown flags (all of them at once), then run each given flag's check; switches are booleans already. */
function checked(raw: Raw, checks: Record<string, Check>, switches: readonly string[]): Record<string, unknown> {
  const unknown = Object.keys(raw).filter((key) => !Object.hasOwn(checks, key) && !switches.includes(key));
  if (unknown.length > 0) {
    throw new UsageError(`unknown flag ${unknown.map(flagOf).join(', ')}`);
  }
  const out: Record<string, unknown> = {};
  for (const key of switches) {
    out[key] = raw[key] === true;
  }
  for (const [key, value] of Object.entries(raw)) {
    if (!switches.includes(key)) {
      out[key] = checks[key]!(value as string, flagOf(key));
    }
  }
  return out;
}

function agentArgs(raw: Raw): AgentArgs {
  const { simulate, ...args } = checked(raw, AGENT_CHECKS, AGENT_SWITCHES) as Omit<AgentArgs, 'port'> & {
    port?: number;
    simulate: boolean;
  };
  if (args.port === undefined) {
    throw new UsageError('--port: is required (a port number 0..65535; 0 picks a free one)');
  }
  if ((args.tlsCert === undefined) !== (args.tlsKey === undefined)) {
    throw new UsageError('--tls-cert: --tls-cert and --tls-key go together');
  }
  if (simulate && args.hardware === 'linux') {
    throw new UsageError('--simulate: contradicts --hardware linux');
  }
  return {
    ...args,
    port: args.port,
    host: args.host ?? '127.0.0.1',
    tokenExpirySeconds: args.tokenExpirySeconds ?? 10800,
    hardware: simulate ? 'simulated' : args.hardware,
  };
}

function rackArgs(raw: Raw): RackArgs {
  const args = checked(raw, RACK_CHECKS, RACK_SWITCHES) as Partial<RackArgs> &
    Pick<RackArgs, 'trustLoopback' | 'validateResponses' | 'tls'>;
  for (const key of ['port', 'stateDir', 'boards'] as const) {
    if (args[key] === undefined) {
      throw new UsageError(`${flagOf(key)}: is required`);
    }
  }
  return {
    ...args,
    port: args.port!,
    stateDir: args.stateDir!,
    boards: args.boards!,
    host: args.host ?? '127.0.0.1',
    tokenExpirySeconds: args.tokenExpirySeconds ?? 10800,
    password: args.password ?? 'turing',
    installDelayMs: args.installDelayMs ?? 0,
    dialects: args.dialects ?? [],
  };
}

/** The agent's arguments once the hardware is decided; every default is filled in. */
export type ResolvedAgentArgs = Omit<AgentArgs, 'hardware' | 'root' | 'stateDir' | 'password'> &
  (
    | { hardware: 'simulated'; stateDir: string; password: string }
    | { hardware: 'linux'; root: string; stateDir: string }
  );

/** Device-tree model strings start `Turing Pi 2 (v2.4)`, `Turing Pi 2 (v2.5)`, … */
const TURING_PI_MODEL = /Turing Pi/;

/**
 * Decide the hardware and fill in what depends on it. Without `--hardware`, the agent drives GPIO only when
 * `<root>/proc/device-tree/model` names a Turing Pi: a laptop must never start toggling lines by accident, so
 * anything else is refused with a pointer to `--simulate`.
 */
export async function resolveAgentArgs(args: AgentArgs): Promise<ResolvedAgentArgs> {
  const { hardware: chosen, root: rootFlag, stateDir, password, ...rest } = args;
  const root = resolve(rootFlag ?? '/');
  let hardware = chosen;
  if (hardware === undefined) {
    const modelFile = join(root, 'proc/device-tree/model');
    const model = (await readFile(modelFile, 'utf8').catch(() => null))?.replace(/\0+$/, '').trim() ?? null;
    if (model === null || !TURING_PI_MODEL.test(model)) {
      const found = model === null ? 'does not exist' : `reads "${model.slice(0, 80)}"`;
      throw new UsageError(
        `${modelFile} ${found}: this is not a Turing Pi controller, so the agent will not drive its GPIO lines. ` +
          'Pass --simulate --state-dir DIR to serve a simulated board (or --hardware linux to insist).',
      );
    }
    hardware = 'linux';
  }
  if (hardware === 'simulated') {
    if (rootFlag !== undefined) {
      throw new UsageError('--root applies to --hardware linux only');
    }
    if (stateDir === undefined) {
      throw new UsageError('--state-dir: is required with --simulate (the simulated board lives there)');
    }
    return { ...rest, hardware, stateDir, password: password ?? 'turing' };
  }
  if (password !== undefined) {
    throw new UsageError(
      '--password applies to the simulated board only; on Linux the accounts are those of <root>/etc/shadow',
    );
  }
  return { ...rest, hardware, root, stateDir: stateDir ?? join(root, 'var/lib/bmcd') };
}
export type ParsedArgs =
  { command: 'agent'; args: AgentArgs } | { command: 'rack'; args: RackArgs } | { command: 'help' };

const BOOLEAN_FLAGS = new Set(['simulate', 'trustLoopback', 'validateResponses', 'tls']);

/** `--state-dir DIR` and `--state-dir=DIR` → `{ stateDir: 'DIR' }`; boolean flags take no value. */
function toObject(argv: readonly string[]): Record<string, string | boolean> {
  const out: Record<string, string | boolean> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) {
      throw new UsageError(`unexpected argument "${arg}"`);
    }
    const eq = arg.indexOf('=');
    const name = (eq < 0 ? arg.slice(2) : arg.slice(2, eq)).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    if (name in out) {
      throw new UsageError(`--${arg.slice(2, eq < 0 ? undefined : eq)} given twice`);
    }
    if (BOOLEAN_FLAGS.has(name)) {
      if (eq >= 0) {
        throw new UsageError(`--${arg.slice(2, eq)} takes no value`);
      }
      out[name] = true;
      continue;
    }
    if (eq >= 0) {
      out[name] = arg.slice(eq + 1);
      continue;
    }
    const value = argv[i + 1];
    if (value === undefined || value.startsWith('--')) {
      throw new UsageError(`${arg} needs a value`);
    }
    out[name] = value;
    i++;
  }
  return out;
}

export function parseArgs(argv: readonly string[]): ParsedArgs {
  // Asked for help anywhere on the line: the usage, whatever else is there (not "--help needs a value").
  if (argv.some((a) => a === '--help' || a === '-h' || a === 'help')) {
    return { command: 'help' };
  }
  return argv[0] === 'rack'
    ? { command: 'rack', args: rackArgs(toObject(argv.slice(1))) }
    : { command: 'agent', args: agentArgs(toObject(argv)) };
}
