import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * Restart test against the built CLI: configure a board, kill -9 the agent, start it again over the same state
 * directory; everything survives and no node was power-cycled (power_on_time keeps counting from the same stamp).
 */
const ROOT = resolve(import.meta.dirname, '../../..');
const BIN = join(ROOT, 'apps/agent/bin/board-agent.js');

function startAgent(stateDir: string): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(process.execPath, [BIN, '--simulate', '--port', '0', '--state-dir', stateDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolvePromise, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)\/api\/bmc/.exec(out);
      if (match) {
        resolvePromise({ child, base: match[1]! });
      }
    });
    child.once('exit', (code) => reject(new Error(`agent exited with ${code}: ${out}`)));
  });
}

const AUTH = { Authorization: `Basic ${Buffer.from('root:turing').toString('base64')}` };
async function api(
  base: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: unknown }> {
  const res = await fetch(base + path, {
    method,
    headers: { ...AUTH, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

describe('board-agent restart (built CLI)', () => {
  let dir: string;
  let running: ChildProcess | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agent-restart-'));
    try {
      execFileSync(
        process.execPath,
        [join(ROOT, 'node_modules/typescript/bin/tsc'), '-b', 'apps/agent/tsconfig.build.json'],
        { cwd: ROOT, encoding: 'utf8' },
      );
    } catch (err) {
      throw new Error(
        `the agent does not build, so the CLI cannot be tested:\n${(err as { stdout?: string }).stdout ?? String(err)}`,
        {
          cause: err,
        },
      );
    }
  }, 120_000);
  afterAll(async () => {
    running?.kill('SIGKILL');
    if (dir) {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('keeps power, USB, node names, hostname and NTP across kill -9, without power-cycling a node', async () => {
    const first = await startAgent(join(dir, 'board'));
    running = first.child;
    const b = first.base;
    expect((await api(b, 'POST', '/api/bmc/power', { node1: '1', node3: '1' })).status).toBe(204);
    expect((await api(b, 'POST', '/api/bmc/usb', { node: 2, mode: 5 })).status).toBe(204);
    expect(
      (await api(b, 'POST', '/api/bmc?opt=set&type=node_info', { Node1: { name: 'alpha' }, Node3: { name: 'gamma' } }))
        .status,
    ).toBe(200);
    expect((await api(b, 'POST', '/api/bmc/hostname', { name: 'rack7-b3' })).status).toBe(204);
    expect((await api(b, 'POST', '/api/bmc/ntp', { servers: 'ntp1.example,ntp2.example' })).status).toBe(204);
    await new Promise((r) => setTimeout(r, 1100)); // let power_on_time reach >= 1 s
    const before = (await api(b, 'GET', '/api/bmc/nodes')).json as {
      name: string | null;
      power_on_time: number | null;
    }[];
    const killedAt = Date.now();
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));

    const second = await startAgent(join(dir, 'board'));
    running = second.child;
    const a = second.base;
    const elapsed = Math.ceil((Date.now() - killedAt) / 1000) + 1;
    expect((await api(a, 'GET', '/api/bmc/power')).json).toEqual([{ node1: '1', node2: '0', node3: '1', node4: '0' }]);
    expect((await api(a, 'GET', '/api/bmc/usb')).json).toEqual([
      expect.objectContaining({ node: 'Node 2', mode: 'Device', route: 'Bmc' }),
    ]);
    expect((await api(a, 'GET', '/api/bmc/hostname')).json).toEqual({ hostname: 'rack7-b3', on_next_boot: 'rack7-b3' });
    expect((await api(a, 'GET', '/api/bmc/ntp')).json).toMatchObject({ servers: ['ntp1.example', 'ntp2.example'] });
    const after = (await api(a, 'GET', '/api/bmc/nodes')).json as typeof before;
    expect(after.map((n) => n.name)).toEqual(['alpha', null, 'gamma', null]);
    for (const i of [0, 2]) {
      // Same power-on stamp: the time keeps counting instead of restarting from 0.
      expect(after[i]!.power_on_time).toBeGreaterThanOrEqual(before[i]!.power_on_time!);
      expect(after[i]!.power_on_time).toBeLessThanOrEqual(before[i]!.power_on_time! + elapsed);
    }
    expect(after[1]!.power_on_time).toBeNull();

    second.child.kill('SIGTERM');
    expect(await new Promise((r) => second.child.once('exit', (code) => r(code)))).toBe(0);
    running = undefined;
  }, 60_000);
});
