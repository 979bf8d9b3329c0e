import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { withConfigTable } from './config-table.js';
import { ConfigError, parseConfig } from './config.service.js';

const HEX_BYTES = Buffer.from(Array.from({ length: 32 }, (_, i) => (i * 37 + 11) % 256));
const B64_BYTES = Buffer.from(Array.from({ length: 32 }, (_, i) => (i * 53 + 7) % 256));
const HEX_KEY = HEX_BYTES.toString('hex');
const B64_KEY = B64_BYTES.toString('base64');
const required = { BOOTSTRAP_ADMIN_TOKEN: 'Zq81fKx0mWv3TnLa95RbcYe2', SECRET_KEY: HEX_KEY };

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
    expect(c.http).toEqual({ host: '127.0.0.1', port: 3000, headersTimeoutMs: 60_000 });
    expect(c.polling).toEqual({
      intervalSeconds: 15,
      slowIntervalSeconds: 3600,
      unreachableAfter: 3,
      concurrency: 64,
      slowConcurrency: 32,
      laggingConcurrency: 128,
      thermalRawRetentionHours: 24,
      thermalRollupRetentionDays: 30,
      thermalCompactIntervalSeconds: 300,
      timeoutMs: 5000,
    });
    expect(c.role).toBe('all');
    expect(c.security.secretKey).toEqual(HEX_BYTES);
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
    expect(c.security.secretKey).toEqual(B64_BYTES);
    expect(c.security.previousKeys).toEqual([HEX_BYTES, B64_BYTES]);
  });

  it('reads the outbound allow-list (none by default) and refuses an entry that is not a network', () => {
    expect(parseConfig(required).outbound.allowedNetworks).toEqual([]);
    expect(
      parseConfig({ ...required, OUTBOUND_ALLOWED_NETWORKS: '127.0.0.0/8, ::1/128,10.0.0.7' }).outbound.allowedNetworks,
    ).toEqual(['127.0.0.0/8', '::1/128', '10.0.0.7']);
    expect(issues({ ...required, OUTBOUND_ALLOWED_NETWORKS: '127.0.0.0/8,localhost,10.0.0.0/33' })).toEqual([
      'OUTBOUND_ALLOWED_NETWORKS: not a network: localhost, 10.0.0.0/33; expected comma-separated CIDRs or addresses, ' +
        'e.g. 127.0.0.0/8,::1/128 (got a malformed value)',
    ]);
  });

  it('refuses a patterned key and a known or patterned admin token, saying how to make one', () => {
    expect(issues({ ...required, SECRET_KEY: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=' })).toEqual([
      expect.stringMatching(
        /^SECRET_KEY: a patterned key \(1 distinct byte values in 32\): refused; generate one with `openssl rand -base64 32`/,
      ),
    ]);
    expect(issues({ ...required, SECRET_KEY: '07'.repeat(32) })).toHaveLength(1);
    expect(issues({ ...required, BOOTSTRAP_ADMIN_TOKEN: 'change-me-change-me-change-me' })).toEqual([
      expect.stringMatching(
        /^BOOTSTRAP_ADMIN_TOKEN: a known placeholder token: refused; generate one with `openssl rand -hex 24`/,
      ),
    ]);
    expect(issues({ ...required, BOOTSTRAP_ADMIN_TOKEN: 'x'.repeat(24) })).toEqual([
      expect.stringMatching(/^BOOTSTRAP_ADMIN_TOKEN: a patterned token \(1 distinct characters\)/),
    ]);
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
