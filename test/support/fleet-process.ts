// The fleet manager as the benchmarks and the multi-process e2e tests run it: the built entry point (`node dist/src/main.js --role …`) in a process
// of its own, as in production (docker-compose runs an api and a worker), so its CPU and memory are read from
// /proc without the bench's own work, jest's module system or the rack mixed in.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';
import { LOOPBACK_NETWORKS, TEST_ADMIN_TOKEN, TEST_SECRET_KEY } from './app.js';
import { testQueuePrefix, type TestDatabase } from './database.js';
import { testEnv } from './env.js';

export interface FleetProcess {
  role: 'api' | 'worker' | 'all';
  url: string;
  pid: number;
  /** user + system CPU seconds the process has used so far. */
  cpuSeconds(): number;
  /** The process's last output lines (for failure reports). */
  output(): string;
  /**
   * Every line the process wrote so far at ERROR level or above: a JSON line (LOG_FORMAT=json) with a pino level
   * of 50 (error) or 60 (fatal), or a line outside the logger that says error (a crash's stack trace; Node's own
   * warnings are not errors).
   */
  errorLines(): string[];
  /** Peak resident set size so far (VmHWM), in bytes. */
  peakRssBytes(): number;
  /** Resident set size now (VmRSS), in bytes. */
  rssBytes(): number;
  /** SIGTERM, then SIGKILL if still running after 15 s; resolves on exit. */
  stop(): Promise<FleetExit>;
}

export interface FleetExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** From SIGTERM to exit. */
  ms: number;
}

/** Whether a line of a fleet process's output is at ERROR level or above (see FleetProcess.errorLines). */
export function isErrorLine(line: string): boolean {
  if (line.trim() === '') {
    return false;
  }
  try {
    const parsed = JSON.parse(line) as { level?: unknown };
    return typeof parsed.level !== 'number' || parsed.level >= 50;
  } catch {
    return /\berror\b/i.test(line);
  }
}

/** Linux reports process times in clock ticks; USER_HZ is 100 on every architecture Node runs on. */
const CLOCK_TICKS = 100;

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat. */
export function cpuSecondsOf(pid: number): number {
  return cpuSecondsIn(`/proc/${pid}/stat`);
}

/**
 * CPU seconds of a process's main thread alone (its JavaScript), from /proc/<pid>/task/<pid>/stat: the rest of the
 * process's figure is its other threads, V8's helpers (parallel scavenges, concurrent marking and sweeping, the
 * optimising compilers) and libuv's pool.
 */
export function mainThreadCpuSecondsOf(pid: number): number {
  return cpuSecondsIn(`/proc/${pid}/task/${pid}/stat`);
}

function cpuSecondsIn(statPath: string): number {
  const stat = readFileSync(statPath, 'utf8');
  // Fields after the command name (which may contain spaces), counted from field 3: utime is 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** Busy and total CPU seconds of the whole machine so far (all cores), from /proc/stat. */
export function machineCpuSeconds(): { busy: number; total: number } {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const n = ticks.map(Number);
  const total = n.reduce((a, b) => a + b, 0);
  const idle = (n[3] ?? 0) + (n[4] ?? 0); // idle + iowait
  return { busy: (total - idle) / CLOCK_TICKS, total: total / CLOCK_TICKS };
}

/** A size line of /proc/<pid>/status (VmHWM: the peak resident set, VmRSS: the resident set now), in bytes. */
function statusBytes(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1];
  return Number(kb ?? 0) * 1024;
}

/** A TCP port free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Refuses to run without the real servers a fleet benchmark measures against (`npm run bench` finds them). */
export function requireBenchServers(bench: string): { redisUrl: string } {
  if (!testEnv.redisUrl || !testEnv.databaseUrl) {
    throw new Error(`the ${bench} bench needs PostgreSQL and Redis: run it with \`npm run bench -- ${bench}\``);
  }
  return { redisUrl: testEnv.redisUrl };
}

/** The environment of a benchmarked fleet process: its own database and queue prefix, plus the bench's settings. */
export function fleetEnv(db: TestDatabase, redisUrl: string, settings: Record<string, string>): Record<string, string> {
  return {
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: testQueuePrefix(),
    BOOTSTRAP_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    SECRET_KEY: TEST_SECRET_KEY,
    OUTBOUND_ALLOWED_NETWORKS: LOOPBACK_NETWORKS,
    ...settings,
  };
}

/**
 * NODE_OPTIONS as production runs each role: the image's young generation of 2 × 16 MiB (Dockerfile; Node 26's default
 * is 2 × 32 MiB), and 2 × 8 MiB for the api (docker-compose.yml).
 */
export const PRODUCTION_NODE_OPTIONS: Record<FleetProcess['role'], string> = {
  api: '--max-semi-space-size=8',
  worker: '--max-semi-space-size=16',
  all: '--max-semi-space-size=16',
};

export async function startFleetProcess(
  role: FleetProcess['role'],
  env: Record<string, string>,
  nodeArgs: string[] = [],
): Promise<FleetProcess> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, join('dist', 'src', 'main.js'), '--role', role], {
    // MALLOC_ARENA_MAX and NODE_OPTIONS as production sets them (Dockerfile, docker-compose.yml).
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      MALLOC_ARENA_MAX: '2',
      NODE_OPTIONS: PRODUCTION_NODE_OPTIONS[role],
      ...env,
      // errorLines() reads levels from JSON lines.
      LOG_FORMAT: 'json',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const errors: string[] = [];
  // Per stream: a chunk may end inside a line.
  const keeper = () => {
    let partial = '';
    return (d: Buffer) => {
      const text = d.toString();
      out = (out + text).slice(-20_000);
      const parts = (partial + text).split('\n');
      partial = parts.pop()!;
      errors.push(...parts.filter(isErrorLine));
    };
  };
  child.stdout!.on('data', keeper());
  child.stderr!.on('data', keeper());
  let exitedEarly = false;
  child.once('exit', () => (exitedEarly = true));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exitedEarly) {
      throw new Error(`fleet ${role} exited: ${out}`);
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`fleet ${role} did not answer /healthz: ${out}`);
    }
    const ok = await request(`${url}/healthz`).then(
      async (r) => (await r.body.text(), r.statusCode === 200),
      () => false,
    );
    if (ok) {
      break;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const pid = child.pid!;
  return {
    role,
    url,
    pid,
    cpuSeconds: () => cpuSecondsOf(pid),
    peakRssBytes: () => statusBytes(pid, 'VmHWM'),
    rssBytes: () => statusBytes(pid, 'VmRSS'),
    output: () => out,
    errorLines: () => [...errors],
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) {
        return { code: child.exitCode, signal: child.signalCode, ms: 0 };
      }
      const started = Date.now();
      const exited = new Promise<FleetExit>((resolve) =>
        child.once('exit', (code, signal) => resolve({ code, signal, ms: Date.now() - started })),
      );
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const exit = await exited;
      clearTimeout(timer);
      return exit;
    },
  };
}

/**
 * The fleet processes of one scenario, restarts included: each started with the scenario's environment (read when it
 * starts: set in beforeAll), all stopped together, their ERROR lines named by role and start order.
 */
export class FleetProcesses {
  readonly started: FleetProcess[] = [];

  constructor(private readonly env: () => Record<string, string>) {}

  async start(role: FleetProcess['role']): Promise<FleetProcess> {
    const fleet = await startFleetProcess(role, this.env());
    this.started.push(fleet);
    return fleet;
  }

  async stopAll(): Promise<void> {
    for (const fleet of this.started) {
      await fleet.stop();
    }
  }

  /** Every process's ERROR lines so far, each as `<role>#<n>: <line>`. */
  errorLines(): string[] {
    return this.started.flatMap((fleet, n) => fleet.errorLines().map((line) => `${fleet.role}#${n}: ${line}`));
  }
}
