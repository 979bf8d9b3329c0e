import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

import { z } from 'zod';

import { parseDialectCounts } from './rack/dialects.js';

/** Thrown for a bad command line: the CLI prints the message and exits 2. */
export class UsageError extends Error {}

export const USAGE = `usage:
  board-agent [--hardware linux] [--root /] --port N [--state-dir DIR (default <root>/var/lib/bmcd)]
  board-agent --simulate (= --hardware simulated) --port N --state-dir DIR [--password P]
    both:     [--host 127.0.0.1] [--trust-loopback] [--metrics-port M] [--www DIR] [--token-expiry-seconds S]
              [--validate-responses] [--tls] [--tls-cert FILE --tls-key FILE] [--tls-client-ca FILE]
              [--identity-header NAME] [--github-api-url URL] [--update-repo OWNER/REPO] [--audit-log FILE]
    Without --hardware the agent drives the hardware only when <root>/proc/device-tree/model names a Turing Pi.
  board-agent rack --boards N --port P --state-dir DIR [--host 127.0.0.1] [--password P] [--trust-loopback]
              [--dialects fork:3,upstream:2] [--token-expiry-seconds S] [--validate-responses]
              [--github-api-url URL] [--update-repo OWNER/REPO] [--boot-delay-ms MS] [--install-delay-ms MS]`;

const port = z.coerce.number({ error: 'expected a port number 0..65535' }).int().min(0).max(65535);
const common = {
  port,
  host: z.string().min(1).default('127.0.0.1'),
  trustLoopback: z.boolean().default(false),
  tokenExpirySeconds: z.coerce
    .number()
    .int()
    .min(1)
    .max(30 * 86400)
    .default(10800),
  validateResponses: z.boolean().default(false),
  /** GitHub API base for github firmware sources and the update check (a mirror for tests and air-gapped sites). */
  githubApiUrl: z.url({ protocol: /^https?$/ }).optional(),
  updateRepo: z
    .string()
    .regex(/^[^/\s]+\/[^/\s]+$/, 'expected owner/repo')
    .optional(),
};

const ZAgentArgs = z
  .object({
    ...common,
    /** Which board to serve; undefined = decided from the device tree (`resolveAgentArgs`). */
    hardware: z.enum(['linux', 'simulated'], { error: 'expected linux or simulated' }).optional(),
    /** Alias of `--hardware simulated`. */
    simulate: z.literal(true).optional(),
    /** Linux: every board path resolves under this directory (`/` on the controller, a fixture tree elsewhere). */
    root: z.string().min(1).optional(),
    /** Simulated: the board's state (required). Linux: the agent's own files (default `<root>/var/lib/bmcd`). */
    stateDir: z.string().min(1).optional(),
    /** Simulated root's password (default `turing`). The Linux backend checks `<root>/etc/shadow` instead. */
    password: z.string().min(1).optional(),
    metricsPort: port.optional(),
    www: z.string().min(1).optional(),
    /** Serve HTTPS; without --tls-cert/--tls-key a self-signed pair is generated in the state directory. */
    tls: z.boolean().default(false),
    tlsCert: z.string().min(1).optional(),
    tlsKey: z.string().min(1).optional(),
    /** Pins the client CA (config.yaml's tls.client_ca): the access operations may then not change it. */
    tlsClientCa: z.string().min(1).optional(),
    identityHeader: z.string().min(1).optional(),
    auditLog: z.string().min(1).optional(),
  })
  .strict()
  .refine((a) => (a.tlsCert === undefined) === (a.tlsKey === undefined), {
    message: '--tls-cert and --tls-key go together',
    path: ['tlsCert'],
  })
  .refine((a) => !(a.simulate && a.hardware === 'linux'), {
    message: 'contradicts --hardware linux',
    path: ['simulate'],
  })
  .transform(({ simulate, ...rest }) => ({ ...rest, hardware: simulate ? ('simulated' as const) : rest.hardware }));

const ZRackArgs = z
  .object({
    ...common,
    stateDir: z.string().min(1),
    password: z.string().min(1).default('turing'),
    boards: z.coerce.number().int().min(1).max(100_000),
    /** Controller reboot time of every simulated board (default 20 s, as the simulated board). */
    bootDelayMs: z.coerce.number().int().min(0).max(600_000).optional(),
    /** Extra time a firmware install takes before the board handles it (models download and flash time). */
    installDelayMs: z.coerce.number().int().min(0).max(600_000).default(0),
    dialects: z
      .string()
      .default('')
      .transform((spec, ctx) => {
        try {
          return parseDialectCounts(spec);
        } catch (err) {
          ctx.addIssue({ code: 'custom', message: (err as Error).message });
          return z.NEVER;
        }
      }),
  })
  .strict();

export type AgentArgs = z.infer<typeof ZAgentArgs>;

/** The agent's arguments once the hardware is decided; every default is filled in. */
export type ResolvedAgentArgs = Omit<AgentArgs, 'hardware' | 'root' | 'stateDir' | 'password'> &
  (
    | { hardware: 'simulated'; stateDir: string; password: string }
    | { hardware: 'linux'; root: string; stateDir: string }
  );

/** Device-tree model strings start `Turing Pi 2 (v2.4)`, `Turing Pi 2 (v2.5)`, ... (hardware facts §1.1). */
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
    if (rootFlag !== undefined) {throw new UsageError('--root applies to --hardware linux only');}
    if (stateDir === undefined)
      {throw new UsageError('--state-dir: is required with --simulate (the simulated board lives there)');}
    return { ...rest, hardware, stateDir, password: password ?? 'turing' };
  }
  if (password !== undefined) {
    throw new UsageError(
      '--password applies to the simulated board only; on Linux the accounts are those of <root>/etc/shadow',
    );
  }
  return { ...rest, hardware, root, stateDir: stateDir ?? join(root, 'var/lib/bmcd') };
}
export type RackArgs = z.infer<typeof ZRackArgs>;
export type ParsedArgs = { command: 'agent'; args: AgentArgs } | { command: 'rack'; args: RackArgs };

const BOOLEAN_FLAGS = new Set(['simulate', 'trustLoopback', 'validateResponses', 'tls']);

/** `--state-dir DIR` and `--state-dir=DIR` → `{ stateDir: 'DIR' }`; boolean flags take no value. */
function toObject(argv: readonly string[]): Record<string, string | boolean> {
  const out: Record<string, string | boolean> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) {throw new UsageError(`unexpected argument "${arg}"`);}
    const eq = arg.indexOf('=');
    const name = (eq < 0 ? arg.slice(2) : arg.slice(2, eq)).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    if (name in out) {throw new UsageError(`--${arg.slice(2, eq < 0 ? undefined : eq)} given twice`);}
    if (BOOLEAN_FLAGS.has(name)) {
      if (eq >= 0) {throw new UsageError(`--${arg.slice(2, eq)} takes no value`);}
      out[name] = true;
      continue;
    }
    if (eq >= 0) {
      out[name] = arg.slice(eq + 1);
      continue;
    }
    const value = argv[i + 1];
    if (value === undefined || value.startsWith('--')) {throw new UsageError(`${arg} needs a value`);}
    out[name] = value;
    i++;
  }
  return out;
}

export function parseArgs(argv: readonly string[]): ParsedArgs {
  const isRack = argv[0] === 'rack';
  const raw = toObject(isRack ? argv.slice(1) : argv);
  const schema = isRack ? ZRackArgs : ZAgentArgs;
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const flag = (key: PropertyKey) => `--${String(key).replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    if (issue.code === 'unrecognized_keys') {throw new UsageError(`unknown flag ${issue.keys.map(flag).join(', ')}`);}
    const where = issue.path.length > 0 ? `${flag(issue.path[0]!)}: ` : '';
    throw new UsageError(`${where}${issue.message}`);
  }
  return isRack
    ? { command: 'rack', args: parsed.data as RackArgs }
    : { command: 'agent', args: parsed.data as AgentArgs };
}
