// `npm test [-- <jest args>]`: installs when needed, builds, finds PostgreSQL and Redis, runs every jest tier
// (unit, integration, e2e) and ends with one line: `tests: N passed, N failed, N skipped`.
//
// Where the servers come from, first match wins:
//   1. DATABASE_URL / REDIS_URL when set;
//   2. the usual local ports when they answer (127.0.0.1:5432 as postgres, 127.0.0.1:6379);
//   3. throwaway servers from locally installed binaries (initdb/postgres, redis-server), in a temp dir on free
//      ports, stopped at the end;
//   4. none: PostgreSQL is an in-memory PGlite per test file, and tests that need Redis are skipped with the reason.
// To exercise steps 3 and 4 on a machine that has the servers: TEST_LOCAL_PG_PORT / TEST_LOCAL_REDIS_PORT point
// step 2 at other (dead) ports, TEST_NO_THROWAWAY=1 skips step 3.
const LOCAL_PG_PORT = Number(process.env.TEST_LOCAL_PG_PORT || 5432);
const LOCAL_REDIS_PORT = Number(process.env.TEST_LOCAL_REDIS_PORT || 6379);
const THROWAWAY = process.env.TEST_NO_THROWAWAY !== '1';
import { spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exited, freePort, installAndBuild, log, redisAnswers, root, sleep, spawn, which } from './lib.mjs';

const REDIS_SKIP_MARK = 'skipped: needs Redis'; // as in test/support/redis.ts
const cleanups = [];

async function postgresAnswers(url) {
  const { default: pg } = await import('pg');
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await c.connect();
  } catch (err) {
    return err.message; // (end() on a client that never connected can hang)
  }
  try {
    const r = await c.query('SELECT rolcreatedb OR rolsuper AS ok FROM pg_roles WHERE rolname = current_user');
    return r.rows[0]?.ok === true ? null : 'its role cannot CREATE DATABASE';
  } catch (err) {
    return err.message;
  } finally {
    await c.end().catch(() => {});
  }
}

function postgresBinaries() {
  if (which('initdb') && which('postgres')) {
    return { initdb: 'initdb', postgres: 'postgres' };
  }
  try {
    // Debian keeps the server binaries off PATH
    const v = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a))[0];
    return v
      ? { initdb: `/usr/lib/postgresql/${v}/bin/initdb`, postgres: `/usr/lib/postgresql/${v}/bin/postgres` }
      : null;
  } catch {
    return null;
  }
}

/** PostgreSQL refuses to run as root: run it as the `postgres` user then (Debian's package creates it). */
function asServerUser(cmd, args, dir) {
  if (process.getuid?.() !== 0) {
    return [cmd, args];
  }
  const uid = Number(spawnText('id', ['-u', 'postgres']));
  const gid = Number(spawnText('id', ['-g', 'postgres']));
  chownSync(dir, uid, gid);
  return ['runuser', ['-u', 'postgres', '--', cmd, ...args]];
}

function spawnText(cmd, args) {
  return spawnSync(cmd, args, { encoding: 'utf8' }).stdout.trim();
}

async function throwawayPostgres(bins) {
  const dir = mkdtempSync(join(tmpdir(), 'tpfleet-pg-'));
  const data = join(dir, 'data');
  const port = await freePort();
  const [initCmd, initArgs] = asServerUser(
    bins.initdb,
    ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'],
    dir,
  );
  const init = spawn(initCmd, initArgs, { stdio: ['ignore', 'ignore', 'pipe'] });
  let initErr = '';
  init.stderr.on('data', (d) => (initErr += d));
  if ((await exited(init)) !== 0) {
    throw new Error(`initdb failed: ${initErr.trim()}`);
  }
  // max_connections: two jest workers each run a fleet manager (some tests three processes), and BullMQ's PostgreSQL
  // backend gives every queue and worker a pool of its own; the default of 100 can run out (see .ci/run).
  const opts = ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'];
  opts.push('-c', 'max_connections=300');
  const [cmd, args] = asServerUser(bins.postgres, [...opts, '-c', 'full_page_writes=off'], dir);
  const server = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let serverErr = '';
  server.stderr.on('data', (d) => (serverErr += d));
  cleanups.push(async () => {
    // Signal the postmaster itself (runuser does not pass SIGINT on): SIGINT = fast shutdown.
    try {
      process.kill(Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]), 'SIGINT');
    } catch {
      server.kill('SIGINT');
    }
    await Promise.race([exited(server), sleep(10000).then(() => server.kill('SIGKILL'))]);
    rmSync(dir, { recursive: true, force: true });
  });
  const url = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  for (let i = 0; i < 100; i++) {
    if ((await postgresAnswers(url)) === null) {
      return url;
    }
    if (server.exitCode !== null) {
      break;
    }
    await sleep(100);
  }
  throw new Error(`throwaway PostgreSQL did not start: ${serverErr.trim().split('\n').slice(-3).join(' / ')}`);
}

async function throwawayRedis(redisServer) {
  const dir = mkdtempSync(join(tmpdir(), 'tpfleet-redis-'));
  const port = await freePort();
  const server = spawn(
    redisServer,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
  cleanups.push(async () => {
    server.kill('SIGTERM');
    await exited(server);
    rmSync(dir, { recursive: true, force: true });
  });
  for (let i = 0; i < 50; i++) {
    if (await redisAnswers(port)) {
      return `redis://127.0.0.1:${port}`;
    }
    await sleep(100);
  }
  throw new Error('throwaway redis-server did not start');
}

async function choosePostgres() {
  if (process.env.DATABASE_URL) {
    return { url: process.env.DATABASE_URL, how: 'DATABASE_URL' };
  }
  const local = `postgresql://postgres@127.0.0.1:${LOCAL_PG_PORT}/postgres`;
  if ((await postgresAnswers(local)) === null) {
    return { url: local, how: `the local server on 127.0.0.1:${LOCAL_PG_PORT}` };
  }
  const bins = THROWAWAY ? postgresBinaries() : null;
  if (bins) {
    try {
      const url = await throwawayPostgres(bins);
      return { url, how: `a throwaway server (${bins.postgres}) on ${new URL(url).port}` };
    } catch (err) {
      log(`could not start a throwaway PostgreSQL: ${err.message}`);
    }
  }
  return { url: null, how: 'none found: an in-memory PGlite per test file' };
}

async function chooseRedis() {
  if (process.env.REDIS_URL) {
    return { url: process.env.REDIS_URL, how: 'REDIS_URL' };
  }
  if (await redisAnswers(LOCAL_REDIS_PORT)) {
    return { url: `redis://127.0.0.1:${LOCAL_REDIS_PORT}`, how: `the local server on 127.0.0.1:${LOCAL_REDIS_PORT}` };
  }
  const redisServer = THROWAWAY ? which('redis-server') : null;
  if (redisServer) {
    try {
      const url = await throwawayRedis(redisServer);
      return { url, how: `a throwaway redis-server on ${new URL(url).port}` };
    } catch (err) {
      return { url: null, how: `none: ${err.message}` };
    }
  }
  return {
    url: null,
    how: `none: REDIS_URL unset, nothing on 127.0.0.1:${LOCAL_REDIS_PORT}, no redis-server${THROWAWAY ? ' installed' : ' started'}`,
  };
}

function summarize(file, jestCode) {
  let results;
  try {
    results = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return { passed: 0, failed: 1, skipped: 0, reasons: [], note: `jest wrote no results (exit ${jestCode})` };
  }
  const reasons = new Map();
  for (const suite of results.testResults) {
    for (const t of suite.assertionResults) {
      const marked = t.ancestorTitles.find((a) => a.includes(REDIS_SKIP_MARK));
      if ((t.status === 'pending' || t.status === 'skipped') && marked) {
        reasons.set(marked, (reasons.get(marked) ?? 0) + 1);
      }
    }
  }
  const failedSuites = results.numRuntimeErrorTestSuites ?? 0;
  return {
    passed: results.numPassedTests,
    failed: results.numFailedTests + failedSuites,
    skipped: results.numPendingTests + results.numTodoTests,
    reasons: [...reasons],
    note: failedSuites ? `${failedSuites} test file(s) failed to run` : null,
  };
}

async function main() {
  const extra = process.argv.slice(2);
  installAndBuild();
  const [pgChoice, redisChoice] = await Promise.all([choosePostgres(), chooseRedis()]);
  log(`PostgreSQL for tests: ${pgChoice.how}`);
  log(`Redis for tests: ${redisChoice.how}`);
  const out = join(mkdtempSync(join(tmpdir(), 'tpfleet-jest-')), 'results.json');
  const env = {
    ...process.env,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --experimental-vm-modules`.trim(),
    TZ: 'UTC',
  };
  delete env.TEST_DATABASE_URL;
  delete env.TEST_REDIS_URL;
  delete env.TEST_REDIS_UNAVAILABLE_REASON;
  if (pgChoice.url) {
    env.TEST_DATABASE_URL = pgChoice.url;
  }
  if (redisChoice.url) {
    env.TEST_REDIS_URL = redisChoice.url;
  } else {
    env.TEST_REDIS_UNAVAILABLE_REASON = redisChoice.how.replace(/^none: /, '');
  }
  const jest = spawn(
    process.execPath,
    [join(root, 'node_modules/jest/bin/jest.js'), '--maxWorkers=2', '--json', `--outputFile=${out}`, ...extra],
    { cwd: root, env, stdio: ['inherit', 'ignore', 'inherit'] }, // stdout carries only the JSON
  );
  const stop = () => jest.kill('SIGINT');
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  const code = await exited(jest);
  const s = summarize(out, code);
  rmSync(join(out, '..'), { recursive: true, force: true });
  for (const [group, n] of s.reasons) {
    console.log(`skipped ${n}: ${group}`);
  }
  if (s.note) {
    console.log(s.note);
  }
  console.log(`tests: ${s.passed} passed, ${s.failed} failed, ${s.skipped} skipped`);
  return code !== 0 || s.failed > 0 ? 1 : 0;
}

let exitCode = 1;
try {
  exitCode = await main();
} catch (err) {
  console.error(err.message);
} finally {
  for (const c of cleanups.reverse()) {
    await c().catch(() => {});
  }
}
process.exit(exitCode);
