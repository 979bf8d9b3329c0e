// Helpers shared by scripts/demo.mjs and scripts/test.mjs (plain Node, no build step needed).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';

export const root = new URL('..', import.meta.url).pathname;

export function log(msg) {
  process.stdout.write(`\x1b[1m==>\x1b[0m ${msg}\n`);
}

/** Runs a command in the repository root with inherited output; throws on a non-zero exit. */
export function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...opts });
  if (r.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.status ?? r.signal})`);
  }
}

/** `npm ci` when node_modules is missing (a fresh clone), then `npm run build`. */
export function installAndBuild() {
  if (!existsSync(`${root}/node_modules/.package-lock.json`)) {
    log('node_modules is missing: npm ci');
    try {
      run('npm', ['ci', '--no-audit', '--no-fund']);
    } catch {
      // npm 11.19 writes lockfiles without other platforms' optional packages and then refuses them in `npm ci`
      // (npm/cli#8805): install the locked versions instead (the same allowScripts apply).
      log('npm ci refused the lockfile (npm/cli#8805): npm install --no-save');
      run('npm', ['install', '--no-audit', '--no-fund', '--no-save']);
    }
  }
  log('npm run build');
  run('npm', ['run', 'build', '--silent']);
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** true when something accepts TCP connections on host:port within `ms`. */
export function tcpOpen(port, host = '127.0.0.1', ms = 1000) {
  return new Promise((resolve) => {
    const s = net.connect({ port, host });
    const done = (ok) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(ms, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

/** true when a Redis server answers PING on host:port. */
export function redisAnswers(port, host = '127.0.0.1', ms = 1000) {
  return new Promise((resolve) => {
    const s = net.connect({ port, host });
    let buf = '';
    const done = (ok) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(ms, () => done(false));
    s.once('connect', () => s.write('PING\r\n'));
    s.on('data', (d) => {
      buf += d.toString();
      if (buf.includes('\r\n')) {
        done(buf.startsWith('+PONG'));
      }
    });
    s.once('error', () => done(false));
  });
}

/** Resolves with the exit code of a child process. */
export function exited(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve(child.exitCode ?? 1);
    } else {
      child.once('exit', (code) => resolve(code ?? 1));
    }
  });
}

export function which(cmd) {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

export function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

export { spawn };
