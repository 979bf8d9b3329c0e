// The one description of every setting the fleet manager reads from its environment. README's configuration table
// is generated from these descriptions (`node scripts/config-table.mjs`) and a test keeps the two in step.
import ipaddr from 'ipaddr.js';
import { z } from 'zod';

const bool = (def: string) =>
  z
    .enum(['1', '0', 'true', 'false'], { error: 'expected 1, 0, true or false' })
    .default(def as '1')
    .transform((v) => v === '1' || v === 'true');

const int = (def: number, min: number, max: number) =>
  z.coerce
    .number({ error: `expected an integer from ${min} to ${max}` })
    .int({ error: `expected an integer from ${min} to ${max}` })
    .min(min, { error: `expected an integer from ${min} to ${max}` })
    .max(max, { error: `expected an integer from ${min} to ${max}` })
    .default(def);

const pgUrl = z
  .url({ protocol: /^postgres(ql)?$/, error: 'expected a postgresql://user:password@host:port/database URL' })
  .optional();

// 32 bytes (AES-256-GCM), written as 44 base64 characters or 64 hex digits.
const key32 = z.string().refine((s) => decodeKey(s) !== null, {
  error: 'expected a 32-byte key, base64 (44 characters) or hex (64 digits); e.g. `openssl rand -base64 32`',
});

/**
 * Why a SECRET_KEY is too weak to use, or null. 32 random bytes hold about 30 distinct values; fewer than 16 means a
 * pattern (all zeros, as an old docker-compose.yml shipped, or one byte repeated), never the output of a generator.
 */
export function weakKeyReason(s: string): string | null {
  const key = decodeKey(s);
  if (!key) {
    return null; // malformed: the shape check says so
  }
  const distinct = new Set(key).size;
  return distinct < 16 ? `a patterned key (${distinct} distinct byte values in 32)` : null;
}

/** Placeholder tokens that have shipped in examples; a deployment must not run with one. */
const KNOWN_TOKENS = /change-?me|changeme|example|placeholder|secret-?token|admin-?token-?here/i;

/** Why a BOOTSTRAP_ADMIN_TOKEN is too weak to use, or null. */
export function weakTokenReason(t: string): string | null {
  if (KNOWN_TOKENS.test(t)) {
    return 'a known placeholder token';
  }
  const distinct = new Set(t).size;
  return distinct < 10 ? `a patterned token (${distinct} distinct characters)` : null;
}

export function decodeKey(s: string): Buffer | null {
  const t = s.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) {
    return Buffer.from(t, 'hex');
  }
  if (/^[A-Za-z0-9+/]{43}=$/.test(t)) {
    return Buffer.from(t, 'base64');
  }
  return null;
}

/** The entries of a comma-separated network list that are neither a CIDR nor an address. */
function badNetworks(list: string): string[] {
  return list
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '' && !ipaddr.isValidCIDR(n) && !ipaddr.isValid(n));
}

export const envSchema = z.object({
  DATABASE_URL: pgUrl.describe(
    'PostgreSQL connection URL. Unset: an embedded PostgreSQL (PGlite) in PGLITE_DIR, for first runs and demos.',
  ),
  DB_AUTO_MIGRATE: bool('0').describe(
    'Apply pending migrations at boot. Always on for the embedded database; otherwise run `npm run db:migrate`.',
  ),
  PGLITE_DIR: z
    .string()
    .min(1)
    .default('.data/pglite')
    .describe('Data directory of the embedded database (used only when DATABASE_URL is unset).'),
  REDIS_URL: z
    .url({ protocol: /^rediss?$/, error: 'expected a redis://host:port URL' })
    .optional()
    .describe("Redis for the job queues. Unset: the queues live in PostgreSQL (BullMQ's PostgreSQL backend)."),
  QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/, { error: 'expected letters, digits, _ or -' })
    .default('tpfleet')
    .describe('Key prefix of the queues in Redis (lets several deployments or test files share one Redis).'),
  HOST: z.string().min(1).default('127.0.0.1').describe('Address the HTTP API listens on (0.0.0.0 in containers).'),
  PORT: int(3000, 0, 65535).describe('HTTP port of the API (0 picks a free port).'),
  HTTP_HEADERS_TIMEOUT_SECONDS: int(60, 1, 300).describe(
    "Seconds a client has to send a request's headers once it started it; a slower one is answered 408 and its " +
      'connection closed (checked every quarter of this).',
  ),
  ROLE: z
    .enum(['api', 'worker', 'all'], { error: 'expected api, worker or all' })
    .default('all')
    .describe('What this process runs: the HTTP API, the queue workers, or both. `--role` overrides it.'),
  BOOTSTRAP_ADMIN_TOKEN: z
    .string({ error: 'expected a token of at least 24 characters; e.g. `openssl rand -hex 24`' })
    .min(24, { error: 'expected a token of at least 24 characters; e.g. `openssl rand -hex 24`' })
    .refine((t) => weakTokenReason(t) === null, {
      error: (issue) =>
        `${weakTokenReason(String(issue.input)) ?? 'a weak token'}: refused; generate one with \`openssl rand -hex 24\``,
    })
    .describe(
      'Admin bearer token, stored hashed as the admin token "bootstrap admin" at first start. It stays valid until an ' +
        'admin revokes it (DELETE /api/v1/tokens/{id}); once revoked it is not re-created. Required; a known or ' +
        'weak value is refused.',
    ),
  SECRET_KEY: key32
    .refine((k) => weakKeyReason(k) === null, {
      error: (issue) =>
        `${weakKeyReason(String(issue.input)) ?? 'a weak key'}: refused; generate one with \`openssl rand -base64 32\``,
    })
    .describe(
      'Key that encrypts stored board credentials (AES-256-GCM): 32 random bytes, base64 or hex. Required; a ' +
        'patterned key (such as all zeros) is refused.',
    ),
  SECRET_KEY_PREVIOUS: z
    .string()
    .optional()
    .refine((s) => s === undefined || s.split(',').every((k) => decodeKey(k) !== null), {
      error: 'expected a comma-separated list of 32-byte keys, base64 or hex',
    })
    .describe('Comma-separated previous SECRET_KEYs, still accepted for decryption during a key rotation.'),
  OUTBOUND_ALLOWED_NETWORKS: z
    .string()
    .optional()
    .refine((s) => s === undefined || badNetworks(s).length === 0, {
      error: (issue) =>
        `not a network: ${badNetworks(String(issue.input)).join(', ')}; expected comma-separated CIDRs or addresses, ` +
        'e.g. 127.0.0.0/8,::1/128',
    })
    .describe(
      'Comma-separated networks (CIDR, e.g. `127.0.0.0/8,::1/128,169.254.10.0/24`) that alert receivers and board ' +
        'scans may reach although they are refused by default: loopback, link-local (169.254.0.0/16, fe80::/10) and ' +
        'cloud metadata addresses (169.254.169.254, fd00:ec2::254); node image downloads are refused the last two. ' +
        'Unset: none (`npm run demo` allows loopback). Board URLs registered by an admin are not restricted; see ' +
        'docs/security.md.',
    ),
  POLL_INTERVAL_SECONDS: int(15, 1, 86400).describe('How often each reachable board is polled.'),
  POLL_SLOW_INTERVAL_SECONDS: int(3600, 1, 604800).describe(
    'How often /firmware/check and /firmware/slots are read, and how often an unreachable board is retried at most.',
  ),
  POLL_UNREACHABLE_AFTER: int(3, 1, 1000).describe(
    'Consecutive failed polls after which a board counts as unreachable.',
  ),
  POLL_CONCURRENCY: int(64, 1, 1000).describe(
    'Boards polled at the same time by one worker process (also the width of the connection pool to each board origin).',
  ),
  POLL_SLOW_CONCURRENCY: int(32, 1, 1000).describe(
    'Boards whose /firmware/check and /firmware/slots one worker process reads at the same time. A lane of its own: a board checking for updates on a slow or missing uplink must not hold up anyone’s health polls.',
  ),
  POLL_LAGGING_CONCURRENCY: int(128, 1, 1000).describe(
    'Boards of the lagging lane (last poll slow, timed out or unanswered) one worker process polls at the same time. Their own queue and slots: a board that answers in seconds or not at all costs its own wait, never a healthy board’s slot.',
  ),
  POLL_TIMEOUT_MS: int(5000, 100, 600000).describe('Timeout of one request to a board.'),
  NODE_IMAGE_UPLOAD_DIR: z
    .string()
    .min(1)
    .default('.data/node-images')
    .describe(
      'Where uploaded node OS images wait for their flash job (POST /api/v1/boards/{id}/nodes/{node}/image/upload); each is removed when its job ends, and leftovers (older than 10 minutes: another process may be writing one) at start. With separate `api` and `worker` processes it must be one directory both see.',
    ),
  NODE_IMAGE_UPLOAD_MAX_BYTES: int(32 * 1024 ** 3, 1, Number.MAX_SAFE_INTEGER).describe(
    'Largest node OS image an upload may declare (Content-Length), in bytes; more is refused with 413 before any byte is stored.',
  ),
  THERMAL_RAW_RETENTION_HOURS: int(24, 1, 8760).describe(
    'How long raw thermal samples (one per sensor per poll) are kept; older history is read from the 5-minute means. Whole hourly partitions are dropped, so an hour stays up to one hour longer; each hour kept is a partition (a statement over all of them, such as deleting a board, locks each: past a few weeks raise PostgreSQL max_locks_per_transaction).',
  ),
  THERMAL_ROLLUP_RETENTION_DAYS: int(30, 1, 3650).describe('How long the 5-minute thermal means are kept.'),
  THERMAL_COMPACT_INTERVAL_SECONDS: int(300, 1, 3600).describe(
    'How often raw thermal samples are rolled into 5-minute means and both retentions applied (the first run comes at most a minute after start).',
  ),
  LOG_FORMAT: z
    .enum(['json', 'pretty'], { error: 'expected json or pretty' })
    .default('json')
    .describe(
      'How log lines are written: one JSON object per line (for containers and log shippers), or pretty, coloured text for a terminal (`npm run demo` uses it). Both carry the request or job id.',
    ),
  LOG_LEVEL: z
    .enum(['error', 'warn', 'log', 'debug', 'verbose'], { error: 'expected error, warn, log, debug or verbose' })
    .default('log')
    .describe('Most detailed log level written.'),
});

export type Env = z.infer<typeof envSchema>;
