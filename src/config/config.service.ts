// Configuration is read from the environment once, at boot, validated by envSchema and exposed as typed groups.
// This folder is the only code that reads process.env (eslint `no-restricted-properties`).
import { resolve } from 'node:path';
import { type DynamicModule, Inject, Injectable, Module } from '@nestjs/common';
import { z } from 'zod';
import { decodeKey, envSchema, type Env } from './config.schema.js';

export type Role = Env['ROLE'];
export type LogLevel = Env['LOG_LEVEL'];
export type LogFormat = Env['LOG_FORMAT'];

export interface AppConfig {
  database: {
    /** The PostgreSQL URL; in embedded mode the loopback URL of the PGlite socket server, set by main.ts. */
    url: string | null;
    /** No DATABASE_URL: PGlite in `embeddedDir`, served over a loopback socket. */
    embedded: boolean;
    embeddedDir: string;
    autoMigrate: boolean;
  };
  /** `url: null` → the queues live in PostgreSQL (BullMQ's PostgreSQL backend). */
  redis: { url: string | null; prefix: string };
  http: {
    host: string;
    port: number;
    /** How long a client may take over a request's headers (Node's `headersTimeout`); then 408. */
    headersTimeoutMs: number;
  };
  security: { bootstrapAdminToken: string; secretKey: Buffer; previousKeys: Buffer[] };
  /** Networks receivers and scans may reach although denied by default (src/common/outbound-policy.ts). */
  outbound: { allowedNetworks: string[] };
  polling: {
    intervalSeconds: number;
    slowIntervalSeconds: number;
    unreachableAfter: number;
    concurrency: number;
    /** Width of the slow lane (/firmware/check, /firmware/slots). */
    slowConcurrency: number;
    laggingConcurrency: number;
    timeoutMs: number;
    /** Thermal history retention: raw samples, then 5-minute means. */
    thermalRawRetentionHours: number;
    thermalRollupRetentionDays: number;
    /** How often the compaction job is enqueued. */
    thermalCompactIntervalSeconds: number;
  };
  /** Uploaded node OS images (src/boards/node-image-uploads.ts). */
  nodeImages: { uploadDir: string; maxUploadBytes: number };
  role: Role;
  logLevel: LogLevel;
  logFormat: LogFormat;
}

/** A setting is missing or malformed; the message names each variable and what it expects. */
export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`Invalid configuration:\n${issues.map((i) => `  - ${i}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type EnvSource = Record<string, string | undefined>;

function validate<T extends z.ZodType>(schema: T, env: EnvSource): z.infer<T> {
  // Empty strings count as unset, so `FOO=` in an env file falls back to the default.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = schema.safeParse(cleaned);
  if (!result.success) {
    throw new ConfigError(
      result.error.issues.map((i) => {
        const name = i.path.join('.');
        const got = cleaned[name] === undefined ? 'it is not set' : 'got a malformed value';
        return `${name}: ${i.message} (${got})`;
      }),
    );
  }
  return result.data;
}

const databaseSchema = envSchema.pick({ DATABASE_URL: true, DB_AUTO_MIGRATE: true, PGLITE_DIR: true });

function databaseGroup(e: z.infer<typeof databaseSchema>): AppConfig['database'] {
  const embedded = e.DATABASE_URL === undefined;
  return {
    url: e.DATABASE_URL ?? null,
    embedded,
    embeddedDir: resolve(e.PGLITE_DIR),
    autoMigrate: embedded || e.DB_AUTO_MIGRATE,
  };
}

/** Builds the whole configuration from an environment; throws ConfigError. */
export function parseConfig(env: EnvSource): AppConfig {
  const e = validate(envSchema, env);
  return {
    database: databaseGroup(e),
    redis: { url: e.REDIS_URL ?? null, prefix: e.QUEUE_PREFIX },
    http: { host: e.HOST, port: e.PORT, headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_SECONDS * 1000 },
    security: {
      bootstrapAdminToken: e.BOOTSTRAP_ADMIN_TOKEN,
      secretKey: decodeKey(e.SECRET_KEY) as Buffer,
      previousKeys: (e.SECRET_KEY_PREVIOUS ?? '').split(',').flatMap((k) => decodeKey(k) ?? []),
    },
    outbound: {
      allowedNetworks: (e.OUTBOUND_ALLOWED_NETWORKS ?? '')
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean),
    },
    polling: {
      intervalSeconds: e.POLL_INTERVAL_SECONDS,
      slowIntervalSeconds: e.POLL_SLOW_INTERVAL_SECONDS,
      unreachableAfter: e.POLL_UNREACHABLE_AFTER,
      concurrency: e.POLL_CONCURRENCY,
      slowConcurrency: e.POLL_SLOW_CONCURRENCY,
      laggingConcurrency: e.POLL_LAGGING_CONCURRENCY,
      thermalRawRetentionHours: e.THERMAL_RAW_RETENTION_HOURS,
      thermalRollupRetentionDays: e.THERMAL_ROLLUP_RETENTION_DAYS,
      thermalCompactIntervalSeconds: e.THERMAL_COMPACT_INTERVAL_SECONDS,
      timeoutMs: e.POLL_TIMEOUT_MS,
    },
    nodeImages: { uploadDir: resolve(e.NODE_IMAGE_UPLOAD_DIR), maxUploadBytes: e.NODE_IMAGE_UPLOAD_MAX_BYTES },
    role: e.ROLE,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
  };
}

/** Only the database settings (for the migration CLI, which needs no keys or tokens). */
export function databaseConfigFromEnv(): AppConfig['database'] {
  return databaseGroup(validate(databaseSchema, process.env));
}

/** Validates process.env (plus `overrides`, e.g. ROLE from `--role`); main.ts calls it once at boot. */
export function loadConfig(overrides: EnvSource = {}): AppConfig {
  return parseConfig({ ...process.env, ...overrides });
}

export const APP_CONFIG = Symbol('APP_CONFIG');

@Injectable()
export class ConfigService {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  get database(): AppConfig['database'] {
    return this.config.database;
  }
  /** The database URL; throws if an embedded database has not been started yet. */
  get databaseUrl(): string {
    if (this.config.database.url === null) {
      throw new Error('No database URL: the embedded database must be started before the application');
    }
    return this.config.database.url;
  }
  get redis(): AppConfig['redis'] {
    return this.config.redis;
  }
  get http(): AppConfig['http'] {
    return this.config.http;
  }
  get security(): AppConfig['security'] {
    return this.config.security;
  }
  get outbound(): AppConfig['outbound'] {
    return this.config.outbound;
  }
  get polling(): AppConfig['polling'] {
    return this.config.polling;
  }
  get nodeImages(): AppConfig['nodeImages'] {
    return this.config.nodeImages;
  }
  get role(): Role {
    return this.config.role;
  }
  get logLevel(): LogLevel {
    return this.config.logLevel;
  }
  get logFormat(): LogFormat {
    return this.config.logFormat;
  }
  /** The whole configuration, for code that derives settings from several groups (queue connections). */
  get all(): AppConfig {
    return this.config;
  }
}

/** The validated configuration as a global ConfigService; AppModule.forRoot passes the configuration main.ts loaded. */
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: ConfigModule,
      global: true,
      providers: [{ provide: APP_CONFIG, useValue: config }, ConfigService],
      exports: [ConfigService],
    };
  }
}
