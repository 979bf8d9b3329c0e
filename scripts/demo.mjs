// `npm run demo`: the product on this machine in one command. Installs when needed, builds, applies migrations,
// starts the fleet manager (API + workers, role all) and a simulated rack of 8 boards, registers the boards, and
// prints how to talk to it. Uses DATABASE_URL / REDIS_URL when set, else runs embedded (PGlite in .data/pglite,
// queues in PostgreSQL). Ctrl-C stops everything; a second run reuses .data/.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exited, freePort, installAndBuild, log, root, run, sleep, spawn, tcpOpen } from './lib.mjs';

const DATA = join(root, '.data');
const BOARDS = 8;
const BOARD_PASSWORD = 'turing'; // the simulated boards' root password
const children = [];

/** The demo's secrets, created once and kept in .data/ so a second run can read what the first one stored. */
function demoSecrets() {
  const file = join(DATA, 'demo-secrets.json');
  if (!existsSync(file)) {
    mkdirSync(DATA, { recursive: true });
    const secrets = {
      BOOTSTRAP_ADMIN_TOKEN: randomBytes(24).toString('hex'),
      SECRET_KEY: randomBytes(32).toString('base64'),
    };
    writeFileSync(file, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  }
  return JSON.parse(readFileSync(file, 'utf8'));
}

function rememberRackPort(rackPort) {
  const file = join(DATA, 'demo-secrets.json');
  const stored = JSON.parse(readFileSync(file, 'utf8'));
  writeFileSync(file, `${JSON.stringify({ ...stored, rackPort }, null, 2)}\n`, { mode: 0o600 });
}

/** The rack's old port was taken this time: point the boards a previous run registered at the new one. */
async function repointBoards(api, token, rackBase) {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const res = await fetch(`${api}/api/v1/boards?selector=rack%3Ddemo-rack&limit=500`, { headers });
  const { items = [] } = res.ok ? await res.json() : {};
  for (const board of items) {
    const path = new URL(board.base_url).pathname;
    await fetch(`${api}/api/v1/boards/${board.id}`, {
      method: 'PATCH',
      headers,
      body: JSON.stringify({ base_url: `${rackBase}${path}` }),
    });
  }
  log(`the rack moved to ${rackBase}: ${items.length} boards repointed`);
}

async function choosePort(preferred) {
  return (await tcpOpen(preferred)) ? freePort() : preferred;
}

function start(name, args, env) {
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'inherit', 'inherit'] });
  children.push({ name, child });
  return child;
}

async function waitFor(url, child, seconds) {
  for (let i = 0; i < seconds * 4; i++) {
    if (child.exitCode !== null) {
      throw new Error(`${url}: the process exited (code ${child.exitCode})`);
    }
    try {
      const res = await fetch(url);
      if (res.ok) {
        return;
      }
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  throw new Error(`${url} did not answer within ${seconds} s`);
}

async function registerBoards(api, token, rackBase) {
  const boards = Array.from({ length: BOARDS }, (_, i) => ({
    name: `demo-rack-board-${i + 1}`,
    base_url: `${rackBase}/boards/${i + 1}`,
    rack: 'demo-rack',
    slot: i + 1,
    labels: { rack: 'demo-rack' },
    credentials: { username: 'root', password: BOARD_PASSWORD },
  }));
  const res = await fetch(`${api}/api/v1/boards/bulk`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ boards }),
  });
  const body = await res.text();
  if (res.status === 404 && !body.includes('board')) {
    log('note: the boards API (POST /api/v1/boards/bulk) does not exist yet: boards not registered');
  } else if (res.status === 409) {
    log('boards already registered (a previous run): kept');
  } else if (res.ok) {
    log(`registered ${BOARDS} boards of the simulated rack`);
  } else {
    log(`note: registering the rack's boards failed: HTTP ${res.status} ${body.slice(0, 300)}`);
  }
}

async function firstAnswering(base, paths, token) {
  for (const p of paths) {
    try {
      if ((await fetch(`${base}${p}`, { headers: { authorization: `Bearer ${token}` } })).ok) {
        return `${base}${p}`;
      }
    } catch {
      // try the next
    }
  }
  return null;
}

async function main() {
  installAndBuild();
  const embedded = !process.env.DATABASE_URL;
  const secrets = demoSecrets();
  const port = Number(process.env.PORT) || (await choosePort(3000));
  const env = {
    ...process.env,
    BOOTSTRAP_ADMIN_TOKEN: process.env.BOOTSTRAP_ADMIN_TOKEN || secrets.BOOTSTRAP_ADMIN_TOKEN,
    SECRET_KEY: process.env.SECRET_KEY || secrets.SECRET_KEY,
    HOST: process.env.HOST || '127.0.0.1',
    PORT: String(port),
    LOG_FORMAT: process.env.LOG_FORMAT || 'pretty', // a terminal: readable lines (JSON is the default elsewhere)
    // The demo's rack (and any receiver tried next to it) is on this machine: let scans and receivers reach loopback.
    OUTBOUND_ALLOWED_NETWORKS: process.env.OUTBOUND_ALLOWED_NETWORKS || '127.0.0.0/8,::1/128',
  };
  log(
    embedded
      ? 'no DATABASE_URL: embedded PostgreSQL (PGlite) in .data/pglite' +
          (process.env.REDIS_URL ? '' : ', queues in PostgreSQL')
      : `PostgreSQL from DATABASE_URL${process.env.REDIS_URL ? ', Redis from REDIS_URL' : ', queues in PostgreSQL'}`,
  );
  log('applying migrations');
  run(process.execPath, ['dist/src/db/migrate-cli.js', 'deploy'], { env });

  log('starting the fleet manager (role all)');
  const api = `http://127.0.0.1:${port}`;
  const manager = start('fleet manager', ['dist/src/main.js', '--role', 'all'], env);
  await waitFor(`${api}/readyz`, manager, 120);

  const agentCli = join(root, 'apps/agent/dist/cli.js');
  if (existsSync(agentCli)) {
    // The boards are registered with the rack's address, so the rack keeps its port from one run to the next.
    const rackPort = await choosePort(secrets.rackPort ?? (await freePort()));
    rememberRackPort(rackPort);
    log(`starting a simulated rack of ${BOARDS} boards on port ${rackPort}`);
    const rack = start(
      'rack',
      [
        'apps/agent/bin/board-agent.js',
        'rack',
        '--boards',
        String(BOARDS),
        '--port',
        String(rackPort),
        '--state-dir',
        '.data/rack',
        '--password',
        BOARD_PASSWORD,
      ],
      process.env,
    );
    const rackBase = `http://127.0.0.1:${rackPort}`;
    await waitFor(`${rackBase}/rack`, rack, 30).catch((err) =>
      log(`warning: the rack did not come up: ${err.message}`),
    );
    await registerBoards(api, env.BOOTSTRAP_ADMIN_TOKEN, rackBase);
    if (secrets.rackPort !== undefined && secrets.rackPort !== rackPort) {
      await repointBoards(api, env.BOOTSTRAP_ADMIN_TOKEN, rackBase);
    }
  } else {
    log('warning: the board agent is not built yet (apps/agent/dist/cli.js): no simulated rack started');
  }

  const openapi = await firstAnswering(api, ['/api/openapi.json', '/openapi.json'], env.BOOTSTRAP_ADMIN_TOKEN);
  console.log(`
  Console:            ${api}/console/   (sign in with the API token below)
  API token (admin):  ${env.BOOTSTRAP_ADMIN_TOKEN}
  Fleet manager API:  ${api}
  OpenAPI:            ${openapi ?? '(not served yet)'}${openapi ? `\n  API docs:           ${api}/api/docs` : ''}
  Readiness:          curl -s ${api}/readyz
  Try:                curl -s -H 'Authorization: Bearer ${env.BOOTSTRAP_ADMIN_TOKEN}' ${api}/api/v1/boards
  Or the CLI:         echo ${env.BOOTSTRAP_ADMIN_TOKEN} | npx tpfleet login --url ${api} --token-stdin
                      npx tpfleet boards list -l rack=demo-rack

  Ctrl-C stops everything; data stays in .data/ for the next run.
`);
  const code = await exited(manager);
  if (!stopping) {
    log(`the fleet manager exited (code ${code})`);
    await stopAll();
    process.exit(code || 1);
  }
}

let stopping = false;
async function stopAll() {
  stopping = true;
  for (const { child } of children.reverse()) {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await Promise.race([exited(child), sleep(15000).then(() => child.kill('SIGKILL'))]);
    }
  }
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (stopping) {
      return;
    }
    log('stopping');
    stopAll().then(() => process.exit(0));
  });
}

main().catch(async (err) => {
  console.error(`demo failed: ${err.message}`);
  await stopAll();
  process.exit(1);
});
