// A real Prometheus Alertmanager (Debian's `prometheus-alertmanager`) on loopback ports, with its own config and
// storage dir, for the alerts e2e test. Without the binary the tests that need it skip and say why.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';

const CANDIDATES = ['prometheus-alertmanager', 'alertmanager'];

export function alertmanagerBinary(): string | null {
  for (const name of CANDIDATES) {
    if (spawnSync('sh', ['-c', `command -v ${name}`]).status === 0) {
      return name;
    }
  }
  return null;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

export interface AlertmanagerProcess {
  url: string;
  /** GET /api/v2/alerts (active, silenced and inhibited included). */
  alerts(): Promise<
    Array<{
      labels: Record<string, string>;
      annotations: Record<string, string>;
      endsAt: string;
      status: { state: string };
    }>
  >;
  /** GET /api/v2/silences (every state). */
  silences(): Promise<
    Array<{
      id: string;
      comment: string;
      createdBy: string;
      matchers: Array<{ name: string; value: string; isEqual: boolean; isRegex: boolean }>;
      status: { state: string };
    }>
  >;
  stop(): Promise<void>;
  process: ChildProcess;
}

export async function startAlertmanager(binary: string): Promise<AlertmanagerProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'tpfleet-am-'));
  const port = await freePort();
  const config = join(dir, 'alertmanager.yml');
  // A receiver with no integrations: we only read the API. resolve_timeout short so stale alerts do not linger.
  writeFileSync(
    config,
    [
      'global:',
      '  resolve_timeout: 5m',
      'route:',
      '  receiver: blackhole',
      '  group_wait: 1s',
      'receivers:',
      '  - name: blackhole',
      '',
    ].join('\n'),
  );
  const child = spawn(
    binary,
    [
      `--config.file=${config}`,
      `--storage.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--cluster.listen-address=', // no gossip: a single instance
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      const res = await request(`${url}/-/ready`);
      await res.body.text();
      if (res.statusCode === 200) {
        break;
      }
    } catch {
      // not up yet
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`alertmanager did not start: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    process: child,
    async alerts() {
      const res = await request(`${url}/api/v2/alerts`);
      return (await res.body.json()) as never;
    },
    async silences() {
      const res = await request(`${url}/api/v2/silences`);
      return (await res.body.json()) as never;
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
