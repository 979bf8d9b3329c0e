import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { withConfigTable } from './config-table.js';
import { ConfigError, parseConfig } from './config.service.js';

const HEX_KEY = 'ab'.repeat(32);
const B64_KEY = Buffer.alloc(32, 1).toString('base64');
const required = { BOOTSTRAP_ADMIN_TOKEN: 'x'.repeat(24), SECRET_KEY: HEX_KEY };

function issues(env: Record<string, string | undefined>): string[] {
  try {
    parseConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration', () => {
  it('with only the required settings: embedded database, queues in PostgreSQL, documented defaults', () => {
    const c = parseConfig(required);
    expect(c.database).toMatchObject({ url: null, embedded: true, autoMigrate: true });
    expect(c.database.embeddedDir).toMatch(/\.data\/pglite$/);
    expect(c.redis).toEqual({ url: null, prefix: 'tpfleet' });
    expect(c.http).toEqual({ host: '127.0.0.1', port: 3000 });
    expect(c.polling).toEqual({
      intervalSeconds: 15,
      slowIntervalSeconds: 3600,
      unreachableAfter: 3,
      concurrency: 64,
      slowConcurrency: 32,
      thermalRawRetentionHours: 24,
      thermalRollupRetentionDays: 30,
      timeoutMs: 5000,
    });
    expect(c.role).toBe('all');
    expect(c.security.secretKey).toEqual(Buffer.alloc(32, 0xab));
  });

  it('with DATABASE_URL and no REDIS_URL: that server, migrations only on request, queues in PostgreSQL', () => {
    const c = parseConfig({ ...required, DATABASE_URL: 'postgresql://u:p@db:5432/fleet' });
    expect(c.database).toMatchObject({ url: 'postgresql://u:p@db:5432/fleet', embedded: false, autoMigrate: false });
    expect(c.redis.url).toBeNull();
    expect(
      parseConfig({ ...required, DATABASE_URL: 'postgres://db/x', DB_AUTO_MIGRATE: 'true' }).database.autoMigrate,
    ).toBe(true);
  });

  it('accepts keys in base64 or hex, and previous keys for rotation', () => {
    const c = parseConfig({ ...required, SECRET_KEY: B64_KEY, SECRET_KEY_PREVIOUS: `${HEX_KEY}, ${B64_KEY}` });
    expect(c.security.secretKey).toEqual(Buffer.alloc(32, 1));
    expect(c.security.previousKeys).toEqual([Buffer.alloc(32, 0xab), Buffer.alloc(32, 1)]);
  });

  it('a missing setting names the variable and what it expects', () => {
    expect(issues({ SECRET_KEY: HEX_KEY })).toEqual([
      'BOOTSTRAP_ADMIN_TOKEN: expected a token of at least 24 characters; e.g. `openssl rand -hex 24` (it is not set)',
    ]);
  });

  it('malformed settings are all reported, each with what it expects', () => {
    const found = issues({
      ...required,
      SECRET_KEY: 'c2hvcnQ=',
      DATABASE_URL: 'mysql://db/x',
      PORT: 'eighty',
      ROLE: 'both',
      DB_AUTO_MIGRATE: 'yes',
    });
    expect(found).toHaveLength(5);
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^SECRET_KEY: expected a 32-byte key, base64 .* \(got a malformed value\)$/),
        'DATABASE_URL: expected a postgresql://user:password@host:port/database URL (got a malformed value)',
        'PORT: expected an integer from 0 to 65535 (got a malformed value)',
        'ROLE: expected api, worker or all (got a malformed value)',
        'DB_AUTO_MIGRATE: expected 1, 0, true or false (got a malformed value)',
      ]),
    );
  });

  it('an empty value counts as unset', () => {
    expect(parseConfig({ ...required, REDIS_URL: '', PORT: '' }).http.port).toBe(3000);
  });

  it("README's configuration table matches the schema (regenerate: npm run docs:config)", () => {
    const readme = readFileSync('README.md', 'utf8');
    expect(readme).toBe(withConfigTable(readme));
  });
});
