import { mkdir } from 'node:fs/promises';

import { join } from 'node:path';

import { accountsOf, Authenticator } from './auth/authenticator.js';
import { ACCOUNTS_FILE } from './auth/local-accounts.js';
import type { BoardBackend } from './backend/backend.js';
import {
  type AgentArgs,
  parseArgs,
  type RackArgs,
  resolveAgentArgs,
  type ResolvedAgentArgs,
  USAGE,
  UsageError,
} from './cli-args.js';
import { createAgentServer } from './server/server.js';
import { DEFAULT_CONNECTION_LIMITS } from './http/connection-limits.js';
import {
  type BoardServices,
  createLinuxServices,
  createSimulatedServices,
  type SimulatedBoardLike,
  type SimulatedServices,
} from './services/board-services.js';

/*
 * What only some starts need (the rack, metrics, TLS, the Linux accounts) is imported where it is used: on the 128 MB
 * controller every module loaded at start stays resident.
 */

/** Entry point of `board-agent` (bin/board-agent.js calls it with `process.argv.slice(2)`). */
export async function main(argv: readonly string[]): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) {
      throw err;
    }
    process.stderr.write(`board-agent: ${err.message}\n${USAGE}\n`);
    process.exit(2);
  }
  if (parsed.command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (parsed.command === 'rack') {
    await runRack(parsed.args);
  } else {
    await runAgent(parsed.args);
  }
}

async function runAgent(raw: AgentArgs): Promise<void> {
  let args: ResolvedAgentArgs;
  try {
    args = await resolveAgentArgs(raw);
  } catch (err) {
    if (!(err instanceof UsageError)) {
      throw err;
    }
    process.stderr.write(`board-agent: ${err.message}\n`);
    process.exit(2);
  }
  await mkdir(args.stateDir, { recursive: true });
  const board = args.hardware === 'linux' ? await startLinuxBoard(args) : await startSimulatedBoard(args);
  const { backend, auth, services } = board;
  const useTls = args.tls || args.tlsCert !== undefined;
  const certificate = useTls ? await loadCertificate(args) : undefined;
  const agent = createAgentServer({
    backend,
    auth,
    www: args.www,
    validateResponses: args.validateResponses,
    services,
    tls: certificate ? { certificate, access: services.access } : undefined,
    connectionLimits: {
      perAddress: args.maxConnectionsPerAddress ?? DEFAULT_CONNECTION_LIMITS.perAddress,
      total: args.maxConnections ?? DEFAULT_CONNECTION_LIMITS.total,
    },
  });
  const port = await agent.listen(args.port, args.host);
  const metrics =
    args.metricsPort === undefined
      ? undefined
      : (await import('./metrics/metrics-server.js')).createMetricsServer(backend, services.firmware.slots);
  const metricsPort = metrics ? await metrics.listen(args.metricsPort!, args.host) : undefined;
  process.stdout.write(
    `board-agent listening on ${useTls ? 'https' : 'http'}://${hostForUrl(args.host)}:${port}/api/bmc (${board.describe})` +
      (certificate?.generated ? `; generated a self-signed certificate in ${certificate.certFile}` : '') +
      (metricsPort === undefined ? '' : `; metrics on http://${hostForUrl(args.host)}:${metricsPort}/metrics`) +
      '\n',
  );
  onShutdown(async () => {
    await Promise.all([agent.close(), metrics?.close()]);
    await services.stop();
    board.closeAccounts?.();
    await backend.stop();
  });
}

async function loadCertificate(args: Pick<ResolvedAgentArgs, 'tlsCert' | 'tlsKey' | 'stateDir'>) {
  const { loadServerCertificate } = await import('./tls/certificate.js');
  return loadServerCertificate({
    certFile: args.tlsCert,
    keyFile: args.tlsKey,
    stateDir: args.stateDir,
    commonName: 'turingpi',
  });
}

interface StartedBoard {
  backend: BoardBackend;
  auth: Authenticator;
  services: BoardServices;
  describe: string;
  closeAccounts?: () => void;
}

/** The authenticator's proxy hook reads the access settings of services built after it. */
function proxyHeaderOf(services: () => BoardServices | undefined): () => string | undefined {
  return () => {
    const access = services()?.access.inEffect;
    return access?.clientCaPem ? access.identityHeader.name : undefined;
  };
}

async function startSimulatedBoard(args: Extract<ResolvedAgentArgs, { hardware: 'simulated' }>): Promise<StartedBoard> {
  const { createSimulatedBackend } = await import('./backend-factory.js');
  const backend = createSimulatedBackend(args.stateDir);
  await backend.start();
  let services: SimulatedServices | undefined;
  const auth = await Authenticator.create({
    password: args.password,
    // A password changed through the API survives a restart (the simulated board's /etc/shadow).
    accountsFile: join(args.stateDir, ACCOUNTS_FILE),
    trustLoopback: args.trustLoopback,
    tokenExpirySeconds: args.tokenExpirySeconds,
    proxyIdentityHeader: proxyHeaderOf(() => services),
  });
  services = await createSimulatedServices(backend as SimulatedBoardLike, args.stateDir, accountsOf(auth), {
    githubApiUrl: args.githubApiUrl,
    updateRepo: args.updateRepo,
    pinnedClientCa: args.tlsClientCa,
    configIdentityHeader: args.identityHeader,
    auditFile: args.auditLog ?? join(args.stateDir, 'audit.log'),
  });
  return { backend, auth, services, describe: `simulated board, state in ${args.stateDir}` };
}

async function startLinuxBoard(args: Extract<ResolvedAgentArgs, { hardware: 'linux' }>): Promise<StartedBoard> {
  const { createLinuxBackend } = await import('./linux-backend-factory.js');
  const { board: backend, runner } = createLinuxBackend({ root: args.root });
  await backend.start();
  // /etc/shadow is the account store of both the login and POST /access/password; chpasswd runs through the runner.
  const { ShadowAccounts } = await import('./auth/shadow-accounts.js');
  const accounts = await ShadowAccounts.open({ shadowFile: join(args.root, 'etc/shadow'), runner });
  let services: BoardServices | undefined;
  const auth = await Authenticator.create({
    accounts,
    trustLoopback: args.trustLoopback,
    tokenExpirySeconds: args.tokenExpirySeconds,
    proxyIdentityHeader: proxyHeaderOf(() => services),
  });
  services = await createLinuxServices(backend, accounts, {
    root: args.root,
    runner,
    githubApiUrl: args.githubApiUrl,
    updateRepo: args.updateRepo,
    pinnedClientCa: args.tlsClientCa,
    configIdentityHeader: args.identityHeader,
    auditFile: args.auditLog,
  });
  return {
    backend,
    auth,
    services,
    describe: `Linux board under ${args.root}, agent state in ${args.stateDir}`,
    closeAccounts: () => accounts.close(),
  };
}

async function runRack(args: RackArgs): Promise<void> {
  await mkdir(args.stateDir, { recursive: true });
  const [{ Rack }, { createSimulatedBackend }] = await Promise.all([
    import('./rack/rack.js'),
    import('./backend-factory.js'),
  ]);
  // One certificate for every board of the rack (each board is told apart by its origin or path, not its key).
  const certificate = args.tls ? await loadCertificate({ stateDir: args.stateDir }) : undefined;
  const rack = new Rack({
    boards: args.boards,
    stateDir: args.stateDir,
    password: args.password,
    dialects: args.dialects,
    tokenExpirySeconds: args.tokenExpirySeconds,
    trustLoopback: args.trustLoopback,
    validateResponses: args.validateResponses,
    createBackend: (_index, stateDir) =>
      createSimulatedBackend(stateDir, args.bootDelayMs === undefined ? {} : { bootDelayMs: args.bootDelayMs }),
    installDelayMs: args.installDelayMs,
    controlHost: args.controlHost,
    services: { githubApiUrl: args.githubApiUrl, updateRepo: args.updateRepo },
    tls: certificate,
  });
  const port = await rack.listen(args.port, args.host);
  const base = `${certificate ? 'https' : 'http'}://${hostForUrl(args.host)}:${port}`;
  process.stdout.write(
    `board-agent rack listening on ${base}/boards/<1..${args.boards}>/api/bmc (${args.boards} simulated boards, ` +
      `control at ${base}/rack on ${args.controlHost ?? 'loopback'} only, state in ${args.stateDir}` +
      (certificate?.generated ? `; generated a self-signed certificate in ${certificate.certFile}` : '') +
      ')\n',
  );
  onShutdown(() => rack.close());
}

/** SIGTERM/SIGINT: stop accepting, flush the backend(s), exit 0. A second signal exits at once. */
function onShutdown(stop: () => Promise<unknown>): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) {
      process.exit(1);
    }
    stopping = true;
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`board-agent: shutdown after ${signal} failed: ${String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}

function hostForUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}
