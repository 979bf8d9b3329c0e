// What scripts/test.mjs decided about the test servers (see README "Tests"). Test support may read process.env.
export const testEnv = {
  /** A PostgreSQL server URL whose role can CREATE DATABASE; unset → each test file gets an in-memory PGlite. */
  databaseUrl: process.env.TEST_DATABASE_URL || null,
  redisUrl: process.env.TEST_REDIS_URL || null,
  /** Why there is no Redis (tests that need it are skipped with this reason). */
  redisUnavailableReason:
    process.env.TEST_REDIS_UNAVAILABLE_REASON ||
    (process.env.TEST_REDIS_URL ? null : 'TEST_REDIS_URL is not set (run the tests with `npm test`)'),
};

/** `CONSOLE_SCREENSHOTS=1`: the console's browser test refreshes the README's screenshots in docs/console. */
export const REFRESH_CONSOLE_SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS === '1';

/** The migrated template database of this run (named by global-setup.ts after a hash of the migrations). */
export const TEMPLATE_DB = process.env.TEST_TEMPLATE_DB || 'tpfleet_test_template';

/** The same server URL with another database name. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
