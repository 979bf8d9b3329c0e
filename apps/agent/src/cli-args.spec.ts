import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type AgentArgs, parseArgs, resolveAgentArgs, UsageError } from './cli-args.js';

const agentArgs = (argv: string[]): AgentArgs => {
  const parsed = parseArgs(argv);
  if (parsed.command !== 'agent') {throw new Error('expected the agent command');}
  return parsed.args;
};

describe('board-agent: choosing the hardware', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'cli-root-'));
  });
  afterEach(() => rm(root, { recursive: true, force: true }));
  const model = async (text: string) => {
    await mkdir(join(root, 'proc/device-tree'), { recursive: true });
    await writeFile(join(root, 'proc/device-tree/model'), `${text}\0`);
  };

  it('drives the Linux board by default when the device tree names a Turing Pi, with its state under <root>/var/lib/bmcd', async () => {
    await model('Turing Pi 2 (v2.5)');
    const args = await resolveAgentArgs(agentArgs(['--port', '8080', '--root', root]));
    expect(args).toMatchObject({ hardware: 'linux', root, stateDir: join(root, 'var/lib/bmcd'), port: 8080 });
  });

  it('refuses to start on anything else and says to pass --simulate (a laptop must not start driving GPIO)', async () => {
    await model('LENOVO ThinkPad X1');
    await expect(resolveAgentArgs(agentArgs(['--port', '8080', '--root', root]))).rejects.toThrow(
      /model reads "LENOVO ThinkPad X1": this is not a Turing Pi controller.*Pass --simulate --state-dir DIR/,
    );
    await rm(join(root, 'proc'), { recursive: true });
    const error = await resolveAgentArgs(agentArgs(['--port', '8080', '--root', root])).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(/model does not exist/);
  });

  it('--hardware linux insists (a fixture tree, a board with an unusual device tree)', async () => {
    const args = await resolveAgentArgs(
      agentArgs(['--hardware', 'linux', '--root', root, '--port', '0', '--state-dir', join(root, 's')]),
    );
    expect(args).toMatchObject({ hardware: 'linux', root, stateDir: join(root, 's') });
  });

  it('--simulate is --hardware simulated, which needs --state-dir and keeps the default password', async () => {
    for (const flag of [['--simulate'], ['--hardware', 'simulated']]) {
      const args = await resolveAgentArgs(agentArgs([...flag, '--port', '0', '--state-dir', '/tmp/b1']));
      expect(args).toMatchObject({ hardware: 'simulated', stateDir: '/tmp/b1', password: 'turing' });
    }
    await expect(resolveAgentArgs(agentArgs(['--simulate', '--port', '0']))).rejects.toThrow(
      '--state-dir: is required with --simulate',
    );
  });

  it('refuses contradictions and flags that do not apply', async () => {
    expect(() => parseArgs(['--simulate', '--hardware', 'linux', '--port', '0'])).toThrow(
      '--simulate: contradicts --hardware linux',
    );
    expect(() => parseArgs(['--hardware', 'bare-metal', '--port', '0'])).toThrow(
      '--hardware: expected linux or simulated',
    );
    await expect(
      resolveAgentArgs(agentArgs(['--simulate', '--root', root, '--port', '0', '--state-dir', root])),
    ).rejects.toThrow('--root applies to --hardware linux only');
    await expect(
      resolveAgentArgs(agentArgs(['--hardware', 'linux', '--root', root, '--port', '0', '--password', 'x'])),
    ).rejects.toThrow(/--password applies to the simulated board only/);
  });

  it('the rack still takes --state-dir and --password as before', () => {
    expect(parseArgs(['rack', '--boards', '2', '--port', '0', '--state-dir', '/tmp/r'])).toMatchObject({
      command: 'rack',
      args: { boards: 2, stateDir: '/tmp/r', password: 'turing' },
    });
  });

  it('the rack models reboot and install times for rollout tests and benches', () => {
    const parsed = parseArgs([
      'rack',
      '--boards',
      '2',
      '--port',
      '0',
      '--state-dir',
      '/tmp/r',
      '--boot-delay-ms',
      '300',
      '--install-delay-ms',
      '2000',
    ]);
    expect(parsed).toMatchObject({ command: 'rack', args: { bootDelayMs: 300, installDelayMs: 2000 } });
    expect(parseArgs(['rack', '--boards', '2', '--port', '0', '--state-dir', '/tmp/r'])).toMatchObject({
      args: { installDelayMs: 0 },
    });
    expect(() =>
      parseArgs(['rack', '--boards', '2', '--port', '0', '--state-dir', '/tmp/r', '--boot-delay-ms', '-1']),
    ).toThrow(/--boot-delay-ms/);
  });
});
