import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type AgentArgs, parseArgs, resolveAgentArgs, UsageError } from './cli-args.js';

const agentArgs = (argv: string[]): AgentArgs => {
  const parsed = parseArgs(argv);
  if (parsed.command !== 'agent') {
    throw new Error('expected the agent command');
  }
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

  it('the rack opens its control API beyond loopback only with --control-host', () => {
    const args = ['rack', '--boards', '2', '--port', '0', '--state-dir', '/tmp/r'];
    expect(parseArgs(args)).not.toHaveProperty('args.controlHost');
    expect(parseArgs([...args, '--control-host', '0.0.0.0'])).toMatchObject({ args: { controlHost: '0.0.0.0' } });
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

  it('takes the connection limits (a board behind a proxy sees every client at one address)', () => {
    expect(agentArgs(['--port', '1', '--max-connections', '64', '--max-connections-per-address', '8'])).toMatchObject({
      maxConnections: 64,
      maxConnectionsPerAddress: 8,
    });
    expect(() => parseArgs(['--port', '1', '--max-connections-per-address', '0'])).toThrow(
      '--max-connections-per-address: expected a whole number from 1 to 100000',
    );
  });

  it('fills in the defaults and refuses bad values with the flag named (argv is checked by hand, without zod)', () => {
    expect(agentArgs(['--simulate', '--port', '8080', '--state-dir', '/tmp/b'])).toEqual({
      hardware: 'simulated',
      port: 8080,
      stateDir: '/tmp/b',
      host: '127.0.0.1',
      trustLoopback: false,
      validateResponses: false,
      tls: false,
      tokenExpirySeconds: 10800,
    });
    expect(agentArgs(['--port=0', '--trust-loopback', '--token-expiry-seconds', '60'])).toMatchObject({
      port: 0,
      trustLoopback: true,
      tokenExpirySeconds: 60,
    });
    expect(() => parseArgs(['--port', '65536'])).toThrow('--port: expected a port number 0..65535');
    expect(() => parseArgs(['--port', 'http'])).toThrow('--port: expected a port number 0..65535');
    expect(() => parseArgs(['--simulate'])).toThrow('--port: is required');
    expect(() => parseArgs(['--port', '1', '--metrics-port', '-1'])).toThrow('--metrics-port: expected a port number');
    expect(() => parseArgs(['--port', '1', '--token-expiry-seconds', '0'])).toThrow(
      '--token-expiry-seconds: expected a whole number from 1 to 2592000',
    );
    expect(() => parseArgs(['--port', '1', '--github-api-url', 'ftp://mirror'])).toThrow(
      '--github-api-url: expected an http or https URL',
    );
    expect(() => parseArgs(['--port', '1', '--update-repo', 'just-a-name'])).toThrow(
      '--update-repo: expected owner/repo',
    );
    expect(() => parseArgs(['--port', '1', '--tls-cert', 'c.pem'])).toThrow('--tls-cert and --tls-key go together');
    expect(() => parseArgs(['--port', '1', '--www='])).toThrow('--www: must not be empty');
    expect(() => parseArgs(['--port', '1', '--boards', '3', '--colour', 'red'])).toThrow(
      'unknown flag --boards, --colour',
    );
    expect(() => parseArgs(['--port', '1', '--port', '2'])).toThrow('--port given twice');
    expect(() => parseArgs(['--port'])).toThrow('--port needs a value');
    expect(() => parseArgs(['--port', '1', '--tls=yes'])).toThrow('--tls takes no value');
    expect(() => parseArgs(['serve'])).toThrow('unexpected argument "serve"');
  });

  it('the rack needs --boards, --port and --state-dir, and reads --dialects', () => {
    expect(() => parseArgs(['rack', '--port', '0', '--state-dir', '/tmp/r'])).toThrow('--boards: is required');
    expect(() => parseArgs(['rack', '--boards', '0', '--port', '0', '--state-dir', '/tmp/r'])).toThrow(
      '--boards: expected a whole number from 1 to 100000',
    );
    expect(() =>
      parseArgs(['rack', '--boards', '2', '--port', '0', '--state-dir', '/tmp/r', '--tls-cert', 'c.pem']),
    ).toThrow('unknown flag --tls-cert');
    expect(parseArgs(['rack', '--boards', '2', '--port', '0', '--state-dir', '/tmp/r', '--tls'])).toMatchObject({
      args: { tls: true },
    });
    expect(
      parseArgs(['rack', '--boards', '5', '--port', '0', '--state-dir', '/tmp/r', '--dialects', 'fork:3,upstream:2']),
    ).toMatchObject({
      args: {
        dialects: [
          { name: 'fork', count: 3 },
          { name: 'upstream', count: 2 },
        ],
      },
    });
    expect(() =>
      parseArgs(['rack', '--boards', '5', '--port', '0', '--state-dir', '/tmp/r', '--dialects', 'bmcd:1']),
    ).toThrow('--dialects: "bmcd:1" is not <agent|fork|upstream>:<count>');
  });
});

describe('board-agent --help', () => {
  it('prints the usage and exits 0, wherever --help stands, without complaining about it', () => {
    for (const argv of [['--help'], ['-h'], ['rack', '--help'], ['--port', '8080', '--help']]) {
      const run = spawnSync(process.execPath, ['apps/agent/bin/board-agent.js', ...argv], { encoding: 'utf8' });
      expect({ argv, status: run.status, stderr: run.stderr }).toEqual({ argv, status: 0, stderr: '' });
      expect(run.stdout).toMatch(/^usage:\n {2}board-agent /);
    }
  });
});
