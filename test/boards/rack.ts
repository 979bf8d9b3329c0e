// A real `board-agent rack` process for the fleet e2e tests and the bench.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request, type Dispatcher } from 'undici';

export interface RackProcess {
  url: string;
  /** The rack's state directory: board i keeps its state (and its microSD card, `sdcard/`) in `boards/<i>`. */
  stateDir: string;
  boardUrl(i: number): string;
  control(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** Logs in to board i directly (from this process, i.e. the same loopback address as the fleet manager). */
  login(i: number, password: string): Promise<number>;
  metrics(i: number): Promise<string>;
  process: ChildProcess;
  stop(): Promise<void>;
}

export async function startRack(boards: number, extraArgs: string[] = []): Promise<RackProcess> {
  const stateDir = mkdtempSync(join(tmpdir(), 'tpfleet-rack-'));
  const child = spawn(
    process.execPath,
    [
      'apps/agent/bin/board-agent.js',
      'rack',
      '--boards',
      String(boards),
      // The rack binds a free port and prints it (a random pick could land on an ephemeral port in use).
      '--port',
      '0',
      '--state-dir',
      stateDir,
      ...extraArgs,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`rack did not start: ${out}`)), 15000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (https?:\/\/[^/]+)\//.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => reject(new Error(`rack exited ${code}: ${out}`)));
  });
  child.stderr!.resume();
  // A rack started with --tls serves its self-signed certificate: this process's own calls take it as it is.
  const dispatcher: Dispatcher | undefined = url.startsWith('https:')
    ? new Agent({ connect: { rejectUnauthorized: false } })
    : undefined;
  const control = async (method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) => {
    const res = await request(`${url}${path}`, {
      dispatcher,
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    return { status: res.statusCode, body: text ? (JSON.parse(text) as unknown) : null };
  };
  return {
    url,
    stateDir,
    boardUrl: (i) => `${url}/boards/${i}`,
    control,
    async login(i, password) {
      const res = await request(`${url}/boards/${i}/api/bmc/authenticate`, {
        dispatcher,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'root', password }),
      });
      await res.body.text();
      return res.statusCode;
    },
    async metrics(i) {
      const res = await request(`${url}/boards/${i}/metrics`, { dispatcher });
      return res.body.text();
    },
    process: child,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      await dispatcher?.close();
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}
