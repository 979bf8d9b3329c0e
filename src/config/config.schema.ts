// The one description of every setting the fleet manager reads from its environment. README's configuration table
// is generated from these descriptions (`node scripts/config-table.mjs`) and a test keeps the two in step.
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
  ROLE: z
    .enum(['api', 'worker', 'all'], { error: 'expected api, worker or all' })
    .default('all')
    .describe('What this process runs: the HTTP API, the queue workers, or both. `--role` overrides it.'),
  BOOTSTRAP_ADMIN_TOKEN: z
    .string({ error: 'expected a token of at least 24 characters; e.g. `openssl rand -hex 24`' })
    .min(24, { error: 'expected a token of at least 24 characters; e.g. `openssl rand -hex 24`' })
    .describe('Admin bearer token accepted before any user token exists. Required.'),
  SECRET_KEY: key32.describe(
    'Key that encrypts stored board credentials (AES-256-GCM): 32 bytes, base64 or hex. Required.',
  ),
  SECRET_KEY_PREVIOUS: z
    .string()
    .optional()
    .refine((s) => s === undefined || s.split(',').every((k) => decodeKey(k) !== null), {
      error: 'expected a comma-separated list of 32-byte keys, base64 or hex',
    })
    .describe('Comma-separated previous SECRET_KEYs, still accepted for decryption during a key rotation.'),
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
  POLL_TIMEOUT_MS: int(5000, 100, 600000).describe('Timeout of one request to a board.'),
  THERMAL_RAW_RETENTION_HOURS: int(24, 1, 8760).describe(
    'How long raw thermal samples (one per sensor per poll) are kept; older history is read from the 5-minute means.',
  ),
  THERMAL_ROLLUP_RETENTION_DAYS: int(30, 1, 3650).describe('How long the 5-minute thermal means are kept.'),
  LOG_LEVEL: z
    .enum(['error', 'warn', 'log', 'debug', 'verbose'], { error: 'expected error, warn, log, debug or verbose' })
    .default('log')
    .describe('Most detailed log level written.'),
});

export type Env = z.infer<typeof envSchema>;
