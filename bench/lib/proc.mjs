// Child-process plumbing for bench/agent.mjs: every server the benchmark starts is tracked here and killed on exit,
// error or signal, so an interrupted run never leaves a listener behind.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

const children = new Set();

function killAll() {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
    }
  }
}
process.on('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    process.stderr.write(`\nbench: ${signal}, killing ${children.size} child process(es)\n`);
    killAll();
    process.exit(130);
  });
}

/** Spawns `node <args>`; the output is kept (bounded) for error messages. */
export function spawnNode(args, { cwd } = {}) {
  const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let output = '';
  const keep = (chunk) => {
    if (output.length < 64_000) {
      output += chunk;
    }
  };
  child.stdout.setEncoding('utf8').on('data', keep);
  child.stderr.setEncoding('utf8').on('data', keep);
  child.on('exit', () => children.delete(child));
  child.output = () => output;
  return child;
}

/** SIGTERM, then SIGKILL if the child has not exited within `graceMs`. */
export async function stopChild(child, graceMs = 10_000) {
  if (child.exitCode !== null || child.signalCode !== null) {
    return;
  }
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Resident set size and its high-water mark (bytes), from /proc/<pid>/status. */
export function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/**
 * CPU time (user + system, ms) the process has used so far, from /proc/<pid>/stat (clock ticks, 100 Hz on Linux).
 * The load generator shares the machine, so server CPU per request is a client-independent cost figure.
 */
export function cpuMsOf(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from #3 (state) on
  return (Number(fields[11]) + Number(fields[12])) * 10; // #14 utime, #15 stime
}

/** A loopback port that was free a moment ago (the server under test binds it right after). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function getStatus(url, timeoutMs) {
  return new Promise((resolve) => {
    const req = httpRequest(url, { agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });
}

/**
 * Polls `url` every `intervalMs` until it answers with one of `statuses` (a fresh connection per attempt); throws
 * after `timeoutMs` or if the child exits first. Returns the time of that first answer (performance.now()).
 */
export async function waitForOk(url, child, { timeoutMs = 30_000, intervalMs = 2, statuses = [200] } = {}) {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `server exited (${child.exitCode ?? child.signalCode}) before answering ${url}:\n${child.output()}`,
      );
    }
    if (statuses.includes(await getStatus(url, 1000))) {
      return performance.now();
    }
    await sleep(intervalMs);
  }
  throw new Error(`no ${statuses.join('/')} from ${url} within ${timeoutMs} ms:\n${child.output()}`);
}
