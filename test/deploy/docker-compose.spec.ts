// docker-compose.yml, checked without Docker (no daemon runs here): the YAML is parsed (the `yaml` package) and
// the services, images, commands, health checks, settings and start order are asserted. When Debian's
// docker-compose is installed (.ci/run installs it) `docker-compose config` also validates the file against the
// Compose schema, offline; without it that one test is skipped, saying so.
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { envSchema } from '../../src/config/config.schema.js';

interface Service {
  image?: string;
  build?: string | { context: string; dockerfile?: string };
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  ports?: string[];
}
const compose = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
};
const s = compose.services;
// docker-compose runs with only these variables, so the secrets are exactly what a test gives it.
const PLAIN_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/tmp' };
const hasCompose = spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).status === 0;

describe('docker-compose.yml', () => {
  it('has PostgreSQL, Redis, the migration step, the API, a worker and a simulated rack', () => {
    expect(Object.keys(s).sort()).toEqual(['api', 'migrate', 'postgres', 'rack', 'redis', 'worker']);
    expect(s.postgres?.image).toMatch(/^postgres:1[4-9]/);
    expect(s.redis?.image).toMatch(/^redis:7/);
  });

  it('runs the API and the worker from one fleet-manager image, in their roles', () => {
    expect(s.migrate?.build).toBe('.');
    expect(s.api?.image).toBe(s.migrate?.image);
    expect(s.worker?.image).toBe(s.migrate?.image);
    expect(s.api?.command).toEqual(['--role', 'api']);
    expect(s.worker?.command).toEqual(['--role', 'worker']);
    expect(s.migrate?.entrypoint).toEqual(['node', 'dist/src/db/migrate-cli.js']);
    expect(s.migrate?.command).toEqual(['deploy']);
    expect(s.api?.ports).toEqual(['3000:3000']);
  });

  it('gives the fleet manager valid settings, pointing at the compose PostgreSQL and Redis', () => {
    for (const name of ['migrate', 'api', 'worker']) {
      const env = s[name]?.environment ?? {};
      expect(env.DATABASE_URL).toMatch(/@postgres:5432\//);
      expect(env.REDIS_URL).toBe('redis://redis:6379');
      expect(env.HOST).toBe('0.0.0.0');
      // The secrets have no default: compose refuses to start without them (${VAR:?message}).
      expect(env.BOOTSTRAP_ADMIN_TOKEN).toMatch(/^\$\{BOOTSTRAP_ADMIN_TOKEN:\?set BOOTSTRAP_ADMIN_TOKEN .*\}$/);
      expect(env.SECRET_KEY).toMatch(/^\$\{SECRET_KEY:\?set SECRET_KEY .*\}$/);
      // Defaults of ${VAR:-default} substitutions must themselves pass the configuration schema (with secrets given).
      const resolved = Object.fromEntries(
        Object.entries(env).map(([k, v]) => [k, v.replace(/\$\{\w+:-([^}]*)\}/g, '$1')]),
      );
      const secrets = {
        BOOTSTRAP_ADMIN_TOKEN: randomBytes(24).toString('hex'),
        SECRET_KEY: randomBytes(32).toString('base64'),
      };
      expect(envSchema.safeParse({ ...resolved, ...secrets }).success).toBe(true);
    }
  });

  it('checks health: /readyz for the API, /healthz for the worker, the rack and both servers', () => {
    expect(s.api?.healthcheck?.test.join(' ')).toContain('/readyz');
    expect(s.worker?.healthcheck?.test.join(' ')).toContain('/healthz');
    expect(s.rack?.healthcheck?.test.join(' ')).toContain('/rack');
    expect(s.postgres?.healthcheck?.test).toContain('pg_isready');
    expect(s.redis?.healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
  });

  it('starts in order: migrations after PostgreSQL is healthy; API and worker after the migrations and Redis', () => {
    expect(s.migrate?.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    for (const name of ['api', 'worker']) {
      expect(s[name]?.depends_on).toEqual({
        migrate: { condition: 'service_completed_successfully' },
        redis: { condition: 'service_healthy' },
      });
    }
  });

  it('builds the rack from the agent image and runs `board-agent rack`', () => {
    expect(s.rack?.build).toEqual({ context: '.', dockerfile: 'apps/agent/Dockerfile' });
    expect(s.rack?.command?.slice(0, 3)).toEqual(['rack', '--boards', '8']);
  });

  (hasCompose ? it : it.skip)(
    `is valid Compose${hasCompose ? '' : ' [skipped: docker-compose is not installed; .ci/run installs it]'}`,
    () => {
      const secrets = {
        BOOTSTRAP_ADMIN_TOKEN: randomBytes(24).toString('hex'),
        SECRET_KEY: randomBytes(32).toString('base64'),
      };
      const r = spawnSync('docker-compose', ['-f', 'docker-compose.yml', 'config', '--quiet'], {
        encoding: 'utf8',
        env: { ...PLAIN_ENV, ...secrets },
      });
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      // Without the secrets compose refuses, naming them (no known token or key to fall back on).
      const refused = spawnSync('docker-compose', ['-f', 'docker-compose.yml', 'config', '--quiet'], {
        encoding: 'utf8',
        env: PLAIN_ENV,
        cwd: process.cwd(),
      });
      expect(refused.status).not.toBe(0);
      expect(refused.stderr).toMatch(/BOOTSTRAP_ADMIN_TOKEN|SECRET_KEY/);
    },
  );
});
